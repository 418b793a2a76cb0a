package manifest

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
)

// checkStream reads data with kio.ByteReader (recording each object's
// sequence indentation when preserve is set) and holds EncodeDocument and
// WriteStream to kio.ByteWriter over the objects read. It reports whether
// the bytes were compared: input kyaml's reader refuses has no objects,
// and one object filed under a .json path the writer writes as JSON.
func checkStream(ref string, data []byte, preserve bool) (bool, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), PreserveSeqIndent: preserve}).Read()
	if err != nil || len(nodes) == 1 && jsonPath(nodes[0]) {
		return false, nil
	}
	var want bytes.Buffer
	if err := (kio.ByteWriter{Writer: &want}).Write(nodes); err != nil {
		return false, nil //nolint:nilerr // an object the writer refuses is none a caller writes
	}
	documents := make([][]byte, len(nodes))
	for i, n := range nodes {
		if documents[i], err = EncodeDocument(n.Copy()); err != nil {
			return false, fmt.Errorf("EncodeDocument: %v, but %s writes it\ninput: %q", err, ref, data)
		}
	}
	var got bytes.Buffer
	if err := WriteStream(&got, documents); err != nil {
		return false, err
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		return false, fmt.Errorf("the bytes differ (sequence indentation preserved: %v)\n--- %s\n%s\n--- EncodeDocument and WriteStream\n%s\ninput: %q", preserve, ref, want.Bytes(), got.Bytes(), data)
	}
	return true, nil
}

// jsonPath reports an object filed under a path kio.ByteWriter writes
// JSON to.
func jsonPath(n *yaml.RNode) bool {
	path, _, _ := kioutil.GetFileAnnotations(n)
	for _, glob := range kio.JSONMatch {
		if ok, _ := filepath.Match(glob, filepath.Base(path)); ok && path != "" {
			return true
		}
	}
	return false
}

// TestStreamMatchesKyaml: EncodeDocument and WriteStream write the objects
// of every file as kio.ByteWriter writes them, with the sequence
// indentation kio.ByteReader recorded and without, over the corner cases,
// every YAML file of the golden cases and examples, and the fuzz corpora.
func TestStreamMatchesKyaml(t *testing.T) {
	ref := library(t, kyamlModule, "kio.ByteWriter")
	compared := 0
	for i, data := range documentsSeeds(t) {
		for _, preserve := range []bool{false, true} {
			wrote, err := checkStream(ref, data, preserve)
			if err != nil {
				t.Errorf("seed %d: %v", i, err)
			}
			if wrote {
				compared++
			}
		}
	}
	if compared < 300 {
		t.Fatalf("compared only %d streams", compared)
	}
}

// FuzzStreamMatchesKyaml holds EncodeDocument and WriteStream to
// kio.ByteWriter.
func FuzzStreamMatchesKyaml(f *testing.F) {
	for i, s := range documentsSeeds(f) {
		f.Add(s, i%2 == 1) // TestStreamMatchesKyaml runs every seed both ways
	}
	ref := library(f, kyamlModule, "kio.ByteWriter")
	f.Fuzz(func(t *testing.T, data []byte, preserve bool) {
		fuzzcheck.Bounded(t, func() error {
			_, err := checkStream(ref, data, preserve)
			return err
		})
	})
}
