package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

const legacyModel = `# Team A's models.
apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: legacy
  namespace: models
spec:
  model:
    id: Qwen/Qwen3-0.6B
  # pinned after the incident of 2026-10-01
  image: registry.example.com/vllm:v0.11.0 # keep in sync with the mirror
  engine:
    type: vllm
    extraArgs:
      - --max-num-seqs=128
  resources:
    gpu:
      count: 1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: untouched
data:
  image: x
`

// The same file after migrate: the image and its comments under engine,
// the wide sequence indent kept, the ConfigMap's `image` left alone.
const migratedModel = `# Team A's models.
apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: legacy
  namespace: models
spec:
  model:
    id: Qwen/Qwen3-0.6B
  engine:
    type: vllm
    extraArgs:
      - --max-num-seqs=128
    # pinned after the incident of 2026-10-01
    image: registry.example.com/vllm:v0.11.0 # keep in sync with the mirror
  resources:
    gpu:
      count: 1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: untouched
data:
  image: x
`

// TestMigrateFiles: --check reports and changes nothing (exit 2), migrate
// rewrites the file, a second run changes nothing, and the migrated model
// renders the same objects without the deprecation warning.
func TestMigrateFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "models.yaml")
	same := filepath.Join(dir, "current.yaml")
	writeFile(t, file, legacyModel)
	writeFile(t, same, migratedModel)

	code, stdout, stderr := mainArgs("migrate", "--check", dir)
	if code != exitWouldChange || !strings.Contains(stdout, "models.yaml: airunway.ai/v1alpha1/ModelDeployment/models/legacy: moved `spec.image` to `spec.engine.image`") || strings.Contains(stdout, "current.yaml") {
		t.Fatalf("--check: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if got := readFile(t, file); got != legacyModel {
		t.Fatalf("--check changed the file:\n%s", got)
	}
	renderedBefore, l := renderFiles(hostFiles{}, "", []string{file})
	if !strings.Contains(problemText(l), "spec.image: is deprecated") {
		t.Errorf("the legacy field is not reported as deprecated: %v", l)
	}

	if code, _, stderr := mainArgs("migrate", dir); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, stderr)
	}
	if got := readFile(t, file); got != migratedModel {
		t.Fatalf("migrated file:\n%s\nwant:\n%s", got, migratedModel)
	}
	if code, stdout, _ := mainArgs("migrate", "--check", dir); code != 0 || stdout != "" {
		t.Fatalf("a second --check: exit %d, %q", code, stdout)
	}

	renderedAfter, l := renderFiles(hostFiles{}, "", []string{file})
	if strings.Contains(problemText(l), "deprecated") {
		t.Errorf("still deprecated after migrate: %v", l)
	}
	if want, got := generated(t, renderedBefore), generated(t, renderedAfter); got != want || want == "" {
		t.Errorf("migrate changed the rendered objects:\n%s\n---\n%s", want, got)
	}
}

// TestMigrateConflict: different images in both places are for a human
// to settle; the file is left alone and the run fails, naming both.
func TestMigrateConflict(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "m.yaml")
	conflict := strings.Replace(legacyModel, "    type: vllm\n", "    type: vllm\n    image: other:v1\n", 1)
	writeFile(t, file, conflict)
	code, _, stderr := mainArgs("migrate", dir)
	if code != 1 || !strings.Contains(stderr, "`spec.image` \"registry.example.com/vllm:v0.11.0\" and `spec.engine.image` \"other:v1\" differ") || !strings.Contains(stderr, "no file was changed") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if readFile(t, file) != conflict {
		t.Fatal("the file changed")
	}
}

// TestMigrateFunction: without PATHs, migrate is a KRM function.
func TestMigrateFunction(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItem(strings.Split(legacyModel, "---\n")[0])
	var stdout, stderr bytes.Buffer
	if code := Execute([]string{"migrate"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"    image: registry.example.com/vllm:v0.11.0", "message: moved `spec.image` to `spec.engine.image`", "severity: info"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\n  image:") {
		t.Errorf("spec.image is still there:\n%s", out)
	}
	conflict := strings.Replace(in, "    type: vllm\n", "    type: vllm\n      image: other:v1\n", 1)
	stdout.Reset()
	stderr.Reset()
	if code := Execute([]string{"migrate"}, strings.NewReader(conflict), &stdout, &stderr); code != 1 || !strings.Contains(stdout.String(), "severity: error") {
		t.Fatalf("conflict: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

func problemText(l diag.List) string {
	var b strings.Builder
	for _, p := range l {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

func mainArgs(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Execute(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// generated is the YAML of the objects generated from ModelDeployments.
func generated(t *testing.T, objs []*yaml.RNode) string {
	t.Helper()
	var b strings.Builder
	for _, n := range objs {
		if n.GetAnnotations()[hub.AnnotationGeneratedFrom] != "" {
			b.WriteString(n.MustString() + "---\n")
		}
	}
	return b.String()
}

func indentItem(doc string) string {
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	for i, l := range lines {
		if i == 0 {
			lines[i] = "- " + l
		} else {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMigrateKeepsMeaning: a move that would switch on one of upstream's
// defaults is refused with the fields it would set, and the file is left
// alone; once the user has written those fields, the move goes through and
// the model renders to the same objects.
func TestMigrateKeepsMeaning(t *testing.T) {
	const model = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: m, namespace: models}
spec:
  model: {id: Qwen/Qwen3-0.6B}
  provider: {name: vllm}
  image: vllm/vllm-openai:v0.11.0
`
	cases := []struct {
		name string
		spec string // added to the model's spec
		want []string
	}{
		{
			// Only the default that changes what is rendered is named:
			// enforceEager and trustRemoteCode default to false, which is
			// what their absence means (issue 35: all three were named).
			name: "no engine: the move creates spec.engine and its CRD defaults",
			spec: "  resources: {gpu: {count: 1}}\n",
			want: []string{"set `spec.engine.enablePrefixCaching` to true (unset before); write that field in `spec` with the value you want, then run migrate again"},
		},
		{
			name: "only spec.image",
			want: []string{"set `spec.engine.enablePrefixCaching` to true (unset before); write that field"},
		},
		{
			name: "the field the refusal names written by hand",
			spec: "  engine: {enablePrefixCaching: true}\n  resources: {gpu: {count: 1}}\n",
		},
		{
			name: "no resources: spec.image alone suppresses the webhook's GPU default",
			spec: "  engine: {type: vllm}\n",
			want: []string{"`spec.resources.gpu.count` to 1 (unset before)", "`spec.resources.gpu.type` to \"nvidia.com/gpu\" (unset before)"},
		},
		{
			name: "engine and resources written by hand",
			spec: "  engine: {type: vllm, enablePrefixCaching: false}\n  resources: {gpu: {count: 1}}\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "m.yaml")
			writeFile(t, file, model+tc.spec)
			before, _ := renderFiles(hostFiles{}, "", []string{file})
			code, _, stderr := mainArgs("migrate", file)
			if len(tc.want) > 0 {
				if code != 1 || !strings.Contains(stderr, "`spec.image` was not moved") || !strings.Contains(stderr, "no file was changed") {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				for _, w := range tc.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("the refusal does not name %s:\n%s", w, stderr)
					}
				}
				for _, same := range []string{"enforceEager", "trustRemoteCode"} {
					if strings.Contains(stderr, same) {
						t.Errorf("the refusal names %s, whose default means what its absence does:\n%s", same, stderr)
					}
				}
				if readFile(t, file) != model+tc.spec {
					t.Error("the file changed")
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			after, l := renderFiles(hostFiles{}, "", []string{file})
			if want, got := generated(t, before), generated(t, after); got != want || want == "" {
				t.Errorf("migrate changed the rendered objects (%v):\n%s\n---\n%s", l, want, got)
			}
		})
	}
}

// TestMigrateRefusesWhatItCannotRead: a model under an apiVersion the
// renderer does not read (an unserved version, a misspelled group), or one
// it cannot decode (a misspelled field), fails migrate as it fails render,
// naming the mistake, and the file is left alone; skipped, or rewritten on
// its structure alone, the run looked like a success (issue 35).
func TestMigrateRefusesWhatItCannotRead(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"unserved version", "apiVersion: airunway.ai/v1alpha1", "apiVersion: airunway.ai/v1beta1",
			"apiVersion: \"airunway.ai/v1beta1\" is not supported: ModelDeployment must use apiVersion \"airunway.ai/v1alpha1\" or \"airunway.ai/v1alpha2\""},
		{"misspelled group", "apiVersion: airunway.ai/v1alpha1", "apiVersion: airunway.io/v1alpha1",
			"apiVersion: \"airunway.io/v1alpha1\" is not supported: the group is \"airunway.io\", not \"airunway.ai\""},
		{"misspelled field", "  resources:\n", "  resoures:\n",
			"spec.resoures: unknown field: `resoures` is not part of the ModelDeployment schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "m.yaml")
			other := strings.Replace(legacyModel, tc.old, tc.new, 1)
			writeFile(t, file, other)
			code, _, stderr := mainArgs("migrate", file)
			if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "no file was changed") {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if readFile(t, file) != other {
				t.Fatal("the file changed")
			}
			_, l := renderFiles(hostFiles{}, "", []string{file})
			if !strings.Contains(problemText(l), tc.want) {
				t.Errorf("rendering does not refuse it alike: %v", l)
			}
		})
	}
}

// A v1alpha1 model exported from a cluster (its v1alpha2 fields in the
// conversion annotation, its stored `replicas: 1` default) goes up to
// v1alpha2 with the fields in spec, and back down to the annotation;
// both forms render the same objects, and the other objects and the
// model's comments stay as they were.
func TestMigrateToVersion(t *testing.T) {
	const exported = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: qwen
  namespace: models
  annotations:
    airunway.ai/v1alpha2-fields: '{"gateway":{"parentRef":{"name":"team-gw"}}}'
spec:
  model:
    id: Qwen/Qwen3-0.6B # the small one
  engine:
    type: vllm
  resources:
    gpu:
      count: 1
  scaling:
    replicas: 2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: untouched
`
	const up = `apiVersion: airunway.ai/v1alpha2
kind: ModelDeployment
metadata:
  name: qwen
  namespace: models
spec:
  model:
    id: Qwen/Qwen3-0.6B # the small one
  engine:
    type: vllm
  resources:
    gpu:
      count: 1
  scaling:
    replicas: 2
  gateway:
    parentRef:
      name: team-gw
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: untouched
`
	file := filepath.Join(t.TempDir(), "m.yaml")
	writeFile(t, file, exported)
	if code, stdout, stderr := mainArgs("migrate", "--to", "airunway.ai/v1alpha2", file); code != 0 ||
		!strings.Contains(stdout, "converted to airunway.ai/v1alpha2") || !strings.Contains(stdout, "moved `spec.gateway.parentRef` out of annotation airunway.ai/v1alpha2-fields") {
		t.Fatalf("--to v1alpha2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := readFile(t, file); got != up {
		t.Fatalf("converted:\n%s\nwant:\n%s", got, up)
	}
	if code, stdout, _ := mainArgs("migrate", "--check", "--to", "airunway.ai/v1alpha2", file); code != 0 || stdout != "" {
		t.Fatalf("a second run changes something: exit %d, %q", code, stdout)
	}
	if code, stdout, stderr := mainArgs("migrate", "--to", "airunway.ai/v1alpha1", file); code != 0 || !strings.Contains(stdout, "moved `spec.gateway.parentRef` into annotation") {
		t.Fatalf("--to v1alpha1: exit %d\n%s\n%s", code, stdout, stderr)
	}
	down := readFile(t, file)
	if !strings.Contains(down, "airunway.ai/v1alpha2-fields: '{\"gateway\":{\"parentRef\":{\"name\":\"team-gw\"}}}'") || strings.Contains(down, "parentRef:\n") || !strings.Contains(down, "# the small one") {
		t.Fatalf("converted down:\n%s", down)
	}

	if code, _, stderr := mainArgs("migrate", "--to", "airunway.ai/v1beta1", file); code != 1 || !strings.Contains(stderr, "`--to` must be a served apiVersion") {
		t.Fatalf("an unserved --to: exit %d: %s", code, stderr)
	}
}
