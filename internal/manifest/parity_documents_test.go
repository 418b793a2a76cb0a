package manifest

import (
	"bytes"
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
)

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
