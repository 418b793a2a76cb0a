package manifest

import (
	"bytes"
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// FuzzObjectJSON holds nodeJSON to kyaml's RNode.MarshalJSON, which it
// replaces: for every document, both succeed with the same JSON or both
// fail. Seeds: every YAML file of the golden cases and the checked-in
// corpora of every fuzz target (alias bombs, merge keys, odd tags,
// duplicate keys).
func FuzzObjectJSON(f *testing.F) {
	for _, s := range objectJSONSeeds(f) {
		f.Add(s)
	}
	ref := library(f, kyamlModule, "RNode.MarshalJSON")
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzcheck.Bounded(t, func() error { return checkObjectJSON(ref, in) })
	})
}

// checkObjectJSON compares the two conversions on every document of in.
func checkObjectJSON(ref string, in []byte) error {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(in), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil
	}
	for _, n := range nodes {
		if yamlerr.OutsideAlias(n.YNode()) != nil {
			// MarshalJSON writes the node out alone and cannot read the
			// alias back; nodeJSON decodes it. The KRM function refuses
			// such items before rendering (fn.danglingAliases).
			continue
		}
		want, wantErr := n.MarshalJSON()
		got, gotErr := nodeJSON(n)
		if (wantErr == nil) != (gotErr == nil) {
			return fmt.Errorf("%s: error %v; nodeJSON: error %v\n%s", ref, wantErr, gotErr, in)
		}
		if !bytes.Equal(want, got) {
			return fmt.Errorf("%s: %s\nnodeJSON: %s\ninput:\n%s", ref, want, got, in)
		}
	}
	return nil
}

func objectJSONSeeds(tb testing.TB) [][]byte {
	seeds := append(seedFiles(tb), corpusSeeds(tb)...)
	if len(seeds) < 100 {
		tb.Fatalf("only %d seeds", len(seeds))
	}
	return seeds
}

// TestObjectJSONUntaggedKeys: keys kyaml adds without a tag (the CLI's
// path annotation) take the fast way and give kyaml's JSON; an untagged key
// that reads as null or a number does not take it.
func TestObjectJSONUntaggedKeys(t *testing.T) {
	ref := library(t, kyamlModule, "RNode.MarshalJSON")
	for _, key := range []string{"config.kubernetes.io/path", "null", "1", "true", "~", ""} {
		n, err := yaml.Parse("metadata:\n  annotations: {}\n")
		if err != nil {
			t.Fatal(err)
		}
		ann := n.YNode().Content[1].Content[1]
		ann.Content = append(ann.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Value: "x"})
		want, wantErr := n.MarshalJSON()
		got, gotErr := nodeJSON(n)
		if (wantErr == nil) != (gotErr == nil) || string(want) != string(got) {
			t.Errorf("key %q: %s: %s (%v); nodeJSON: %s (%v)", key, ref, want, wantErr, got, gotErr)
		}
		if fast := plainKeys(n.YNode()); fast != (key == "config.kubernetes.io/path") {
			t.Errorf("key %q: plainKeys = %t", key, fast)
		}
	}
}
