package builtin_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// healthStatuses are statuses each primary kind's operator writes, the
// good and the bad, and a malformed one.
var healthStatuses = map[string][]string{
	"Deployment": {
		`{replicas: 2, readyReplicas: 2, availableReplicas: 2, conditions: [{type: Available, status: "True"}]}`,
		`{conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: timed out}]}`,
		`{readyReplicas: "two"}`,
	},
	"Workspace": {
		`{state: Ready, conditions: [{type: WorkspaceSucceeded, status: "True"}]}`,
		`{conditions: [{type: InferenceReady, status: "False", reason: Failed, message: crashed}]}`,
		`{state: [1]}`,
	},
	"DynamoGraphDeployment": {
		`{state: successful, services: {VllmWorker: {replicas: 2, readyReplicas: 2}}, endpoint: {service: x, port: 9000}}`,
		`{state: failed, message: "no GPUs"}`,
		`{endpoint: {port: 70000}}`,
	},
	"RayService": {
		`{conditions: [{type: Ready, status: "True"}], activeServiceStatus: {applicationStatuses: {llm: {status: RUNNING}}}}`,
		`{activeServiceStatus: {applicationStatuses: {llm: {status: DEPLOY_FAILED, message: OOM}}}}`,
		`{conditions: {Ready: true}}`,
	},
}

// TestHealthReadsOnlyItsFields holds each provider's HealthFields to its
// Health: over every golden case's primary objects, with the statuses
// above, Health says the same of the object and of what the status
// reporter caches of it (providers.KeepForHealth). A field Health reads
// that HealthFields forgets fails here, not in a cluster.
func TestHealthReadsOnlyItsFields(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("..", "..", "golden", "testdata", "*", "expected.yaml"))
	require.NoError(t, err)
	kinds := map[schema.GroupVersionKind]providers.Reporter{}
	for _, p := range builtin.ByName() {
		r := p.(providers.Reporter)
		kinds[r.Primary(&hub.ModelDeployment{}).GVK] = r
	}
	checked := map[string]int{}
	for _, file := range cases {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var list struct {
			Items []map[string]any `json:"items"`
		}
		require.NoError(t, yaml.Unmarshal(data, &list))
		for _, item := range list.Items {
			obj := &unstructured.Unstructured{Object: item}
			r, primary := kinds[obj.GroupVersionKind()]
			if !primary {
				continue
			}
			for _, status := range append(healthStatuses[obj.GetKind()], "") {
				withStatus := obj.DeepCopy()
				if status != "" {
					var s map[string]any
					require.NoError(t, yaml.Unmarshal([]byte(status), &s))
					withStatus.Object["status"] = s
				}
				kept := &unstructured.Unstructured{Object: providers.KeepForHealth(withStatus.DeepCopy().Object, r.HealthFields())}
				require.Equal(t, r.Health(withStatus), r.Health(kept), "%s: %s %s with status %s", file, obj.GetKind(), obj.GetName(), status)
				checked[obj.GetKind()]++
			}
		}
	}
	for kind := range healthStatuses {
		require.Positive(t, checked[kind], "no golden case renders a %s", kind)
	}
}

// TestKeepForHealth: only the named fields survive besides metadata and
// status; list items keep their own fields; a value of another shape
// than the path says is kept whole.
func TestKeepForHealth(t *testing.T) {
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(`apiVersion: ray.io/v1
kind: RayService
metadata: {name: m}
spec:
  serveConfigV2: "a long text"
  rayClusterConfig:
    headGroupSpec: {template: {spec: {containers: [{name: head}]}}}
    workerGroupSpecs:
    - {groupName: a, replicas: 2, template: {spec: {containers: [{name: w}]}}}
    - "not an object"
status: {serviceStatus: Running}
`), &obj))
	kept := providers.KeepForHealth(obj, []string{"spec.rayClusterConfig.workerGroupSpecs.[].replicas", "spec.missing.path"})
	want := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(`apiVersion: ray.io/v1
kind: RayService
metadata: {name: m}
spec:
  rayClusterConfig:
    workerGroupSpecs:
    - {replicas: 2}
    - "not an object"
status: {serviceStatus: Running}
`), &want))
	require.Equal(t, want, kept)
	var odd map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(`{kind: Deployment, spec: "a string"}`), &odd))
	require.Equal(t, odd, providers.KeepForHealth(odd, []string{"spec.replicas"}), "a spec of the wrong shape is kept for Health to report")
}
