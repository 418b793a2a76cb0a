package v1alpha1

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"

	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/diag"
)

// FuzzDecodeModelDeployment feeds arbitrary bytes to DecodeModelDeployment
// and, when they decode, through DefaultModelDeployment and
// ValidateModelDeployment, as the render pipeline does.
//
// Invariants: no panic and no input runs longer than fuzzcheck.Timeout;
// every error has a message; the same bytes give the same problems and the
// same defaulted object every time (determinism).
func FuzzDecodeModelDeployment(f *testing.F) {
	for _, s := range fuzzSeedDocs(f, hub.KindModelDeployment) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcheck.Bounded(t, func() error {
			md, first := fuzzDecodeModel(data)
			if err := fuzzcheck.ErrorsHaveMessages(first); err != nil {
				return err
			}
			md2, second := fuzzDecodeModel(data)
			if !reflect.DeepEqual(first, second) {
				return fmt.Errorf("problems differ between two runs:\n%v\n%v", first, second)
			}
			if !reflect.DeepEqual(md, md2) {
				return fmt.Errorf("decoded objects differ between two runs:\n%+v\n%+v", md, md2)
			}
			return nil
		})
	})
}

func fuzzDecodeModel(data []byte) (*ModelDeployment, diag.List) {
	md, l := DecodeModelDeployment(data)
	if l.HasErrors() {
		return md, l
	}
	DefaultModelDeployment(md)
	return md, append(l, validate(md)...)
}

// FuzzDecodeClusterCapabilities feeds arbitrary bytes to
// DecodeClusterCapabilities.
//
// Invariants: no panic and no input runs longer than fuzzcheck.Timeout;
// every error has a message; the same bytes give the same problems and the
// same object every time (determinism).
func FuzzDecodeClusterCapabilities(f *testing.F) {
	for _, s := range fuzzSeedDocs(f, hub.KindClusterCapabilities) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcheck.Bounded(t, func() error {
			c, first := DecodeClusterCapabilities(data)
			if err := fuzzcheck.ErrorsHaveMessages(first); err != nil {
				return err
			}
			c2, second := DecodeClusterCapabilities(data)
			if !reflect.DeepEqual(first, second) {
				return fmt.Errorf("problems differ between two runs:\n%v\n%v", first, second)
			}
			if !reflect.DeepEqual(c, c2) {
				return fmt.Errorf("decoded objects differ between two runs:\n%+v\n%+v", c, c2)
			}
			return nil
		})
	})
}

// FuzzDecodeModelCatalog fuzzes the ModelCatalog decoder and its
// validation (hub.ValidateModelCatalog, which holds every row to the
// memory fit's bounds).
//
// Invariants: no panic and no input runs longer than fuzzcheck.Timeout;
// every error has a message; the same bytes give the same problems and the
// same object every time (determinism).
func FuzzDecodeModelCatalog(f *testing.F) {
	for _, s := range fuzzSeedDocs(f, hub.KindModelCatalog) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcheck.Bounded(t, func() error {
			decode := func() (*hub.ModelCatalog, diag.List) {
				c, l := ModelCatalogToHub(data)
				if c != nil {
					l = append(l, hub.ValidateModelCatalog(c)...)
				}
				return c, l
			}
			c, first := decode()
			if err := fuzzcheck.ErrorsHaveMessages(first); err != nil {
				return err
			}
			c2, second := decode()
			if !reflect.DeepEqual(first, second) {
				return fmt.Errorf("problems differ between two runs:\n%v\n%v", first, second)
			}
			if !reflect.DeepEqual(c, c2) {
				return fmt.Errorf("decoded objects differ between two runs:\n%+v\n%+v", c, c2)
			}
			return nil
		})
	})
}

// fuzzSeedDocs returns, as the JSON the decoders read, every document of
// kind in the examples, the golden cases and the embedded default
// capability file.
func fuzzSeedDocs(tb testing.TB, kind string) [][]byte {
	var files []string
	for _, pattern := range []string{"../../golden/testdata/*/*.yaml", "../../golden/testdata/*/functionConfig/*.yaml", "../../capabilities/default.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, m...)
	}
	_ = filepath.WalkDir("../../examples", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".yaml" {
			files = append(files, path)
		}
		return err
	})
	var seeds [][]byte
	for _, file := range files {
		if filepath.Base(file) == "expected.yaml" {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			if !strings.Contains(doc, "kind: "+kind) {
				continue
			}
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err == nil {
				seeds = append(seeds, js)
			}
		}
	}
	if len(seeds) == 0 {
		tb.Fatalf("no %s documents to seed from", kind)
	}
	return seeds
}
