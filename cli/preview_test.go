package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/objdiff"
	"github.com/airunway-render/airunway-render/preview"
)

var update = flag.Bool("update", false, "rewrite the expected files of the preview cases from the actual output")

// TestPreviewGolden runs `airunway-render preview --exit-code` on each case
// of testdata/preview (from.yaml, to.yaml, models/) in both formats and
// compares stdout, stderr and the exit code with the expected files; each
// case runs twice, and must give the same bytes. `go test ./fn -run
// TestPreviewGolden -update` rewrites them after an intended change.
func TestPreviewGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/preview/*")
	if err != nil || len(cases) < 5 {
		t.Fatalf("preview cases: %v, %v", cases, err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			for _, format := range []string{"text", "markdown"} {
				args := []string{"preview", "--exit-code", "--format", format,
					"--from", filepath.Join(dir, "from.yaml"), "--to", filepath.Join(dir, "to.yaml"), filepath.Join(dir, "models")}
				var first string
				for run := 0; run < 2; run++ {
					var stdout, stderr bytes.Buffer
					code := Execute(args, nil, &stdout, &stderr)
					got := "exit " + strconv.Itoa(code) + "\n--- stdout\n" + stdout.String() + "--- stderr\n" + stderr.String()
					if run == 1 && got != first {
						t.Fatalf("%s: a second run differs:\n%s\n---\n%s", format, first, got)
					}
					first = got
				}
				want := filepath.Join(dir, "expected."+format)
				if *update {
					if err := os.WriteFile(want, []byte(first), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				b, err := os.ReadFile(want)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if string(b) != first {
					t.Errorf("%s differs from %s (go test ./cli -run TestPreviewGolden -update):\n%s", format, want, first)
				}
			}
		})
	}
}

// TestPreviewFindings pins what the golden cases are there to show.
func TestPreviewFindings(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		code int
		want []string
	}{
		{"kaito-0.6-to-0.8", exitBreaking, []string{
			"BREAKING: KAITO 0.8 runs every Workspace as a StatefulSet",
			"BREAKING: Workspace/inference/phi-4-mini: `resource.labelSelector` changes",
			"\nwarning: ModelDeployment/inference/phi-4-mini-pinned: `spec.provider.overrides.resource.preferredNodes` is deprecated since KAITO 0.8.0",
		}},
		{"inferencepool-v1alpha2-to-v1", exitBreaking, []string{
			"BREAKING: InferencePool/models/qwen: moves from inference.networking.x-k8s.io/v1alpha2 to inference.networking.k8s.io/v1",
			"+ InferencePool/models/qwen (inference.networking.k8s.io/v1)",
			"- InferencePool/models/qwen (inference.networking.x-k8s.io/v1alpha2)",
		}},
		{"unchanged", 0, []string{"0 added, 0 changed, 0 removed", "No breaking change and no restart."}},
		// KAITO installed: the unpinned model moves to it, its clients
		// lose their address and model name; the pinned one stays.
		{"kaito-added", exitBreaking, []string{
			"BREAKING: ModelDeployment/inference/llama-8b: the provider serving the model switches from vllm to kaito: testdata/preview/kaito-added/to.yaml adds provider kaito",
			"To keep vllm, pin it: `spec.provider.name: vllm` on ModelDeployment llama-8b",
			"BREAKING: ModelDeployment/inference/llama-8b: the model name clients send (OpenAI `model`) changes from \"meta-llama/Llama-3.1-8B-Instruct\" to \"llama-3.1-8b-instruct\"",
			"BREAKING: ModelDeployment/inference/llama-8b: clients call it at llama-8b:8000 (Service:port in its namespace); after the upgrade it is at llama-8b:80",
		}},
		// The model's HardwareCompatible verdict changes with it
		// (render.airunway.ai/hardware-fit): a change, not a breaking one.
		{"memory-fit-tighter", exitDifferent, []string{"No breaking change and no restart.\n\nnote: ModelDeployment/inference/llama-8b: a tighter fit (fits → tight): one replica of meta-llama/Llama-3.1-8B-Instruct on 1 GPU of pool \"a100\" needs 17,078 MiB → 17,083 MiB and gets 72,945 → 17,341 MiB (headroom 76% → 1%, model facts from the catalog); its KV cache holds 455,120 → 10,288 tokens"}},
		// The render fails after the upgrade (exit 1), and stdout says why.
		{"memory-fit-breaks", 1, []string{"BREAKING: ModelDeployment/inference/llama-8b: does not fit its GPUs after the upgrade: one replica of meta-llama/Llama-3.1-8B-Instruct on 1 GPU of pool \"a100\" needs 17,078 MiB → 16,054 MiB and gets 72,945 → 8,125 MiB"}},
	} {
		dir := filepath.Join("testdata", "preview", tc.dir)
		var stdout, stderr bytes.Buffer
		code := Execute([]string{"preview", "--exit-code", "--from", filepath.Join(dir, "from.yaml"), "--to", filepath.Join(dir, "to.yaml"), filepath.Join(dir, "models")}, nil, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s", tc.dir, code, tc.code, stderr.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.dir, w, stdout.String())
			}
		}
	}
}

func TestPreviewArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"preview", "x"}, "`--from` and `--to` must both name a capability file"},
		{[]string{"preview", "--from", "a", "--to", "b"}, "no input: name files or directories as arguments or with `-f`"},
		{[]string{"preview", "--from", "a", "--to", "b", "--format", "html", "x"}, "`--format` must be \"text\" or \"markdown\", got \"html\""},
		{[]string{"preview", "--from", "testdata/preview/unchanged/missing.yaml", "--to", "testdata/preview/unchanged/to.yaml", "testdata/preview/unchanged/models"}, "cannot read the capability file"},
	} {
		var stdout, stderr bytes.Buffer
		if code := Execute(tc.args, nil, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, stdout.String(), stderr.String(), tc.want)
		}
	}
}

// TestObjectFindings: the immutable fields and restarts, kind by kind.
func TestObjectFindings(t *testing.T) {
	change := func(kind, before, after string) objdiff.Change {
		return objdiff.Change{Op: objdiff.Changed, APIVersion: "v1", Kind: kind, Namespace: "ns", Name: "x",
			OldYAML: "kind: " + kind + "\n" + before, NewYAML: "kind: " + kind + "\n" + after}
	}
	for _, tc := range []struct {
		name string
		c    objdiff.Change
		want string // "" for no finding; else the start of "BREAKING: ..." or "restart: ..."
	}{
		{"deployment selector", change("Deployment", "spec: {selector: {matchLabels: {a: b}}}", "spec: {selector: {matchLabels: {a: c}}}"), "BREAKING: Deployment/ns/x: `spec.selector` changes"},
		{"deployment template", change("Deployment", "spec: {template: {spec: {x: 1}}}", "spec: {template: {spec: {x: 2}}}"), "restart: Deployment/ns/x: `spec.template` changes"},
		{"deployment replicas", change("Deployment", "spec: {replicas: 1}", "spec: {replicas: 2}"), ""},
		{"job template", change("Job", "spec: {template: {a: 1}}", "spec: {template: {a: 2}}"), "BREAKING: Job/ns/x: `spec.template` changes"},
		{"pvc class", change("PersistentVolumeClaim", "spec: {storageClassName: a}", "spec: {storageClassName: b}"), "BREAKING: PersistentVolumeClaim/ns/x: `spec.storageClassName` changes"},
		{"workspace count", change("Workspace", "resource: {count: 1}", "resource: {count: 2}"), "BREAKING: Workspace/ns/x: `resource.count` changes"},
		{"workspace instanceType set", change("Workspace", "resource: {}", "resource: {instanceType: Standard_NC24ads_A100_v4}"), ""},
		{"workspace instanceType changed", change("Workspace", "resource: {instanceType: a}", "resource: {instanceType: b}"), "BREAKING: Workspace/ns/x: `resource.instanceType` changes"},
		{"workspace preset", change("Workspace", "inference: {preset: {name: a}}", "inference: {preset: {name: b}}"), "restart: Workspace/ns/x: `inference` changes"},
		{"workspace inference to tuning", change("Workspace", "inference: {preset: {name: a}}", "tuning: {preset: {name: a}}"), "BREAKING: Workspace/ns/x: switches between `inference` and `tuning`"},
		{"statefulset serviceName", change("StatefulSet", "spec: {serviceName: a}", "spec: {serviceName: b}"), "BREAKING: StatefulSet/ns/x: `spec.serviceName` changes"},
		{"statefulset claims", change("StatefulSet", "spec: {volumeClaimTemplates: [{metadata: {name: a}}]}", "spec: {volumeClaimTemplates: [{metadata: {name: b}}]}"), "BREAKING: StatefulSet/ns/x: `spec.volumeClaimTemplates` changes"},
		{"statefulset template", change("StatefulSet", "spec: {template: {a: 1}}", "spec: {template: {a: 2}}"), "restart: StatefulSet/ns/x: `spec.template` changes"},
		{"pvc access modes", change("PersistentVolumeClaim", "spec: {accessModes: [ReadWriteOnce]}", "spec: {accessModes: [ReadWriteMany]}"), "BREAKING: PersistentVolumeClaim/ns/x: `spec.accessModes` changes"},
		{"service clusterIP", change("Service", "spec: {clusterIP: None}", "spec: {clusterIP: 10.0.0.1}"), "BREAKING: Service/ns/x: `spec.clusterIP` changes"},
		{"service ports", change("Service", "spec: {ports: [{port: 80}]}", "spec: {ports: [{port: 8000}]}"), ""},
		{"workspace labelSelector", change("Workspace", "resource: {labelSelector: {matchLabels: {a: b}}}", "resource: {labelSelector: {matchLabels: {a: c}}}"), "BREAKING: Workspace/ns/x: `resource.labelSelector` changes"},
		{"dynamo services", change("DynamoGraphDeployment", "spec: {services: {Frontend: {replicas: 1}}}", "spec: {services: {Frontend: {replicas: 2}}}"), "restart: DynamoGraphDeployment/ns/x"},
		{"leaderworkerset", change("LeaderWorkerSet", "spec: {leaderWorkerTemplate: {size: 2}}", "spec: {leaderWorkerTemplate: {size: 4}}"), "restart: LeaderWorkerSet/ns/x"},
		{"rayservice", change("RayService", "spec: {rayClusterConfig: {a: 1}}", "spec: {rayClusterConfig: {a: 2}}"), "restart: RayService/ns/x"},
		{"configmap", change("ConfigMap", "data: {a: b}", "data: {a: c}"), ""},
	} {
		fs := preview.ObjectFindings([]objdiff.Change{tc.c})
		if tc.want == "" {
			if len(fs) != 0 {
				t.Errorf("%s: unexpected %v", tc.name, fs)
			}
			continue
		}
		if len(fs) != 1 || !strings.HasPrefix(findingLine(fs[0], fs[0].Object), tc.want) {
			t.Errorf("%s: got %v, want one finding starting %q", tc.name, fs, tc.want)
		}
	}
	// Same kind and name, another API group: replaced. Another version of
	// the same group is converted by the API server: not flagged.
	moved := []objdiff.Change{
		{Op: objdiff.Removed, APIVersion: "inference.networking.x-k8s.io/v1alpha2", Kind: "InferencePool", Namespace: "ns", Name: "p"},
		{Op: objdiff.Added, APIVersion: "inference.networking.k8s.io/v1", Kind: "InferencePool", Namespace: "ns", Name: "p"},
		{Op: objdiff.Removed, APIVersion: "kaito.sh/v1alpha1", Kind: "Workspace", Namespace: "ns", Name: "w"},
		{Op: objdiff.Added, APIVersion: "kaito.sh/v1beta1", Kind: "Workspace", Namespace: "ns", Name: "w"},
	}
	fs := preview.ObjectFindings(moved)
	if len(fs) != 1 || !fs[0].Breaking || fs[0].Object != "InferencePool/ns/p" {
		t.Errorf("moves: got %v, want the InferencePool only", fs)
	}
}

// TestNewWarnings: only warnings the upgrade brings are findings; a warning
// both sides give, errors and infos are not.
func TestNewWarnings(t *testing.T) {
	md := diag.Resource{APIVersion: "airunway.ai/v1alpha1", Kind: "ModelDeployment", Namespace: "ns", Name: "m"}
	old := diag.Problem{Severity: diag.Warning, Resource: md, Message: "was there before"}
	before := diag.List{old}
	after := diag.List{
		old,
		{Severity: diag.Warning, Resource: md, Field: "spec.x", Message: "is deprecated"},
		{Severity: diag.Info, Resource: md, Message: "defaulted"},
	}
	got := preview.Findings(preview.Side{Problems: before}, preview.Side{Problems: after}, nil)
	if len(got) != 1 || got[0].Object != "ModelDeployment/ns/m" || got[0].Message != "`spec.x` is deprecated" || !got[0].Warning {
		t.Fatalf("got %+v", got)
	}
	if line := findingLine(got[0], got[0].Object); line != "warning: ModelDeployment/ns/m: `spec.x` is deprecated" {
		t.Errorf("line %q", line)
	}
}

// TestFitFindings: how an upgrade changes a model's memory fit.
func TestFitFindings(t *testing.T) {
	v := func(status fit.Status, needed, available int64) fit.Verdict {
		return fit.Verdict{Namespace: "ml", Name: "m", ModelID: "x/Y-8B", Pool: "gpu", GPUs: 2, NeededMiB: needed, AvailableMiB: available, Source: "catalog", Status: status}
	}
	notChecked := fit.Verdict{Namespace: "ml", Name: "m", Status: fit.StatusNotChecked, Reason: "r"}
	for _, tc := range []struct {
		name          string
		before, after fit.Verdict
		want          string // "" for no finding
		breaking      bool
	}{
		{"same", v(fit.StatusFits, 100, 1000), v(fit.StatusFits, 100, 1000), "", false},
		{"does not fit any more", v(fit.StatusFits, 100, 1000), v(fit.StatusDoesNotFit, 100, 90), "does not fit its GPUs after the upgrade: one replica of x/Y-8B on 2 GPUs of pool \"gpu\" needs 100 MiB and gets 1,000 → 90 MiB (headroom 90% → -11%", true},
		{"tighter", v(fit.StatusFits, 100, 1000), v(fit.StatusFits, 200, 1000), "a tighter fit (fits → fits): one replica of x/Y-8B on 2 GPUs of pool \"gpu\" needs 100 MiB → 200 MiB", false},
		{"looser", v(fit.StatusTight, 950, 1000), v(fit.StatusFits, 950, 2000), "more headroom (tight → fits)", false},
		{"not checked before", notChecked, v(fit.StatusFits, 100, 1000), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := preview.FitFindings([]fit.Verdict{tc.before}, []fit.Verdict{tc.after})
			if tc.want == "" {
				if len(fs) != 0 {
					t.Fatalf("want no finding, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || !strings.Contains(fs[0].Message, tc.want) || fs[0].Breaking != tc.breaking || fs[0].Note == tc.breaking {
				t.Fatalf("got %+v, want %q (breaking %v)", fs, tc.want, tc.breaking)
			}
		})
	}
}

// clientFindings on hand-made sides: a route whose match changes, an
// address that moves within a provider, a kind that goes away.
func TestClientFindings(t *testing.T) {
	model := func(endpoint string) string {
		return "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata:\n  name: m\n  namespace: ml\n  annotations:\n    render.airunway.ai/provider: vllm\n    render.airunway.ai/served-name: m\n    render.airunway.ai/endpoint: " + endpoint + "\n"
	}
	route := func(header string) string {
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: m\n  namespace: ml\n  annotations:\n    render.airunway.ai/generated-from: m\nspec:\n  parentRefs: [{name: gw}]\n  rules:\n  - matches: [{headers: [{name: X-Gateway-Model-Name, value: " + header + "}]}]\n    backendRefs: [{name: m-pool}]\n"
	}
	pdb := "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: m\n  namespace: ml\n  annotations:\n    render.airunway.ai/generated-from: m\n"
	parse := func(docs ...string) []*yaml.RNode {
		var out []*yaml.RNode
		for _, d := range docs {
			out = append(out, yaml.MustParse(d))
		}
		return out
	}
	clientFindings := func(before, after []*yaml.RNode) []preview.Finding {
		return preview.Findings(preview.Side{CapsFile: "a.yaml", Objects: before}, preview.Side{CapsFile: "b.yaml", Objects: after}, nil)
	}
	text := func(fs []preview.Finding) string {
		var b strings.Builder
		for _, f := range fs {
			require.True(t, f.Breaking, f.Message)
			b.WriteString(findingLine(f, f.Object) + "\n")
		}
		return b.String()
	}
	same := clientFindings(parse(model("m:8000"), route("m"), pdb), parse(model("m:8000"), route("m"), pdb))
	require.Empty(t, same)

	got := text(clientFindings(parse(model("m:8000"), route("m"), pdb), parse(model("m-new:8000"), route("other"))))
	require.Contains(t, got, "BREAKING: ModelDeployment/ml/m: clients call it at m:8000 (Service:port in its namespace); after the upgrade it is at m-new:8000")
	require.Contains(t, got, "BREAKING: HTTPRoute/ml/m: what a request must carry to match the route")
	require.Contains(t, got, "BREAKING: ModelDeployment/ml/m: PodDisruptionBudget/ml/m removed, with nothing of the same kind in its place")

	got = text(clientFindings(parse(model("m:8000"), route("m")), parse(model("m:8000"))))
	require.Contains(t, got, "BREAKING: HTTPRoute/ml/m: the gateway route is removed")
}
