package versions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
	"github.com/airunway-render/airunway-render/internal/manifest"
)

func TestServed(t *testing.T) {
	require.Equal(t, v1alpha2.APIVersion, Newest())
	seen := map[string]bool{}
	for _, v := range Served {
		require.True(t, strings.HasPrefix(v.APIVersion, hub.Group+"/"), v.APIVersion)
		require.False(t, seen[v.APIVersion], "%s is listed twice", v.APIVersion)
		seen[v.APIVersion] = true
		require.NotNil(t, v.ModelDeployment, v.APIVersion)
		require.Equal(t, v.APIVersion == v1alpha1.APIVersion, v.ClusterCapabilities != nil, "only v1alpha1 serves ClusterCapabilities")
		require.Equal(t, v.APIVersion == v1alpha1.APIVersion, v.ModelCatalog != nil, "only v1alpha1 serves ModelCatalog")
		require.True(t, Serves(v.APIVersion, hub.KindModelDeployment))
		got, ok := Lookup(v.APIVersion)
		require.True(t, ok)
		require.Equal(t, v.APIVersion, got.APIVersion)
	}
	_, ok := Lookup("airunway.ai/v1")
	require.False(t, ok)
	require.False(t, Serves(v1alpha2.APIVersion, hub.KindClusterCapabilities))
	require.False(t, Serves(v1alpha2.APIVersion, hub.KindModelCatalog))
	require.True(t, Serves(v1alpha1.APIVersion, hub.KindModelCatalog))
	require.Equal(t, []string{v1alpha1.APIVersion, v1alpha2.APIVersion}, Names())
}

// An apiVersion that is not served is an error naming the served ones, and
// the object's other problems are still reported in the same run.
func TestNotServed(t *testing.T) {
	md := []byte(`{"apiVersion":"airunway.ai/v1beta1","kind":"ModelDeployment","metadata":{"name":"m"},"spec":{"model":{"id":"x"},"replicas":2}}`)
	got, l := DecodeModelDeployment("airunway.ai/v1beta1", md)
	require.Nil(t, got, "the unknown field fails decoding")
	require.Len(t, l.Errors(), 2, "%v", l)
	require.Equal(t, "apiVersion", l.Errors()[0].Field)
	require.Equal(t, `"airunway.ai/v1beta1" is not supported: ModelDeployment must use apiVersion "airunway.ai/v1alpha1" or "airunway.ai/v1alpha2"`, l.Errors()[0].Message)
	require.Equal(t, "spec.replicas", l.Errors()[1].Field)

	caps := []byte(`{"apiVersion":"example.com/v1","kind":"ClusterCapabilities","metadata":{"name":"c"},"spec":{}}`)
	c, l := DecodeClusterCapabilities("example.com/v1", caps)
	require.NotNil(t, c)
	require.Len(t, l, 1)
	require.Contains(t, l[0].Message, `ClusterCapabilities must use apiVersion "airunway.ai/v1alpha1"`)

	// v1alpha2 serves ModelDeployments only: a capability file written as
	// v1alpha2 is refused, naming v1alpha1, and still read as v1alpha1.
	caps = []byte(`{"apiVersion":"airunway.ai/v1alpha2","kind":"ClusterCapabilities","metadata":{"name":"c"},"spec":{}}`)
	c, l = DecodeClusterCapabilities(v1alpha2.APIVersion, caps)
	require.NotNil(t, c)
	require.Len(t, l, 1)
	require.Equal(t, `"airunway.ai/v1alpha2" is not supported: ClusterCapabilities must use apiVersion "airunway.ai/v1alpha1"`, l[0].Message)

	// So is a ModelCatalog.
	catalog := []byte(`{"apiVersion":"airunway.ai/v1alpha2","kind":"ModelCatalog","metadata":{"name":"c"},"spec":{"models":[{"id":"a/b","params":1,"dtype":"bf16"}]}}`)
	mc, l := DecodeModelCatalog(v1alpha2.APIVersion, catalog)
	require.NotNil(t, mc)
	require.Len(t, l, 1)
	require.Equal(t, "apiVersion", l[0].Field)
	require.Equal(t, `"airunway.ai/v1alpha2" is not supported: ModelCatalog must use apiVersion "airunway.ai/v1alpha1"`, l[0].Message)
}

// The deprecation warnings come from the served version's conversion.
func TestDeprecatedFieldWarns(t *testing.T) {
	md := []byte(`{"apiVersion":"airunway.ai/v1alpha1","kind":"ModelDeployment","metadata":{"name":"m"},"spec":{"model":{"id":"x"},"image":"repo/vllm:1"}}`)
	got, l := DecodeModelDeployment(v1alpha1.APIVersion, md)
	require.False(t, l.HasErrors(), "%v", l)
	require.Len(t, l, 1)
	require.Equal(t, "spec.image", l[0].Field)
	require.Contains(t, l[0].Message, "`spec.engine.image`", "names the replacement")
	require.Equal(t, "repo/vllm:1", got.Spec.EngineImage())
}

// TestConversionLosesNothing converts every ModelDeployment and capability
// file the project ships (golden inputs and examples) to the hub and
// requires every field to arrive: the hub object encodes to the same JSON
// as the served version's object, its ignored status aside. A field added
// to a served version without a place in the hub fails here.
func TestConversionLosesNothing(t *testing.T) {
	models, files, catalogs := 0, 0, 0
	for _, node := range shippedObjects(t) {
		js, l := manifest.ObjectJSON(node)
		require.False(t, l.HasErrors(), "%v", l)
		switch node.GetKind() {
		case hub.KindModelDeployment:
			in, l := v1alpha1.DecodeModelDeployment(js)
			if l.HasErrors() {
				continue // the golden error cases
			}
			in.Status = nil
			out, _ := in.ConvertToHub()
			requireSameJSON(t, in, out)
			models++
		case hub.KindClusterCapabilities:
			in, l := v1alpha1.DecodeClusterCapabilities(js)
			if l.HasErrors() {
				continue
			}
			requireSameJSON(t, in, in.ConvertToHub())
			files++
		case hub.KindModelCatalog:
			in, l := v1alpha1.DecodeModelCatalog(js)
			if l.HasErrors() {
				continue
			}
			out, l := v1alpha1.ModelCatalogToHub(js)
			require.False(t, l.HasErrors(), "%v", l)
			requireSameJSON(t, in, out)
			catalogs++
		}
	}
	t.Logf("converted %d ModelDeployments, %d capability files and %d model catalogs", models, files, catalogs)
	require.Greater(t, models, 100)
	require.Greater(t, files, 20)
	require.Positive(t, catalogs)
}

func requireSameJSON(t *testing.T, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(w), string(g))
}

// shippedObjects reads the airunway.ai objects of the golden inputs and the
// examples (not the expected outputs).
func shippedObjects(t testing.TB) []*kyaml.RNode {
	t.Helper()
	var out []*kyaml.RNode
	for _, root := range []string{"../../golden/testdata", "../../examples"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || strings.HasPrefix(d.Name(), "expected") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(data)), OmitReaderAnnotations: true}).Read()
			if err != nil {
				return nil // a deliberately broken input
			}
			for _, n := range nodes {
				if n.GetApiVersion() == v1alpha1.APIVersion {
					out = append(out, n)
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	return out
}

// TestTypeErrorsNameTheElement: in every served version, a type error in
// a list names the element (hub.DecodeStrict).
func TestTypeErrorsNameTheElement(t *testing.T) {
	for _, v := range Served {
		md := "apiVersion: " + v.APIVersion + "\nkind: ModelDeployment\nmetadata: {name: m}\nspec:\n  model: {id: m}\n  env: [{name: A, value: x}, {name: B, value: 3}]\n"
		_, l := DecodeModelDeployment(v.APIVersion, toJSON(t, md))
		require.Len(t, l.Errors(), 1, "%s: %v", v.APIVersion, l)
		require.Equal(t, "spec.env[1].value", l.Errors()[0].Field, v.APIVersion)
		require.Equal(t, "must be a string, got number", l.Errors()[0].Message, v.APIVersion)
		if v.ClusterCapabilities == nil {
			continue
		}
		caps := "apiVersion: " + v.APIVersion + "\nkind: ClusterCapabilities\nmetadata: {name: c}\nspec:\n  providers: [{name: kuberay, version: \"1.4.2\"}, {name: kaito, version: 0.8}]\n"
		_, l = DecodeClusterCapabilities(v.APIVersion, toJSON(t, caps))
		require.Len(t, l.Errors(), 1, "%s: %v", v.APIVersion, l)
		require.Equal(t, "spec.providers[1].version", l.Errors()[0].Field, v.APIVersion)
	}
}

func toJSON(t *testing.T, doc string) []byte {
	t.Helper()
	n, err := kyaml.Parse(doc)
	require.NoError(t, err)
	js, l := manifest.ObjectJSON(n)
	require.Empty(t, l)
	return js
}
