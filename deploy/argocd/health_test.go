package argocd

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/argolua"
)

var update = flag.Bool("update", false, "rewrite argocd-cm.yaml from health.lua")

const (
	scriptFile    = "health.lua"
	configMapFile = "argocd-cm.yaml"
	// healthKey is the argocd-cm key Argo CD reads the health check of
	// group airunway.ai, kind ModelDeployment from.
	healthKey = "resource.customizations.health.airunway.ai_ModelDeployment"
)

// The Lua harness, internal/testing/argolua, reproduces Argo CD's
// util/lua/lua.go: the libraries an argocd-cm script gets, decodeValue and
// how ExecuteHealthLua reads the result.

type health struct{ Status, Message string }

// runHealth runs script on obj as Argo CD runs a health check
// (argolua.RunHealth).
func runHealth(t *testing.T, useOpenLibs bool, script string, obj map[string]any) (health, error) {
	t.Helper()
	h, err := argolua.RunHealth(t, useOpenLibs, script, obj)
	return health(h), err
}

func readScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(scriptFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// md is a ModelDeployment at generation with status (YAML at column 0).
func md(generation int, status string) string {
	return fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: llama
  namespace: inference
  generation: %d
spec:
  model:
    id: meta-llama/Llama-3.1-8B-Instruct
`, generation) + status
}

// st is a status as the reporter writes it, conditions made by cond.
func st(observed int, phase, message string, conditions ...string) string {
	s := fmt.Sprintf("status:\n  observedGeneration: %d\n  phase: %s\n  message: %q\n", observed, phase, message)
	if len(conditions) > 0 {
		s += "  conditions:\n" + strings.Join(conditions, "")
	}
	return s
}

func cond(typ, status, reason, message string, observed int) string {
	return fmt.Sprintf("  - type: %s\n    status: %q\n    reason: %s\n    message: %q\n    observedGeneration: %d\n    lastTransitionTime: \"2026-01-02T03:04:05Z\"\n",
		typ, status, reason, message, observed)
}

const (
	msgWaiting    = "Waiting for the airunway status reporter to set the Ready condition; it may not be installed"
	msgRunning    = "Deployment llama is ready, pods are ready"
	msgDeploying  = "Deployment created, waiting for pods to be ready"
	msgNotFound   = "waiting for Deployment llama to be applied"
	msgFailed     = "deployment failed: CrashLoopBackOff"
	msgCRDMissing = "the cluster does not serve kaito.sh/v1beta1 Workspace: install the provider's CRDs, or render for a provider this cluster has"
	msgStale      = "Deployment llama is not ready and its operator has not updated it since 2026-01-02T03:04:05Z; its status may be out of date"
	msgUnknownPrv = `this status reporter does not know provider "nim"; upgrade the reporter to match the renderer`
)

func TestHealth(t *testing.T) {
	script := readScript(t)
	progressing := func(m string) health { return health{"Progressing", m} }
	readyTrue := cond("Ready", "True", "DeploymentReady", msgRunning, 2)
	tests := []struct {
		name     string
		manifest string
		want     health
	}{
		// The reporter has not written a usable status.
		{"no status", md(2, ""), progressing(msgWaiting)},
		{"null status", md(2, "status: null\n"), progressing(msgWaiting)},
		{"status without conditions", md(2, st(2, "Pending", "")), progressing(msgWaiting)},
		{"empty conditions", md(2, st(2, "Pending", "")+"  conditions: []\n"), progressing(msgWaiting)},
		{"no Ready condition", md(2, st(2, "Deploying", msgDeploying, cond("Reconciling", "True", "Progressing", msgDeploying, 2))), progressing(msgWaiting)},

		// Every Ready reason the reporter writes, with its companions.
		{"Ready DeploymentReady", md(2, st(2, "Running", msgRunning, readyTrue)), health{"Healthy", msgRunning}},
		{"Ready DeploymentInProgress", md(2, st(2, "Deploying", msgDeploying,
			cond("Ready", "False", "DeploymentInProgress", msgDeploying, 2),
			cond("Reconciling", "True", "Progressing", msgDeploying, 2))), progressing(msgDeploying)},
		{"Ready ResourceNotFound", md(2, st(2, "Pending", msgNotFound,
			cond("Ready", "False", "ResourceNotFound", msgNotFound, 2),
			cond("Reconciling", "True", "Progressing", msgNotFound, 2))), progressing(msgNotFound)},
		{"Ready DeploymentFailed", md(2, st(2, "Failed", msgFailed,
			cond("Ready", "False", "DeploymentFailed", msgFailed, 2),
			cond("Stalled", "True", "DeploymentFailed", msgFailed, 2))), health{"Degraded", msgFailed}},
		{"Ready ProviderCRDMissing", md(2, st(2, "Failed", msgCRDMissing,
			cond("Ready", "False", "ProviderCRDMissing", msgCRDMissing, 2),
			cond("Stalled", "True", "ProviderCRDMissing", msgCRDMissing, 2))), health{"Degraded", msgCRDMissing}},
		{"Ready ProviderStale", md(2, st(2, "Deploying", msgStale,
			cond("Ready", "Unknown", "ProviderStale", msgStale, 2))), health{"Unknown", msgStale}},
		{"Ready ProviderUnsupported", md(2, st(2, "Pending", msgUnknownPrv,
			cond("Ready", "Unknown", "ProviderUnsupported", msgUnknownPrv, 2))), health{"Unknown", msgUnknownPrv}},

		// Reconciling and Stalled on their own terms.
		{"DeploymentFailed without Stalled", md(2, st(2, "Failed", msgFailed,
			cond("Ready", "False", "DeploymentFailed", msgFailed, 2))), health{"Degraded", msgFailed}},
		{"ProviderCRDMissing without Stalled", md(2, st(2, "Failed", msgCRDMissing,
			cond("Ready", "False", "ProviderCRDMissing", msgCRDMissing, 2))), health{"Degraded", msgCRDMissing}},
		{"Stalled message is reported", md(2, st(2, "Failed", "ready says", cond("Ready", "False", "DeploymentFailed", "ready says", 2),
			cond("Stalled", "True", "DeploymentFailed", "stalled says", 2))), health{"Degraded", "stalled says"}},
		{"Stalled with another Ready reason", md(2, st(2, "Deploying", msgDeploying,
			cond("Ready", "False", "DeploymentInProgress", msgDeploying, 2),
			cond("Stalled", "True", "DeploymentInProgress", "stuck", 2))), health{"Degraded", "stuck"}},
		{"Stalled False is not degraded", md(2, st(2, "Deploying", msgDeploying,
			cond("Ready", "False", "DeploymentInProgress", msgDeploying, 2),
			cond("Stalled", "False", "DeploymentInProgress", "not stuck", 2))), progressing(msgDeploying)},
		{"Reconciling without Ready", md(2, st(2, "Deploying", msgDeploying,
			cond("Reconciling", "True", "Progressing", msgDeploying, 2))), progressing(msgWaiting)},

		// The status is about an older spec.
		{"status.observedGeneration behind", md(3, st(2, "Running", msgRunning, readyTrue)),
			progressing("Waiting for the status of generation 3 (the status is for generation 2)")},
		{"Ready observedGeneration behind", md(3, st(3, "Running", msgRunning, readyTrue)),
			progressing("Waiting for the status of generation 3 (the status is for generation 2)")},
		{"old failure is not degraded", md(7, st(6, "Failed", msgFailed,
			cond("Ready", "False", "DeploymentFailed", msgFailed, 6),
			cond("Stalled", "True", "DeploymentFailed", msgFailed, 6))),
			progressing("Waiting for the status of generation 7 (the status is for generation 6)")},
		{"observedGeneration ahead", md(1, st(2, "Running", msgRunning, readyTrue)), health{"Healthy", msgRunning}},
		{"no observedGeneration", md(4, "status:\n  conditions:\n  - {type: Ready, status: \"True\", reason: DeploymentReady, message: up}\n"),
			health{"Healthy", "up"}},

		// Malformed objects never make the script fail.
		{"status is a string", md(2, "status: Running\n"), progressing(msgWaiting)},
		{"status is a number", md(2, "status: 5\n"), progressing(msgWaiting)},
		{"status is a list", md(2, "status:\n- {type: Ready, status: \"True\", message: up}\n"), progressing(msgWaiting)},
		{"conditions is a string", md(2, st(2, "Running", msgRunning)+"  conditions: Ready\n"), progressing(msgWaiting)},
		{"conditions is an object", md(2, st(2, "Running", msgRunning)+"  conditions:\n    Ready: {type: Ready, status: \"True\"}\n"), progressing(msgWaiting)},
		{"non-object conditions are skipped", md(2, st(2, "Running", msgRunning)+"  conditions:\n  - Ready\n  - 7\n  - null\n  - [Ready]\n"+readyTrue),
			health{"Healthy", msgRunning}},
		{"Ready without status", md(2, st(2, "Running", msgRunning)+"  conditions:\n  - {type: Ready, reason: DeploymentReady, message: up}\n"), progressing(msgWaiting)},
		{"Ready status is a boolean", md(2, st(2, "Running", msgRunning)+"  conditions:\n  - {type: Ready, status: true, message: up}\n"), progressing(msgWaiting)},
		{"Ready status is not a condition status", md(2, st(2, "Running", msgRunning)+"  conditions:\n  - {type: Ready, status: \"Yes\", message: up}\n"), progressing(msgWaiting)},
		{"condition type is not a string", md(2, st(2, "Running", msgRunning)+"  conditions:\n  - {type: {Ready: true}, status: \"True\"}\n"), progressing(msgWaiting)},
		{"malformed Ready before a good one", md(2, st(2, "Running", msgRunning)+"  conditions:\n  - {type: Ready}\n"+readyTrue), health{"Healthy", msgRunning}},
		{"generations are strings", "kind: ModelDeployment\nmetadata: {generation: \"3\"}\nstatus:\n  observedGeneration: \"2\"\n  conditions:\n  - {type: Ready, status: \"True\", message: up, observedGeneration: \"2\"}\n",
			health{"Healthy", "up"}},
		{"metadata is a string", "kind: ModelDeployment\nmetadata: llama\n" + st(2, "Running", msgRunning, readyTrue), health{"Healthy", msgRunning}},
		{"message falls back to reason", md(2, "status:\n  conditions:\n  - {type: Ready, status: \"True\", reason: DeploymentReady}\n"), health{"Healthy", "DeploymentReady"}},
		{"message is a number", md(2, "status:\n  conditions:\n  - {type: Ready, status: \"False\", reason: DeploymentFailed, message: 42}\n"), health{"Degraded", "DeploymentFailed"}},
		{"neither message nor reason", md(2, "status:\n  conditions:\n  - {type: Ready, status: \"Unknown\"}\n"), health{"Unknown", ""}},
		{"Stalled without message", md(2, "status:\n  conditions:\n  - {type: Ready, status: \"False\", reason: DeploymentFailed, message: boom}\n  - {type: Stalled, status: \"True\"}\n"),
			health{"Degraded", "boom"}},
		{"empty object", "{}\n", progressing(msgWaiting)},
	}
	for _, tt := range tests {
		obj := argolua.Decode(t, tt.manifest)
		for _, mode := range []struct {
			name        string
			useOpenLibs bool
		}{{"argocd-cm", false}, {"useOpenLibs", true}} {
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				got, err := runHealth(t, mode.useOpenLibs, script, obj)
				if err != nil {
					t.Fatalf("health.lua failed: %v", err)
				}
				if got != tt.want {
					t.Errorf("health = %+v, want %+v", got, tt.want)
				}
			})
		}
	}
}

// BenchmarkHealthLua measures the script on a Running model with every
// condition the reporter writes, against the one second Argo CD gives a
// health script: an op is a fresh LState, as Argo CD makes one per check.
func BenchmarkHealthLua(b *testing.B) {
	script, err := os.ReadFile(scriptFile)
	if err != nil {
		b.Fatal(err)
	}
	obj := argolua.Decode(b, md(2, st(2, "Running", msgRunning,
		cond("Ready", "True", "DeploymentReady", msgRunning, 2),
		cond("Reconciling", "False", "Succeeded", "", 2),
		cond("Stalled", "False", "Succeeded", "", 2))))
	for b.Loop() {
		h, err := argolua.RunHealth(b, false, string(script), obj)
		if err != nil || h.Status != "Healthy" {
			b.Fatalf("health = %+v, %v", h, err)
		}
	}
}

// TestLuaEnvironment pins the harness to what Argo CD gives an argocd-cm
// script, so that a script using a library Argo CD withholds fails here.
func TestLuaEnvironment(t *testing.T) {
	const probe = `return {
  string = type(string), math = type(math), io = type(io), os = type(os),
  table = type(table), ipairs = type(ipairs), require = type(require),
  osTime = type(require("os").time), osExit = type(require("os").exit),
  obj = type(obj), generation = type(obj.metadata.generation),
  conditions = type(obj.status.conditions[1]), status = type(obj.status.conditions[1].status),
}`
	obj := argolua.Decode(t, md(2, st(2, "Running", msgRunning, cond("Ready", "True", "DeploymentReady", msgRunning, 2))))
	l := argolua.NewLState(t, false)
	l.SetGlobal("obj", argolua.ToLua(l, obj))
	if err := l.DoString(probe); err != nil {
		t.Fatal(err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("probe returned %s", l.Get(-1).Type())
	}
	want := map[string]string{
		"string": "nil", "math": "nil", "io": "nil", "os": "nil",
		"table": "table", "ipairs": "function", "require": "function",
		"osTime": "function", "osExit": "nil",
		"obj": "table", "generation": "number", "conditions": "table", "status": "string",
	}
	for k, w := range want {
		if got := ret.RawGetString(k).String(); got != w {
			t.Errorf("type(%s) = %s, want %s", k, got, w)
		}
	}

	// A careless script fails in this harness as it would in Argo CD, so
	// the malformed cases of TestHealth do prove health.lua's defences.
	_, err := runHealth(t, false, `return {status = obj.status.conditions[1].type}`, argolua.Decode(t, md(1, "")))
	var apiErr *lua.ApiError
	if !errors.As(err, &apiErr) || apiErr.Type != lua.ApiErrorRun {
		t.Errorf("indexing a missing status: err = %v, want a Lua run-time error", err)
	}
}

const configMapHeader = `# Code generated from health.lua by ` + "`go test ./deploy/argocd -update`" + `. DO NOT EDIT.
#
# Argo CD health check for airunway.ai/ModelDeployment, as a patch for the
# argocd-cm ConfigMap of an Argo CD installed in namespace argocd. Merge it
# into argocd-cm, for example as a kustomize patch of the Argo CD install.
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels:
    app.kubernetes.io/name: argocd-cm
    app.kubernetes.io/part-of: argocd
data:
`

// renderConfigMap embeds script in a literal block scalar, indented four
// spaces; empty lines stay empty so the file has no trailing spaces.
func renderConfigMap(script string) []byte {
	var b bytes.Buffer
	b.WriteString(configMapHeader)
	b.WriteString("  " + healthKey + ": |\n")
	for _, line := range strings.SplitAfter(script, "\n") {
		switch line {
		case "":
		case "\n":
			b.WriteString(line)
		default:
			b.WriteString("    " + line)
		}
	}
	return b.Bytes()
}

func TestConfigMapEmbedsScript(t *testing.T) {
	script := readScript(t)
	want := renderConfigMap(script)
	if *update {
		if err := os.WriteFile(configMapFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(configMapFile)
	if err != nil {
		t.Fatalf("%v; create it with `go test ./deploy/argocd -update`", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date with %s; regenerate it with `go test ./deploy/argocd -update`", configMapFile, scriptFile)
	}

	// Whatever the rendering, what Kubernetes reads must be the script.
	var cm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string            `json:"name"`
			Namespace string            `json:"namespace"`
			Labels    map[string]string `json:"labels"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	if err := yaml.UnmarshalStrict(got, &cm); err != nil {
		t.Fatalf("parse %s: %v", configMapFile, err)
	}
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Metadata.Name != "argocd-cm" || cm.Metadata.Namespace != "argocd" {
		t.Errorf("%s is %s %s %s/%s, want v1 ConfigMap argocd/argocd-cm", configMapFile, cm.APIVersion, cm.Kind, cm.Metadata.Namespace, cm.Metadata.Name)
	}
	wantLabels := map[string]string{"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"}
	if fmt.Sprint(cm.Metadata.Labels) != fmt.Sprint(wantLabels) {
		t.Errorf("labels = %v, want %v", cm.Metadata.Labels, wantLabels)
	}
	if len(cm.Data) != 1 || cm.Data[healthKey] != script {
		t.Errorf("%s data does not hold exactly %s under %s; regenerate it with `go test ./deploy/argocd -update`", configMapFile, scriptFile, healthKey)
	}
}

// TestConfigMapKey parses healthKey as Argo CD's settings manager parses
// split resource.customizations keys: resource.customizations.<type>.<group>_<kind>.
func TestConfigMapKey(t *testing.T) {
	parts := strings.SplitN(healthKey, ".", 4)
	if len(parts) != 4 || parts[0]+"."+parts[1] != "resource.customizations" || parts[2] != "health" {
		t.Fatalf("%q is not a resource.customizations.health.<group>_<kind> key", healthKey)
	}
	gk := strings.Split(parts[3], "_")
	if len(gk) != 2 || gk[0] != "airunway.ai" || gk[1] != "ModelDeployment" {
		t.Errorf("%q names %v, want group airunway.ai, kind ModelDeployment", healthKey, gk)
	}
}
