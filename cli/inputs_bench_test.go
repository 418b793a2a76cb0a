package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/diag"
)

// BenchmarkSmallDocuments renders a file of 20,000 tiny objects that pass
// through: the input that costs the most memory per byte, as the budget's
// document limit bounds it (BENCHMARKS.md, "Inputs at the limits"; its
// heap profile is where the memory per document was found).
func BenchmarkSmallDocuments(b *testing.B) {
	const doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
	file := filepath.Join(b.TempDir(), "small.yaml")
	if err := os.WriteFile(file, []byte(strings.Repeat(doc, 20000)), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := renderPaths(hostFiles{}, "../examples/kustomize/clusters/dev/capabilities.yaml", []string{file}, diag.Policy{}, nil, io.Discard); !ok {
			b.Fatal("render failed")
		}
	}
}
