package manifest

// The parity suite: every reader and writer of this package held to the
// library it stands in for, at the version go.mod requires. A failure
// names that version: a dependency bump that changes how the library reads
// or writes fails here, saying which library moved, and the package must
// follow it (or the bump wait).

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
)

// The libraries the suite holds the package to, by module path.
const (
	kyamlModule = "sigs.k8s.io/kustomize/kyaml"
	sdkModule   = "github.com/kptdev/krm-functions-sdk/go/fn"
)

// pinned reads the versions go.mod requires of the reference libraries
// (a test binary carries no module versions of its dependencies).
var pinned = sync.OnceValues(func() (map[string]string, error) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		return nil, err
	}
	versions := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		code, _, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(code), "require "))
		for _, module := range []string{kyamlModule, sdkModule} {
			switch {
			case len(fields) == 2 && fields[0] == module:
				versions[module] = fields[1]
			case len(fields) > 1 && fields[0] == "replace" && fields[1] == module:
				return nil, fmt.Errorf("go.mod replaces %s: the suite holds the package to a released version", module)
			}
		}
	}
	return versions, sc.Err()
})

// library names a reference as "kyaml v0.21.2's kio.ByteReader", for
// failure messages.
func library(tb testing.TB, module, api string) string {
	tb.Helper()
	versions, err := pinned()
	if err != nil {
		tb.Fatal(err)
	}
	name := map[string]string{kyamlModule: "kyaml", sdkModule: "the KRM functions SDK"}[module]
	return fmt.Sprintf("%s %s's %s", name, versions[module], api)
}

// TestPinnedLibraries: go.mod requires each reference library, unreplaced;
// the suite's messages name the versions it requires.
func TestPinnedLibraries(t *testing.T) {
	versions, err := pinned()
	if err != nil {
		t.Fatal(err)
	}
	for _, module := range []string{kyamlModule, sdkModule} {
		if versions[module] == "" {
			t.Errorf("go.mod does not require %s: the parity suite has no reference", module)
		}
		t.Logf("held to %s %s", module, versions[module])
	}
}

// seedFiles are every YAML file of the golden cases and the examples.
func seedFiles(tb testing.TB) [][]byte {
	var files []string
	for _, pattern := range []string{"../../golden/testdata/*/*.yaml", "../../golden/testdata/*/*/*.yaml", "../../examples/*/*.yaml", "../../examples/*/*/*.yaml", "../../examples/*/*/*/*.yaml"} {
		more, _ := filepath.Glob(pattern)
		files = append(files, more...)
	}
	var seeds [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// corpusSeeds are the checked-in inputs of every fuzz target of the
// module: hostile inputs, alias bombs, odd tags and separators.
func corpusSeeds(tb testing.TB) [][]byte {
	return fuzzcheck.CorpusInputs(tb, "../../*/testdata/fuzz/Fuzz*/*", "../../api/*/testdata/fuzz/Fuzz*/*", "../*/testdata/fuzz/Fuzz*/*")
}

// documentsSeeds are the files ReadDocuments is held to kio.ByteReader on.
func documentsSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, c := range documentsCases {
		seeds = append(seeds, []byte(c))
	}
	seeds = append(seeds, seedFiles(tb)...)
	return append(seeds, corpusSeeds(tb)...)
}

// readLikeKyaml reads a file with kio.ByteReader, the path annotation set,
// each object without the index annotations ReadDocuments leaves out.
func readLikeKyaml(data []byte, file string) ([]string, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), SetAnnotations: map[string]string{kioutil.PathAnnotation: file}}).Read()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range nodes {
		out = append(out, withoutIndex(n))
	}
	return out, nil
}

// withoutIndex is an object's YAML without kio.ByteReader's index
// annotations.
func withoutIndex(n *yaml.RNode) string {
	n = n.Copy()
	for _, key := range []string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation} { //nolint:staticcheck // kyaml still writes it
		_ = n.PipeE(yaml.ClearAnnotation(key)) // an object whose metadata is no mapping has none
	}
	return n.MustString()
}

// checkReadDocuments compares ReadDocuments with kio.ByteReader on one
// file: the same objects, byte for byte, or the same error.
// ref names the library, as library does.
func checkReadDocuments(ref string, data []byte) error {
	want, wantErr := readLikeKyaml(data, "dir/f.yaml")
	nodes, gotErr := ReadDocuments(data, "dir/f.yaml", budget.New())
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		return fmt.Errorf("%s: %v; ReadDocuments: %v\ninput: %q", ref, wantErr, gotErr, data)
	}
	if len(nodes) != len(want) {
		return fmt.Errorf("%s read %d objects, ReadDocuments %d\ninput: %q", ref, len(want), len(nodes), data)
	}
	for i, n := range nodes {
		if got := withoutIndex(n); got != want[i] {
			return fmt.Errorf("object %d: %s\n%s\nReadDocuments\n%s\ninput: %q", i, ref, want[i], got, data)
		}
	}
	return nil
}

// TestReadDocumentsMatchesKyaml: ReadDocuments reads every file as
// kio.ByteReader does (objects and error texts), over the corner cases,
// every YAML file of the golden cases and examples, and the fuzz corpora.
func TestReadDocumentsMatchesKyaml(t *testing.T) {
	seeds := documentsSeeds(t)
	if len(seeds) < 150 {
		t.Fatalf("only %d seeds", len(seeds))
	}
	ref := library(t, kyamlModule, "kio.ByteReader")
	for i, data := range seeds {
		if err := checkReadDocuments(ref, data); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}

// FuzzReadDocuments holds ReadDocuments to kio.ByteReader.
func FuzzReadDocuments(f *testing.F) {
	for _, s := range documentsSeeds(f) {
		f.Add(s)
	}
	ref := library(f, kyamlModule, "kio.ByteReader")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcheck.Bounded(t, func() error { return checkReadDocuments(ref, data) })
	})
}
