package schemacheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// obj builds a fresh object per case so mutations never leak between cases.
type obj = map[string]any

func workspace(mutate func(o obj)) obj {
	o := obj{
		"apiVersion": "kaito.sh/v1beta1",
		"kind":       "Workspace",
		"metadata":   obj{"name": "ws", "namespace": "default"},
		"resource":   obj{"labelSelector": obj{"matchLabels": obj{"a": "b"}}},
		"inference":  obj{"preset": obj{"name": "x"}},
	}
	if mutate != nil {
		mutate(o)
	}
	return o
}

func modelDeployment(mutate func(spec obj)) obj {
	spec := obj{"model": obj{"id": "x"}}
	if mutate != nil {
		mutate(spec)
	}
	return obj{
		"apiVersion": "airunway.ai/v1alpha1",
		"kind":       "ModelDeployment",
		"metadata":   obj{"name": "md"},
		"spec":       spec,
	}
}

func inferencePool(mutate func(spec obj)) obj {
	spec := obj{
		"selector":          obj{"matchLabels": obj{"app": "vllm"}},
		"targetPorts":       []any{obj{"number": 8000}},
		"endpointPickerRef": obj{"name": "epp", "port": obj{"number": 9002}},
	}
	if mutate != nil {
		mutate(spec)
	}
	return obj{
		"apiVersion": "inference.networking.k8s.io/v1",
		"kind":       "InferencePool",
		"metadata":   obj{"name": "pool"},
		"spec":       spec,
	}
}

func deployment(mutate func(d obj)) obj {
	d := obj{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   obj{"name": "d"},
		"spec": obj{
			"replicas": 1,
			"selector": obj{"matchLabels": obj{"app": "x"}},
			"template": obj{
				"metadata": obj{"labels": obj{"app": "x"}},
				"spec": obj{
					"containers": []any{obj{
						"name":         "c",
						"image":        "img",
						"volumeMounts": []any{obj{"name": "cache", "mountPath": "/cache"}},
					}},
					"volumes": []any{obj{"name": "cache", "emptyDir": obj{}}},
				},
			},
		},
	}
	if mutate != nil {
		mutate(d)
	}
	return d
}

func podSpec(d obj) obj {
	return d["spec"].(obj)["template"].(obj)["spec"].(obj)
}

// requireProblems asserts that problems is empty when want is empty, and
// otherwise that each wanted substring occurs in some problem.
func requireProblems(t *testing.T, problems []string, want ...string) {
	t.Helper()
	if len(want) == 0 {
		require.Empty(t, problems)
		return
	}
	require.NotEmpty(t, problems, "expected problems mentioning %q", want)
	joined := strings.Join(problems, "\n")
	for _, w := range want {
		require.Contains(t, joined, w)
	}
}

func TestReleases(t *testing.T) {
	require.Equal(t, []string{"v0.6.2", "v0.8.1", "v0.10.0", "v0.12.0"}, Releases("kaito.sh", "Workspace", "v1beta1"))
	require.Nil(t, Releases("kaito.sh", "NoSuchKind", "v1beta1"))
}

func TestReleaseOrder(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"v0.8.1", "v0.10.0"}, // semver, not lexical
		{"v1.5.0", "v1.6.0"},
		{"v1.0.0-rc.1", "v1.0.0"},
		{"v9.9.9", "main-2a6da14c"}, // branch snapshots are newest
	} {
		require.True(t, releaseLess(tc.a, tc.b), "%s < %s", tc.a, tc.b)
		require.False(t, releaseLess(tc.b, tc.a), "!(%s < %s)", tc.b, tc.a)
	}
}

func TestLoad(t *testing.T) {
	v, err := Load("kaito.sh", "Workspace", "v1beta1", "")
	require.NoError(t, err)
	require.Equal(t, "v0.12.0", v.Release())

	v, err = Load("kaito.sh", "Workspace", "v1beta1", "v0.10.0")
	require.NoError(t, err)
	require.Equal(t, "v0.10.0", v.Release())

	_, err = Load("kaito.sh", "Workspace", "v1beta1", "v0.0.1")
	require.ErrorContains(t, err, "have v0.6.2, v0.8.1, v0.10.0, v0.12.0")

	v, err = ForObject(obj{"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment"})
	require.NoError(t, err)
	require.Equal(t, "main-2a6da14c", v.Release())

	_, err = ForObject(obj{"apiVersion": "example.com/v1", "kind": "Nope"})
	require.ErrorContains(t, err, "no schema known for example.com/v1 Nope")
}

func TestKAITOWorkspace(t *testing.T) {
	cases := []struct {
		name string
		obj  obj
		want []string // substrings; none = must pass
	}{
		{name: "valid minimal", obj: workspace(nil)},
		{
			name: "missing resource.labelSelector",
			obj:  workspace(func(o obj) { delete(o["resource"].(obj), "labelSelector") }),
			want: []string{"resource.labelSelector: Required value"},
		},
		{
			name: "unknown field",
			obj:  workspace(func(o obj) { o["resource"].(obj)["bogus"] = true }),
			want: []string{"resource.bogus: Unknown field"},
		},
		{
			name: "wrong type",
			obj:  workspace(func(o obj) { o["resource"].(obj)["count"] = "x" }),
			want: []string{"resource.count: Invalid value", "must be of type integer"},
		},
		{
			name: "missing metadata.name",
			obj:  workspace(func(o obj) { delete(o["metadata"].(obj), "name") }),
			want: []string{"metadata.name: Required value"},
		},
	}
	for _, release := range Releases("kaito.sh", "Workspace", "v1beta1") {
		v, err := Load("kaito.sh", "Workspace", "v1beta1", release)
		require.NoError(t, err)
		for _, tc := range cases {
			t.Run(release+"/"+tc.name, func(t *testing.T) {
				requireProblems(t, v.Validate(tc.obj), tc.want...)
			})
		}
	}
}

func TestModelDeployment(t *testing.T) {
	cases := []struct {
		name string
		obj  obj
		want []string
	}{
		{name: "valid minimal", obj: modelDeployment(nil)},
		{
			name: "engine.type enum",
			obj:  modelDeployment(func(s obj) { s["engine"] = obj{"type": "foo"} }),
			want: []string{"spec.engine.type: Unsupported value: \"foo\""},
		},
		{
			name: "scaling.replicas minimum",
			obj:  modelDeployment(func(s obj) { s["scaling"] = obj{"replicas": -1} }),
			want: []string{"spec.scaling.replicas: Invalid value: -1", "greater than or equal to 0"},
		},
		{
			name: "unknown spec field",
			obj:  modelDeployment(func(s obj) { s["bogus"] = "x" }),
			want: []string{"spec.bogus: Unknown field"},
		},
		{
			name: "list-type map keys must be unique",
			obj: modelDeployment(func(s obj) {
				s["model"].(obj)["storage"] = obj{"volumes": []any{obj{"name": "v"}, obj{"name": "v"}}}
			}),
			want: []string{"spec.model.storage.volumes[1]: Duplicate value"},
		},
		{
			name: "missing spec",
			obj:  func() obj { o := modelDeployment(nil); delete(o, "spec"); return o }(),
			want: []string{"spec: Required value"},
		},
		{
			name: "wrong kind for this schema",
			obj:  func() obj { o := modelDeployment(nil); o["kind"] = "Workspace"; return o }(),
			want: []string{"this validator is for airunway.ai/v1alpha1 ModelDeployment"},
		},
	}
	v, err := Load("airunway.ai", "ModelDeployment", "v1alpha1", "")
	require.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireProblems(t, v.Validate(tc.obj), tc.want...)
		})
	}
}

func TestInferencePool(t *testing.T) {
	cases := []struct {
		name string
		obj  obj
		want []string
	}{
		{name: "valid", obj: inferencePool(nil)},
		{
			name: "missing targetPorts",
			obj:  inferencePool(func(s obj) { delete(s, "targetPorts") }),
			want: []string{"spec.targetPorts: Required value"},
		},
		{
			name: "port out of range",
			obj:  inferencePool(func(s obj) { s["targetPorts"] = []any{obj{"number": 70000}} }),
			want: []string{"spec.targetPorts[0].number: Invalid value"},
		},
		{
			// Only a CEL rule catches this, and only after the default
			// kind=Service is applied: proves defaulting and CEL both run.
			name: "CEL: endpointPickerRef without port",
			obj:  inferencePool(func(s obj) { s["endpointPickerRef"] = obj{"name": "epp"} }),
			want: []string{"spec.endpointPickerRef: Invalid value", "port is required when kind is 'Service'"},
		},
		{
			name: "CEL: duplicate target ports",
			obj:  inferencePool(func(s obj) { s["targetPorts"] = []any{obj{"number": 8000}, obj{"number": 8000}} }),
			want: []string{"spec.targetPorts", "port number must be unique"},
		},
	}
	for _, release := range Releases("inference.networking.k8s.io", "InferencePool", "v1") {
		v, err := Load("inference.networking.k8s.io", "InferencePool", "v1", release)
		require.NoError(t, err)
		for _, tc := range cases {
			t.Run(release+"/"+tc.name, func(t *testing.T) {
				requireProblems(t, v.Validate(tc.obj), tc.want...)
			})
		}
	}
}

func TestValidateDoesNotModifyInput(t *testing.T) {
	o := modelDeployment(func(s obj) { s["bogus"] = "x" })
	v, err := ForObject(o)
	require.NoError(t, err)
	require.NotEmpty(t, v.Validate(o))
	require.Equal(t, "x", o["spec"].(obj)["bogus"], "pruning must work on a copy")
	_, defaulted := o["spec"].(obj)["scaling"]
	require.False(t, defaulted, "defaulting must work on a copy")
}

func TestValidateBuiltin(t *testing.T) {
	cases := []struct {
		name string
		obj  obj
		want []string
	}{
		{name: "valid deployment", obj: deployment(nil)},
		{
			name: "unknown field in pod spec",
			obj:  deployment(func(d obj) { podSpec(d)["bogus"] = true }),
			want: []string{`unknown field "spec.template.spec.bogus"`},
		},
		{
			name: "wrong type",
			obj:  deployment(func(d obj) { d["spec"].(obj)["replicas"] = "two" }),
			want: []string{"spec.replicas"},
		},
		{
			name: "selector does not match template labels",
			obj:  deployment(func(d obj) { d["spec"].(obj)["selector"] = obj{"matchLabels": obj{"app": "other"}} }),
			want: []string{"spec.template.metadata.labels: Invalid value", "does not match template `labels`"},
		},
		{
			name: "missing selector",
			obj:  deployment(func(d obj) { delete(d["spec"].(obj), "selector") }),
			want: []string{"spec.selector: Required value"},
		},
		{
			name: "duplicate container names",
			obj: deployment(func(d obj) {
				ps := podSpec(d)
				ps["initContainers"] = []any{obj{"name": "c", "image": "img"}}
			}),
			want: []string{`spec.template.spec.containers[0].name: Duplicate value: "c"`},
		},
		{
			name: "mount without volume",
			obj:  deployment(func(d obj) { delete(podSpec(d), "volumes") }),
			want: []string{`spec.template.spec.containers[0].volumeMounts[0].name: Not found: "cache"`},
		},
		{
			name: "valid service",
			obj: obj{"apiVersion": "v1", "kind": "Service", "metadata": obj{"name": "s"},
				"spec": obj{"selector": obj{"app": "x"}, "ports": []any{obj{"port": 80, "targetPort": 8000}}}},
		},
		{
			name: "service without ports",
			obj:  obj{"apiVersion": "v1", "kind": "Service", "metadata": obj{"name": "s"}, "spec": obj{}},
			want: []string{"spec.ports: Required value"},
		},
		{
			name: "service port out of range",
			obj: obj{"apiVersion": "v1", "kind": "Service", "metadata": obj{"name": "s"},
				"spec": obj{"ports": []any{obj{"port": 0}}}},
			want: []string{"spec.ports[0].port: Invalid value: 0"},
		},
		{
			name: "job with default restartPolicy",
			obj: obj{"apiVersion": "batch/v1", "kind": "Job", "metadata": obj{"name": "j"},
				"spec": obj{"template": obj{"spec": obj{"containers": []any{obj{"name": "c", "image": "i"}}}}}},
			want: []string{"spec.template.spec.restartPolicy: Unsupported value"},
		},
		{
			name: "configmap unknown top-level field",
			obj:  obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": "c"}, "bogusData": obj{}},
			want: []string{`unknown field "bogusData"`},
		},
		{
			name: "rolebinding valid",
			obj: obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": obj{"name": "rb"},
				"roleRef":  obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
				"subjects": []any{obj{"kind": "ServiceAccount", "name": "sa"}}},
		},
		{
			name: "not a built-in kind",
			obj:  workspace(nil),
			want: []string{"not a supported built-in kind"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireProblems(t, ValidateBuiltin(tc.obj), tc.want...)
		})
	}
}

func TestCheckDispatch(t *testing.T) {
	requireProblems(t, Check(deployment(nil)))
	requireProblems(t, Check(workspace(nil)))
	requireProblems(t, Check(deployment(func(d obj) { podSpec(d)["bogus"] = 1 })), "spec.template.spec.bogus")
	requireProblems(t, Check(workspace(func(o obj) { o["resource"].(obj)["bogus"] = 1 })), "resource.bogus")
	requireProblems(t, Check(obj{"apiVersion": "example.com/v1", "kind": "Nope", "metadata": obj{"name": "n"}}),
		"no schema known for example.com/v1 Nope")
}

// Every embedded schema must build into a validator; catches a derived file
// the apiextensions code cannot use (non-structural schema, bad CEL, ...).
func TestAllSchemasLoad(t *testing.T) {
	idx, err := loadIndex()
	require.NoError(t, err)
	require.NotEmpty(t, idx)
	for k, files := range idx {
		for _, f := range files {
			v, err := LoadChannel(k.group, k.kind, k.version, f.Release, k.channel)
			require.NoError(t, err, f.path)
			require.Equal(t, k.channel, v.Channel(), f.path)
			// An object with only apiVersion/kind/metadata must not crash the
			// pipeline; whether it passes depends on the schema's required fields.
			_ = v.Validate(obj{"apiVersion": schemaAPIVersion(k.gvk), "kind": k.kind, "metadata": obj{"name": "n"}})
		}
	}
}

func schemaAPIVersion(k gvk) string {
	if k.group == "" {
		return k.version
	}
	return k.group + "/" + k.version
}

func TestCheckAtVersionPicksTheDeclaredRelease(t *testing.T) {
	workspaceGVK := gvk{"kaito.sh", "Workspace", "v1beta1"}
	routeGVK := gvk{gatewayGroup, "HTTPRoute", "v1"}
	for _, tc := range []struct {
		k                     gvk
		channel, atMost, want string
	}{
		{workspaceGVK, "", "0.6.2", "v0.6.2"},
		{workspaceGVK, "", "0.7.0", "v0.6.2"},
		{workspaceGVK, "", "0.8.1", "v0.8.1"},
		{workspaceGVK, "", "0.11.0", "v0.10.0"},
		{workspaceGVK, "", "0.12.3", "v0.12.0"},
		{routeGVK, "", "1.0.0", "v1.0.0"},
		{routeGVK, "standard", "v1.5.3", "v1.5.1"},
		{routeGVK, "experimental", "1.6.5", "v1.6.1"},
		{routeGVK, "experimental", "1.7.9", "v1.7.0"},
	} {
		got, err := releaseAtMost(tc.k, tc.channel, tc.atMost)
		require.NoError(t, err, "%s %s %s", tc.k, tc.channel, tc.atMost)
		require.Equal(t, tc.want, got, "%s %s %s", tc.k, tc.channel, tc.atMost)
	}
	_, err := releaseAtMost(workspaceGVK, "", "0.5.0")
	require.ErrorContains(t, err, "no kaito.sh")
	got, err := releaseAtMost(gvk{"nvidia.com", "DynamoGraphDeployment", "v1alpha1"}, "", "1.1.1")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(got, "main-"), "an untagged snapshot is used when no tag exists: %s", got)

	// A minimal Workspace validates against the oldest schema too.
	ws := map[string]any{"apiVersion": "kaito.sh/v1beta1", "kind": "Workspace", "metadata": map[string]any{"name": "w"},
		"resource": map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}}}, "inference": map[string]any{"preset": map[string]any{"name": "x"}}}
	require.Empty(t, CheckAtVersion(ws, "0.6.2"))
}
