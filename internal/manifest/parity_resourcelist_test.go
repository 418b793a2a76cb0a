package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/fntest"
	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// sdkParse is sdk.ParseResourceList with a panic (the SDK panics on a
// YAML alias in some places) returned as an error.
func sdkParse(in []byte) (rl *sdk.ResourceList, err error) {
	defer func() {
		if r := recover(); r != nil {
			rl, err = nil, fmt.Errorf("the SDK panics: %v", r)
		}
	}()
	return sdk.ParseResourceList(in)
}

// sdkToYAML is rl.ToYAML with a panic (the SDK panics sorting items whose
// identity is a YAML alias) reported as not ok.
func sdkToYAML(rl *sdk.ResourceList) (out []byte, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			out, ok = nil, false
		}
	}()
	out, err := rl.ToYAML()
	return out, err == nil
}

// TestReadResourceListMatchesSDK: ReadResourceList accepts what
// sdk.ParseResourceList accepts, reading the same items, function config
// and results, and refuses the rest with a readable message.
func TestReadResourceListMatchesSDK(t *testing.T) {
	ref := library(t, sdkModule, "ParseResourceList")
	for _, tc := range readCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadResourceList([]byte(tc.in))
			if (err == nil) != (tc.refused == "") {
				t.Fatalf("ReadResourceList: %v, want refused %q", err, tc.refused)
			}
			if err != nil && yamlerr.Describe(err) != tc.refused {
				t.Errorf("refused with:\n%s\nwant:\n%s", yamlerr.Describe(err), tc.refused)
			}
			if diff := compareRead(ref, got, err, []byte(tc.in)); diff != nil {
				t.Error(diff)
			}
		})
	}
}

// compareRead compares what ReadResourceList read of in (got, err) with
// what the SDK reads: both refuse it, or both read the same items,
// function config and results, whose kinds, apiVersions, names and
// namespaces Field and StringScalar read as the SDK's accessors do.
func compareRead(ref string, got *ResourceList, err error, in []byte) error {
	want, sdkErr := sdkParse(in)
	if (err == nil) != (sdkErr == nil) {
		return fmt.Errorf("ReadResourceList: %v; %s: %v", err, ref, sdkErr)
	}
	if err != nil {
		return nil
	}
	if len(got.Items) != len(want.Items) {
		return fmt.Errorf("%d items, %s reads %d", len(got.Items), ref, len(want.Items))
	}
	for i, item := range want.Items {
		if got.Items[i].MustString() != item.String() {
			return fmt.Errorf("item %d:\n%s\n%s reads:\n%s", i, got.Items[i].MustString(), ref, item.String())
		}
		if err := compareAccessors(ref, got.Items[i].YNode(), item); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	empty := got.FunctionConfig == nil || len(got.FunctionConfig.Content) == 0
	switch {
	case empty != want.FunctionConfig.IsEmpty():
		return fmt.Errorf("function config empty: %v, %s's: %v", empty, ref, want.FunctionConfig.IsEmpty())
	case !empty && yaml.NewRNode(got.FunctionConfig).MustString() != want.FunctionConfig.String():
		return fmt.Errorf("function config:\n%s\n%s reads:\n%s", yaml.NewRNode(got.FunctionConfig).MustString(), ref, want.FunctionConfig.String())
	case !empty:
		if err := compareAccessors(ref, got.FunctionConfig, want.FunctionConfig); err != nil {
			return fmt.Errorf("function config: %w", err)
		}
	}
	gotResults, err := json.Marshal(got.Results)
	if err != nil {
		return err
	}
	wantResults, err := json.Marshal(want.Results)
	if err != nil {
		return err
	}
	if len(got.Results) != len(want.Results) || len(want.Results) > 0 && !bytes.Equal(gotResults, wantResults) {
		return fmt.Errorf("results %s, %s reads %s", gotResults, ref, wantResults)
	}
	return nil
}

// compareAccessors holds Field and StringScalar to the SDK's accessors,
// which the function reads its function config with and the SDK sorts
// items by. An accessor the SDK panics in (an aliased name) is skipped.
func compareAccessors(ref string, n *yaml.Node, o *sdk.KubeObject) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = nil
		}
	}()
	meta := Field(n, "metadata")
	for _, c := range []struct{ field, got, want string }{
		{"apiVersion", StringScalar(Field(n, "apiVersion")), o.GetAPIVersion()},
		{"kind", StringScalar(Field(n, "kind")), o.GetKind()},
		{"metadata.name", StringScalar(Field(meta, "name")), o.GetName()},
		{"metadata.namespace", StringScalar(Field(meta, "namespace")), o.GetNamespace()},
	} {
		if c.got != c.want {
			return fmt.Errorf("`%s` reads %q; read by %s, its accessor gives %q", c.field, c.got, ref, c.want)
		}
	}
	return nil
}

// writeLikeSDK writes what ReadResourceList read of a list: its items
// (each from EncodeItem), function config and results, as a function that
// changed nothing writes them.
func writeLikeSDK(rl *ResourceList) ([]byte, error) {
	w := &ResourceListWriter{FunctionConfig: rl.FunctionConfig, Results: rl.Results}
	for _, n := range rl.Items {
		b, key, err := EncodeItem(n)
		if err != nil {
			return nil, err
		}
		w.Items = append(w.Items, Item{YAML: b, SortKey: key})
	}
	return w.Write()
}

// checkResourceList holds ReadResourceList to sdk.ParseResourceList on in
// (compareRead), and, when both read it, ResourceListWriter to the SDK's
// ResourceList.ToYAML. An item using an anchor outside it (which no
// function may write alone, and this one refuses) is left out of both
// lists. It reports whether the bytes were compared.
func checkResourceList(readRef, writeRef string, in []byte) (bool, error) {
	got, err := ReadResourceList(in)
	if err := compareRead(readRef, got, err, in); err != nil || got == nil {
		return false, err
	}
	want, err := sdkParse(in)
	if err != nil {
		return false, err
	}
	kept, keptSDK := got.Items[:0:0], want.Items[:0:0]
	for i, n := range got.Items {
		if yamlerr.OutsideAlias(n.YNode()) == nil {
			kept, keptSDK = append(kept, n), append(keptSDK, want.Items[i])
		}
	}
	got.Items, want.Items = kept, keptSDK
	wantBytes, ok := sdkToYAML(want)
	if !ok {
		return false, nil
	}
	gotBytes, err := writeLikeSDK(got)
	if err != nil {
		return false, fmt.Errorf("ResourceListWriter: %v", err)
	}
	if !bytes.Equal(gotBytes, wantBytes) {
		return false, fmt.Errorf("the bytes differ\n--- %s\n%s\n--- ResourceListWriter\n%s", writeRef, wantBytes, gotBytes)
	}
	return true, nil
}

// resourceListSeeds are the ResourceLists built from the golden cases
// and the examples, the golden outputs, the chosen cases and the
// function's fuzz corpus.
func resourceListSeeds(tb testing.TB) map[string][]byte {
	seeds := map[string][]byte{}
	for i, s := range fntest.ResourceListSeeds(tb, "../..") {
		seeds[fmt.Sprintf("seed-%03d", i)] = s
	}
	for i, s := range fuzzcheck.CorpusInputs(tb, "../../fn/testdata/fuzz/FuzzResourceList/*", "testdata/fuzz/FuzzResourceListMatchesSDK/*") {
		seeds[fmt.Sprintf("corpus-%03d", i)] = s
	}
	for _, c := range readCases {
		seeds["read: "+c.name] = []byte(c.in)
	}
	for name, in := range encodingCases {
		seeds[name] = []byte(in)
	}
	return seeds
}

// TestResourceListWriterMatchesSDK holds ResourceListWriter to the bytes
// the SDK's ResourceList.ToYAML writes, and ReadResourceList to
// ParseResourceList, over every seed: the golden cases' inputs and
// outputs, the examples, the hostile inputs of the function's fuzz
// corpus, and the encoding cases.
func TestResourceListWriterMatchesSDK(t *testing.T) {
	readRef, writeRef := library(t, sdkModule, "ParseResourceList"), library(t, sdkModule, "ResourceList.ToYAML")
	compared := 0
	for name, in := range resourceListSeeds(t) {
		wrote, err := checkResourceList(readRef, writeRef, in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, chosen := encodingCases[name]; chosen && !wrote && err == nil {
			t.Errorf("%s: %s does not read or write it", name, writeRef)
		}
		if wrote {
			compared++
		}
	}
	if compared < len(encodingCases)+50 {
		t.Fatalf("compared only %d ResourceLists", compared)
	}
}

// FuzzResourceListMatchesSDK holds ReadResourceList and ResourceListWriter
// to the SDK on arbitrary input: the same inputs accepted and refused, the
// same items, function config and results read, the same bytes written.
func FuzzResourceListMatchesSDK(f *testing.F) {
	for _, s := range resourceListSeeds(f) {
		f.Add(s)
	}
	readRef, writeRef := library(f, sdkModule, "ParseResourceList"), library(f, sdkModule, "ResourceList.ToYAML")
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzcheck.Bounded(t, func() error {
			_, err := checkResourceList(readRef, writeRef, in)
			return err
		})
	})
}
