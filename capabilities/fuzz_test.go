package capabilities

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
)

// FuzzResolveCapabilities fuzzes the YAML text of a capability file
// through ResolveNode: strict decoding, version and gateway checks, node
// pools and the compilation of CEL selection rules.
//
// Invariants: no panic and no input runs longer than fuzzcheck.Timeout;
// every error has a message; Resolved is nil exactly when there is an
// error; resolving the same text twice gives the same problems
// (determinism).
func FuzzResolveCapabilities(f *testing.F) {
	f.Add(string(DefaultYAML()))
	var files []string
	for _, pattern := range []string{"../golden/testdata/*/*.yaml", "../golden/testdata/*/functionConfig/*.yaml", "../examples/*/*.yaml", "../examples/*/*/*/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			if strings.Contains(doc, "kind: "+hub.KindClusterCapabilities) {
				f.Add(doc)
			}
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		fuzzcheck.Bounded(t, func() error {
			node, err := kyaml.Parse(text)
			if err != nil {
				return nil // not YAML: the callers report it before resolving
			}
			r, first := ResolveNode(node)
			if err := fuzzcheck.ErrorsHaveMessages(first); err != nil {
				return err
			}
			if (r == nil) != first.HasErrors() {
				return fmt.Errorf("resolved=%t with errors=%t: %v", r != nil, first.HasErrors(), first)
			}
			node2, err := kyaml.Parse(text)
			if err != nil {
				return fmt.Errorf("parsing the same text again fails: %v", err)
			}
			if _, second := ResolveNode(node2); !reflect.DeepEqual(first, second) {
				return fmt.Errorf("problems differ between two runs:\n%v\n%v", first, second)
			}
			return nil
		})
	})
}
