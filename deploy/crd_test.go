package deploy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
	"github.com/airunway-render/airunway-render/reporter"
)

const repoRoot = ".."

type obj = map[string]any

// shippedCRD is base/'s ClusterCapabilities CRD, as users install it.
func shippedCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("base", "airunway.ai_clustercapabilities.yaml"))
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(data, crd))
	return crd
}

// startAPIServer starts kube-apiserver and etcd with the CRD installed.
func startAPIServer(t *testing.T, crds ...*apiextensionsv1.CustomResourceDefinition) (*rest.Config, client.Client) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, or `export KUBEBUILDER_ASSETS=$(make -s envtest)` (builds kube-apiserver and etcd once)")
	}
	ctrllog.SetLogger(logr.Discard())
	// kube-apiserver and etcd may take long to start, and CRDs to be
	// served, on a loaded machine (envtest's defaults, 20 s and 10 s, a
	// busy CI runner exceeds): the bounds only catch what never happens.
	env := &envtest.Environment{CRDs: crds, ErrorIfCRDPathMissing: true, CRDInstallOptions: envtest.CRDInstallOptions{MaxTime: 3 * time.Minute},
		ControlPlaneStartTimeout: 3 * time.Minute, ControlPlaneStopTimeout: time.Minute}
	// Service addresses on loopback, as the twin's: the default range,
	// 10.0.0.0/24, is private, and nothing a test starts may be pointed at one.
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", twin.ServiceCIDR)
	cfg, err := env.Start()
	require.NoError(t, err, "starting envtest")
	t.Cleanup(func() { require.NoError(t, env.Stop()) })
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	return cfg, c
}

// TestClusterCapabilitiesOnAPIServer installs the shipped CRD on a real
// API server and applies the repository's capability files to it, and the
// status the status reporter writes.
func TestClusterCapabilitiesOnAPIServer(t *testing.T) {
	crd := shippedCRD(t)
	cfg, c := startAPIServer(t, crd)
	ctx := context.Background()

	// Every capability file is created as it is (unknown fields refused,
	// as kubectl does) and read back with its spec unchanged: nothing is
	// pruned, no number changes type. Only a file the renderer's own
	// decoder refuses (a wrong type, an unknown field) may be refused, and
	// must be.
	t.Run("examples round-trip", func(t *testing.T) {
		created := 0
		files, err := schemacheck.CapabilityFiles(repoRoot)
		require.NoError(t, err)
		for _, f := range files {
			u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(f.Object)}
			err := c.Create(ctx, u, client.FieldValidation("Strict"))
			data, jsonErr := json.Marshal(f.Object)
			require.NoError(t, jsonErr)
			if _, problems := v1.DecodeClusterCapabilities(data); problems.HasErrors() {
				require.Error(t, err, "%s: the renderer refuses it (%v), the API server accepts it", f.Source, problems)
				continue
			}
			require.NoError(t, err, f.Source)
			created++
			got := get(t, c, u)
			require.Equal(t, f.Object["spec"], got.Object["spec"], "%s: the spec must round-trip", f.Source)
			require.NoError(t, c.Delete(ctx, got))
		}
		require.Greater(t, created, 20)
	})

	base := func() *unstructured.Unstructured {
		data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "capabilities", "prod-eastus.yaml"))
		require.NoError(t, err)
		js, err := yaml.YAMLToJSON(data)
		require.NoError(t, err)
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(js))
		return u
	}

	// An unknown field is not in the structural schema: the API server
	// refuses it under strict field validation and otherwise prunes it.
	// A wrong type is refused with its field path.
	t.Run("unknown fields and wrong types", func(t *testing.T) {
		u := base()
		u.SetName("unknown-field")
		require.NoError(t, unstructured.SetNestedField(u.Object, "x", "spec", "bogus"))
		err := c.Create(ctx, u.DeepCopy(), client.FieldValidation("Strict"))
		require.ErrorContains(t, err, `unknown field "spec.bogus"`)
		require.NoError(t, c.Create(ctx, u.DeepCopy()))
		got := get(t, c, u)
		_, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "bogus")
		require.False(t, found, "the API server prunes an unknown field")
		require.NoError(t, c.Delete(ctx, got))

		u = base()
		u.SetName("wrong-type")
		pools, _, _ := unstructured.NestedSlice(u.Object, "spec", "nodePools")
		require.NoError(t, unstructured.SetNestedField(pools[0].(obj), "x", "gpu", "perNode"))
		require.NoError(t, unstructured.SetNestedSlice(u.Object, pools, "spec", "nodePools"))
		require.ErrorContains(t, c.Create(ctx, u), `spec.nodePools[0].gpu.perNode: Invalid value: "string": spec.nodePools[0].gpu.perNode in body must be of type integer: "string"`)
	})

	// `selectionRules: []` means "no rules" and absent means "the built-in
	// rules", so the API server must keep an empty list. A null is pruned
	// (the schema is not nullable), which the renderer reads as absent too.
	t.Run("empty lists and nulls", func(t *testing.T) {
		u := base()
		u.SetName("empty-rules")
		providers, _, _ := unstructured.NestedSlice(u.Object, "spec", "providers")
		providers[0].(obj)["selectionRules"] = []any{}
		providers[1].(obj)["engines"] = nil
		require.NoError(t, unstructured.SetNestedSlice(u.Object, providers, "spec", "providers"))
		require.NoError(t, c.Create(ctx, u, client.FieldValidation("Strict")))
		got := get(t, c, u)
		providers, _, _ = unstructured.NestedSlice(got.Object, "spec", "providers")
		rules, found, err := unstructured.NestedSlice(providers[0].(obj), "selectionRules")
		require.NoError(t, err)
		require.True(t, found, "an empty selectionRules must survive")
		require.Empty(t, rules)
		require.NotContains(t, providers[1].(obj), "engines", "a null is pruned")
	})

	// The status is the reporter's: written through the status
	// subresource only, ignored when written with the object.
	t.Run("status subresource", func(t *testing.T) {
		u := base()
		u.SetName("status")
		u.Object["status"] = obj{"observedGeneration": int64(9)}
		require.NoError(t, c.Create(ctx, u, client.FieldValidation("Strict")))
		got := get(t, c, u)
		require.NotContains(t, got.Object, "status", "a status sent with the object is dropped on create")
		require.Equal(t, int64(1), got.GetGeneration())

		// The status the reporter writes for one difference, its time
		// Local, as metav1.Time decodes it.
		when := metav1.NewTime(time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC).Local())
		status := reporter.CapabilitiesStatus(1, []discover.Difference{{
			Field: "spec.nodePools[l4].taints", Declared: "nvidia.com/gpu=present:NoSchedule", Live: "none on l4-0",
			Message: `pool "l4": the nodes' taints differ from the file's`, Pool: "l4",
		}}, "", nil, when.Time)
		status.Conditions[0].LastTransitionTime = when
		got.Object["status"] = toUnstructured(t, &status)
		require.NoError(t, c.Status().Update(ctx, got, client.FieldValidation("Strict")))
		got = get(t, c, u)
		require.Equal(t, status, statusOf(t, got))
		require.Equal(t, int64(1), got.GetGeneration(), "a status write does not change the generation")

		// Through the main resource: the spec change lands, the status
		// change does not.
		changed := reporter.CapabilitiesStatus(1, nil, "", &status, when.Time)
		got.Object["status"] = toUnstructured(t, &changed)
		require.NoError(t, unstructured.SetNestedField(got.Object, true, "spec", "requireVersions"))
		require.NoError(t, c.Update(ctx, got, client.FieldValidation("Strict")))
		got = get(t, c, u)
		require.Equal(t, status, statusOf(t, got), "a status written with the object is ignored")
		require.Equal(t, int64(2), got.GetGeneration())
		requireVersions, _, _ := unstructured.NestedBool(got.Object, "spec", "requireVersions")
		require.True(t, requireVersions)

		// The status schema holds: a difference needs its message (which
		// the Go type always sends, so only a hand-written status lacks it).
		bad := toUnstructured(t, &status)
		bad["differences"] = []any{obj{"field": "spec.providers[kaito].version"}}
		got.Object["status"] = bad
		require.ErrorContains(t, c.Status().Update(ctx, got), "status.differences[0].message: Required value")

		// kubectl get shows the condition's status and reason.
		require.Equal(t, []string{"status", "False", reporter.ReasonCapabilitiesDrifted}, tableRow(t, cfg, "status")[:3])
	})
}

func get(t *testing.T, c client.Client, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	require.NoError(t, c.Get(context.Background(), client.ObjectKeyFromObject(u), got))
	return got
}

func toUnstructured(t *testing.T, status *v1.ClusterCapabilitiesStatus) obj {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	require.NoError(t, err)
	return m
}

func statusOf(t *testing.T, u *unstructured.Unstructured) v1.ClusterCapabilitiesStatus {
	t.Helper()
	var s v1.ClusterCapabilitiesStatus
	m, _, err := unstructured.NestedMap(u.Object, "status")
	require.NoError(t, err)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(m, &s))
	return s
}

// tableRow reads an object as `kubectl get` does (the server's Table) and
// returns its cells.
func tableRow(t *testing.T, cfg *rest.Config, name string) []string {
	t.Helper()
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	body, err := disco.RESTClient().Get().AbsPath("/apis/airunway.ai/v1alpha1/clustercapabilities", name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	require.NoError(t, err, string(body))
	var table metav1.Table
	require.NoError(t, json.Unmarshal(body, &table))
	var columns []string
	for _, c := range table.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	require.Equal(t, []string{"Name", "Current", "Reason", "Age"}, columns)
	require.Len(t, table.Rows, 1)
	var cells []string
	for _, c := range table.Rows[0].Cells {
		s, _ := c.(string)
		cells = append(cells, s)
	}
	return cells
}
