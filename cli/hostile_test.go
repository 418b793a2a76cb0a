package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/fn"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
)

// hostileCase is one input a contributor could commit to a GitOps
// repository to crash, hang or subvert the renderer, and the exact stderr
// each entry point prints for it.
type hostileCase struct {
	name  string
	input string
	// cli is the stderr of `render model.yaml`; fn that of the function
	// given the same objects as a ResourceList, when it differs from cli
	// without the " (file model.yaml)" and " (file model.yaml, line N)"
	// suffixes: a ResourceList's items carry neither file nor line.
	cli, fn string
}

// md is a valid ModelDeployment named name whose spec ends with extra
// (indented by two spaces).
func md(name, extra string) string {
	return mdSpec(name, "  model: {id: Qwen/Qwen3-0.6B}\n  engine: {type: vllm}\n  resources: {gpu: {count: 1}}\n"+extra)
}

// mdSpec is a ModelDeployment named name with exactly this spec.
func mdSpec(name, spec string) string {
	return "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: " + name + ", namespace: team-a}\nspec:\n" + spec
}

// aliasBomb is a billion-laughs document: ten levels of ten aliases each.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString(md("bomb", "  env:\n  - {name: A, value: &a0 laugh}\n"))
	b.WriteString("  podTemplate:\n    metadata:\n      annotations:\n        a0: &l0 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "        a%d: &l%d [%s]\n", i, i, strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9)+fmt.Sprintf("*l%d", i-1))
	}
	return b.String()
}

func nested(levels int) string {
	return strings.Repeat("{a: ", levels) + "1" + strings.Repeat("}", levels)
}

const (
	pvcA = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: a, namespace: team-a}
spec:
  model: {id: Qwen/Qwen3-0.6B, storage: {volumes: [{name: b-cache, purpose: compilationCache, size: 10Gi}]}}
  provider: {name: dynamo}
  engine: {type: vllm}
  resources: {gpu: {count: 1}}
`
	pvcB = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: a-b, namespace: team-a}
spec:
  model: {id: Qwen/Qwen3-0.6B, storage: {volumes: [{name: cache, purpose: compilationCache, size: 10Gi}]}}
  provider: {name: dynamo}
  engine: {type: vllm}
  resources: {gpu: {count: 1}}
`
	cpuOnlyCaps = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: liar, annotations: {config.kubernetes.io/local-config: "true"}}
spec:
  providers: [{name: vllm}]
  nodePools:
  - name: big-gpus
    selector: {pool: big-gpus}
`
)

// costlyRule nests seven comprehensions over 20 items: 20^7 steps.
var costlyRule = func() string {
	list := "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]"
	rule := "a+b+c+d+e+f+g > 0"
	for _, v := range []string{"g", "f", "e", "d", "c", "b", "a"} {
		rule = list + ".all(" + v + ", " + rule + ")"
	}
	return rule
}()

func hostileCases() []hostileCase {
	const nothing = "airunway-render: 1 error(s), 0 warning(s); nothing was rendered\n"
	const file = " (file model.yaml)"
	at := func(line int) string { return fmt.Sprintf(" (file model.yaml, line %d)", line) }
	longName := strings.Repeat("m", 64)
	return []hostileCase{
		{
			name:  "alias bomb",
			input: aliasBomb(),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/bomb: " + aliasBombMessage + file + "\n" + nothing,
		},
		{
			name:  "alias bomb in the capability object",
			input: strings.Replace(aliasBomb(), "kind: ModelDeployment", "kind: ClusterCapabilities", 1),
			cli:   "[error] airunway.ai/v1alpha1/ClusterCapabilities/team-a/bomb: " + aliasBombMessage + file + "\n" + nothing,
		},
		{
			// Not only the renderer's own objects: everything is passed on.
			name:  "alias bomb in an object passed through",
			input: strings.Replace(strings.Replace(aliasBomb(), "kind: ModelDeployment", "kind: ConfigMap", 1), "airunway.ai/v1alpha1", "v1", 1) + "---\n" + md("m", ""),
			cli:   "[error] v1/ConfigMap/team-a/bomb: " + aliasBombMessage + file + "\n" + nothing,
		},
		{
			name:  "a document that is no object",
			input: "models:\n- qwen\n---\n" + md("m", ""),
			cli: "[error] apiVersion: is missing: every document must be a Kubernetes object with `apiVersion` and `kind` (kustomize refuses it too); move other YAML out of the rendered paths" + at(1) + "\n" +
				"[error] kind: is missing: every document must be a Kubernetes object with `apiVersion` and `kind` (kustomize refuses it too); move other YAML out of the rendered paths" + at(1) + "\n" +
				"airunway-render: 2 error(s), 0 warning(s); nothing was rendered\n",
		},
		{
			name:  "a misspelt kind of ours",
			input: strings.Replace(md("m", ""), "kind: ModelDeployment", "kind: ModelDeploment", 1),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeploment/team-a/m kind: \"ModelDeploment\" is not a kind of the airunway.ai API: must be one of \"ClusterCapabilities\", \"InferenceProviderConfig\", \"ModelCatalog\", \"ModelDeployment\"; did you mean \"ModelDeployment\"?" + at(2) + "\n" + nothing,
		},
		{
			name:  "object over 1 MiB",
			input: md("huge", "  env: [{name: BLOB, value: "+strings.Repeat("x", hub.MaxObjectBytes)+"}]\n"),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/huge: is 1048886 bytes as JSON; a ModelDeployment must be at most 1 MiB (1048576 bytes): expand fewer YAML aliases, or move data out of it" + file + "\n" + nothing,
			// the CLI's path annotation counts too
			fn: "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/huge: is 1048820 bytes as JSON; a ModelDeployment must be at most 1 MiB (1048576 bytes): expand fewer YAML aliases, or move data out of it\n" + nothing,
		},
		{
			name:  "input over 64 MiB",
			input: md("m", "") + "---\n# " + strings.Repeat("x", hub.MaxInputBytes) + "\n",
			cli:   "[error]: brings the input past 64 MiB; the files given to one run must hold at most 64 MiB together (render fewer paths per run)" + file + "\n" + nothing,
			fn:    "[error] stdin: the ResourceList is larger than 64 MiB; the input of one run must be at most 64 MiB (split the package)\n",
		},
		{
			name:  "nested past the object limit",
			input: md("deep", "  provider: {name: vllm, overrides: {spec: "+nested(70)+"}}\n"),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/deep spec.provider.overrides.spec" + strings.Repeat(".a", 60) + ": nests more than 64 levels deep; a ModelDeployment must nest at most 64 levels" + at(8) + "\n" + nothing,
		},
		{
			name:  "nested past the parser limit",
			input: md("deeper", "  provider: {name: vllm, overrides: "+nested(10001)+"}\n"),
			cli:   "[error]: cannot read YAML: line 8: nests more than 10000 levels deep; YAML input must nest at most 10000 levels" + file + "\n" + nothing,
			fn:    "[error] stdin: cannot read the ResourceList: line 11: nests more than 10000 levels deep; YAML input must nest at most 10000 levels\n",
		},
		{
			name:  "duplicate key",
			input: md("dup", "  engine: {type: sglang}\n"),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/dup spec.engine: is set at line 6 and again at line 8; a key must appear only once in a mapping" + at(6) + "\n" + nothing,
			// lines count in the ResourceList, three lines longer at the top
			fn: "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/dup spec.engine: is set at line 9 and again at line 11; a key must appear only once in a mapping\n" + nothing,
		},
		{
			name:  "not UTF-8",
			input: md("latin1", "  env: [{name: GREETING, value: \"gr\xfc\xdf\"}]\n"),
			cli:   "[error]: cannot read YAML: is not valid UTF-8; YAML input must be UTF-8 text" + file + "\n" + nothing,
			fn:    "[error] stdin: cannot read the ResourceList: is not valid UTF-8; YAML input must be UTF-8 text\n",
		},
		{
			// found by FuzzResourceList: kyaml's metadata accessors
			// indexed past the end of a list and panicked
			name:  "metadata that is not a mapping",
			input: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: [x]}\n",
			cli:   "[error]: cannot read YAML: an object's `metadata` and `metadata.annotations` must be mappings, got a sequence" + file + "\n" + nothing,
			fn:    "[error] v1/ConfigMap/c metadata.annotations: must be an object mapping names to strings, got a list\n" + nothing,
		},
		{
			name:  "null list item in overrides",
			input: md("m", "  provider: {name: vllm, overrides: {spec: {template: {spec: {imagePullSecrets: [null, {name: null}]}}}}}\n"),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.provider.overrides.spec.template.spec.imagePullSecrets[0]: must not be null: a null deletes a key, but a list item cannot be deleted; leave the item out" + at(8) + "\n" + nothing,
		},
		{
			name:  "a variable set twice",
			input: md("m", "  provider: {name: dynamo}\n  env: [{name: A, value: \"1\"}, {name: A, value: \"2\"}]\n"),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.env[1].name: \"A\" duplicates `spec.env[0].name`: each variable must be set once" + at(9) + "\n" + nothing,
		},
		{
			// found by FuzzRender: without a cost limit this rule ran for
			// hours on every render
			name: "a selection rule that never ends",
			input: strings.Replace(cpuOnlyCaps, "providers: [{name: vllm}]", "providers: [{name: vllm, selectionRules: [{condition: '"+costlyRule+"', priority: 10}]}]", 1) +
				"---\n" + mdSpec("m", "  model: {id: Qwen/Qwen3-0.6B}\n  engine: {type: vllm}\n"),
			cli: "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.provider.name: cannot select a provider: selection rule \"" + costlyRule + "\" (priority 10) of provider \"vllm\" at `spec.providers[0].selectionRules[0].condition` in ClusterCapabilities \"liar\" costs more than 1000000 CEL cost units; a selection rule must not iterate that much (set `spec.provider.name` to skip the rules)" + at(13) + "\n" + nothing,
		},
		{
			name:  "wrong apiVersions",
			input: strings.Replace(md("m", ""), "v1alpha1", "v1", 1) + "---\napiVersion: airunway.ai/v1beta1\nkind: ClusterCapabilities\nmetadata: {name: c, annotations: {config.kubernetes.io/local-config: \"true\"}}\n",
			cli: "[error] airunway.ai/v1/ModelDeployment/team-a/m apiVersion: \"airunway.ai/v1\" is not supported: ModelDeployment must use apiVersion \"airunway.ai/v1alpha1\" or \"airunway.ai/v1alpha2\"" + at(1) + "\n" +
				"[error] airunway.ai/v1beta1/ClusterCapabilities/c apiVersion: \"airunway.ai/v1beta1\" is not supported: ClusterCapabilities must use apiVersion \"airunway.ai/v1alpha1\"" + at(9) + "\n" +
				"airunway-render: 2 error(s), 0 warning(s); nothing was rendered\n",
		},
		{
			name:  "no name",
			input: strings.Replace(md("m", ""), "name: m, ", "", 1),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a metadata.name: must be set" + at(3) + "\n" + nothing,
		},
		{
			name:  "name past 63 characters",
			input: md(longName, ""),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/" + longName + " metadata.name: \"" + longName + "\" is not a valid name: must be no more than 63 characters" + at(3) + "\n" + nothing,
		},
		{
			name:  "namespace through overrides",
			input: md("m", "  provider: {name: vllm, overrides: {metadata: {namespace: kube-system}, spec: {template: {metadata: {namespace: kube-system}}}}}\n"),
			cli: "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.provider.overrides.metadata: overriding `metadata` is forbidden: the renderer sets `apiVersion`, `kind` and `metadata` (a name or namespace there would move the object away from its ModelDeployment), and `status` belongs to the provider's operator" + at(8) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.provider.overrides.spec.template.metadata.namespace: overriding `namespace` is forbidden: an override must not move an object, or point a reference, out of the ModelDeployment's namespace" + at(8) + "\n" +
				"airunway-render: 2 error(s), 0 warning(s); nothing was rendered\n",
		},
		{
			name: "forbidden override keys at any depth",
			input: md("m", "  provider:\n    name: vllm\n    overrides:\n      kind: Pod\n      spec:\n        template:\n          spec:\n"+
				"            volumes: [{name: root, hostPath: {path: /}}]\n"+
				"            containers: [{name: x, ports: [{containerPort: 80, hostPort: 80}], securityContext: {privileged: true}}]\n"+
				"            hostUsers: true\n"),
			cli: "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.provider.overrides.kind: overriding `kind` is forbidden: the renderer sets `apiVersion`, `kind` and `metadata` (a name or namespace there would move the object away from its ModelDeployment), and `status` belongs to the provider's operator" + at(11) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.provider.overrides.spec.template.spec.containers[0].ports[0].hostPort: overriding \"hostPort\" is forbidden: it gives the pod access to its node, which the Pod Security Standards baseline forbids" + at(16) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.provider.overrides.spec.template.spec.containers[0].securityContext: overriding \"securityContext\" is forbidden: security-sensitive pod fields must not be set through overrides" + at(16) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.provider.overrides.spec.template.spec.hostUsers: overriding \"hostUsers\" is forbidden: it gives the pod access to its node, which the Pod Security Standards baseline forbids" + at(17) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.provider.overrides.spec.template.spec.volumes[0].hostPath: overriding \"hostPath\" is forbidden: it gives the pod access to its node, which the Pod Security Standards baseline forbids" + at(15) + "\n" +
				"airunway-render: 5 error(s), 0 warning(s); nothing was rendered\n",
		},
		{
			// `--enforce-eager --trust-remote-code` would set both flags; a
			// negative number is still a value.
			name:  "arg value that injects a flag",
			input: mdSpec("m", "  model: {id: Qwen/Qwen3-0.6B}\n  provider: {name: vllm}\n  resources: {gpu: {count: 1}}\n  engine:\n    type: vllm\n    args: {enforce-eager: --trust-remote-code, seed: \"-1\"}\n"),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.engine.args.enforce-eager: \"--trust-remote-code\" must not start with '-' unless it is a number: the model server would read it as another flag (put extra flags in `spec.engine.extraArgs`)" + at(10) + "\n" + nothing,
		},
		{
			name:  "arg keys that inject flags",
			input: mdSpec("m", "  model: {id: Qwen/Qwen3-0.6B}\n  provider: {name: dynamo}\n  resources: {gpu: {count: 1}}\n  engine:\n    type: vllm\n    args: {\"--trust-remote-code\": \"\", \"x --y\": \"1\"}\n"),
			cli: "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.engine.args: invalid engine arg key \"--trust-remote-code\": must contain only alphanumeric characters, hyphens, and underscores, and must not start with '-'" + at(10) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.engine.args: invalid engine arg key \"x --y\": must contain only alphanumeric characters, hyphens, and underscores, and must not start with '-'" + at(10) + "\n" +
				"airunway-render: 2 error(s), 0 warning(s); nothing was rendered\n",
		},
		{
			name:  "model ID that splits into flags",
			input: mdSpec("m", "  model: {id: \"Qwen/Qwen3-0.6B --trust-remote-code\", servedName: -qwen}\n  provider: {name: kuberay}\n  resources: {gpu: {count: 1}}\n  engine: {type: vllm}\n"),
			cli: "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.model.id: \"Qwen/Qwen3-0.6B --trust-remote-code\" must not contain whitespace or control characters: it is passed to the model server as one command-line token" + at(5) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.model.servedName: \"-qwen\" must not start with '-': the model server would read it as a flag" + at(5) + "\n" +
				"airunway-render: 2 error(s), 0 warning(s); nothing was rendered\n",
		},
		{
			// On KubeRay the engine arguments are Ray Serve LLM's
			// engine_kwargs: one may not load other weights than the
			// model's id, or answer to another name.
			name:  "engine args that swap the model on KubeRay",
			input: mdSpec("m", "  model: {id: Qwen/Qwen3-0.6B}\n  provider: {name: kuberay}\n  resources: {gpu: {count: 1}}\n  engine: {type: vllm, args: {model: evil/weights}, extraArgs: [--served-model-name=Qwen/Qwen3-0.6B]}\n"),
			cli: "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.engine.args.model: sets model, which Ray Serve LLM refuses in engine_kwargs: it sets it from model_loading_config, which the kuberay provider fills from spec.model.id; set that field instead" + at(8) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.engine.extraArgs[0]: sets served_model_name, which Ray Serve LLM refuses in engine_kwargs: it sets it from model_loading_config, which the kuberay provider fills from spec.model.servedName; set that field instead" + at(8) + "\n" +
				"airunway-render: 2 error(s), 0 warning(s); nothing was rendered\n",
		},
		{
			name: "mount paths under system directories",
			input: mdSpec("m", "  provider: {name: vllm}\n  engine: {type: vllm}\n  resources: {gpu: {count: 1}}\n"+strings.ReplaceAll("  model:\n    id: Qwen/Qwen3-0.6B\n    storage:\n      volumes:\n"+
				"      - {name: a, claimName: a, purpose: customX, mountPath: /proc/../etc/ssl}\n"+
				"      - {name: b, claimName: b, purpose: customX, mountPath: /run/secrets}\n"+
				"      - {name: c, claimName: c, purpose: customX, mountPath: /}\n"+
				"      - {name: d, claimName: d, purpose: customX, mountPath: /models/../dev/shm}\n", "customX", "custom")),
			cli: "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.model.storage.volumes[0].mountPath: \"/proc/../etc/ssl\" must not be /etc or below it: that path belongs to the container runtime" + at(12) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.model.storage.volumes[1].mountPath: \"/run/secrets\" must not be /run or below it: that path belongs to the container runtime" + at(13) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.model.storage.volumes[2].mountPath: \"/\" must not be the root directory: a volume there would hide the whole container image" + at(14) + "\n" +
				"[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.model.storage.volumes[3].mountPath: \"/models/../dev/shm\" must not be /dev or below it: that path belongs to the container runtime" + at(15) + "\n" +
				"airunway-render: 4 error(s), 0 warning(s); nothing was rendered\n",
		},
		{
			name:  "two models that generate the same object",
			input: pvcA + "---\n" + pvcB,
			cli:   "[error] v1/PersistentVolumeClaim/team-a/a-b-cache: is rendered from both ModelDeployment \"a\" and \"a-b\"; rename one of them\n" + nothing,
		},
		{
			name:  "the same model twice",
			input: md("m", "") + "---\n" + md("m", ""),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m: is defined twice (also in model.yaml); each ModelDeployment must appear once" + file + "\n" + nothing,
			fn:    "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m: is defined twice; each ModelDeployment must appear once\n" + nothing,
		},
		{
			name:  "a Dynamo worker spread over two billion nodes",
			input: md("m", "  provider: {name: dynamo, overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: 2000000000}}}}}}\n"),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.provider.overrides.spec.services.VllmWorker.multinode.nodeCount: is 2000000000; a worker may span at most 64 nodes" + at(8) + "\n" + nothing,
		},
		{
			name:  "a capability file that lies about GPUs",
			input: cpuOnlyCaps + "---\n" + md("m", ""),
			cli:   "[error] airunway.ai/v1alpha1/ModelDeployment/team-a/m spec.resources: no node pool fits 1 nvidia.com/gpu per pod: pool \"big-gpus\" has no GPUs; add a pool that fits to the capability file, or change the request" + at(16) + "\n" + nothing,
		},
	}
}

// TestHostileInput runs every hostile input through `render` and through
// the function: each must fail with exactly the expected errors, write
// nothing to stdout, and leave an output directory as it was.
func TestHostileInput(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			requireRefused(t, tc, func(t *testing.T, stdout string) {
				require.NotContains(t, stdout, "render.airunway.ai/generated-from", "nothing rendered reaches stdout")
			})
		})
	}
}

// requireRefused runs tc's input through `render`, `render --output-dir`
// and the function: each must fail with exactly tc's stderr, `render`
// writing nothing to stdout and leaving the output directory as it was;
// fnStdout checks what the function wrote.
func requireRefused(t *testing.T, tc hostileCase, fnStdout func(t *testing.T, stdout string)) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.yaml"), []byte(tc.input), 0o644))
	t.Chdir(dir)

	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, Execute([]string{"render", "model.yaml"}, nil, &stdout, &stderr), stderr.String())
	require.Empty(t, stdout.String())
	require.Equal(t, tc.cli, withoutDefaultWarning(stderr.String()))

	out := filepath.Join(dir, "out")
	require.NoError(t, os.Mkdir(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "keep.yaml"), []byte("kept: true\n"), 0o644))
	stderr.Reset()
	require.Equal(t, 1, Execute([]string{"render", "--output-dir", out, "model.yaml"}, nil, &stdout, &stderr))
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing half-rendered is written")

	want := tc.fn
	if want == "" {
		want = fileSuffix.ReplaceAllString(tc.cli, "")
	}
	stdout.Reset()
	stderr.Reset()
	require.Equal(t, 1, fn.Run(strings.NewReader(asResourceList(tc.input)), &stdout, &stderr))
	require.Equal(t, want, stderr.String())
	fnStdout(t, stdout.String())
}

// fileSuffix is where the CLI names the file and line of a problem.
var fileSuffix = regexp.MustCompile(` \(file model\.yaml(, line \d+)?\)`)

// aliasBombMessage is the error for any document whose aliases expand too
// far (yamlerr.CheckNodes).
const aliasBombMessage = "its YAML aliases expand it to more than 262144 nodes, the most an object may have (an alias bomb: the tools that read the output would expand it); YAML anchors and aliases must not multiply the document, so write the values out"

// withoutDefaultWarning removes the warning a run without a capability
// file gives (TestNoCapabilitiesWarns checks it) and its count from the
// summary line, leaving the problems these tests are about.
func withoutDefaultWarning(stderr string) string {
	line := "[warning default-capabilities]: " + defaultCapabilitiesWarning() + "\n"
	if !strings.Contains(stderr, line) {
		return stderr
	}
	stderr = strings.Replace(stderr, line, "", 1)
	for n := 1; n < 100; n++ {
		before, after := fmt.Sprintf(" error(s), %d warning(s);", n), fmt.Sprintf(" error(s), %d warning(s);", n-1)
		if strings.Contains(stderr, before) {
			return strings.Replace(stderr, before, after, 1)
		}
	}
	return stderr
}

// asResourceList wraps a YAML stream's documents as ResourceList items,
// byte for byte, so even input the parser refuses reaches it.
func asResourceList(stream string) string {
	return resourceList("", strings.Split(stream, "\n---\n")...)
}

// TestDanglingAlias: an item whose alias points outside it (found by
// FuzzResourceList) fails with no items in the output, so what is written
// can be read back; an alias inside one item is fine.
func TestDanglingAlias(t *testing.T) {
	const item = "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: cm, namespace: ns}\n  data: {j: &b x, l: *b}\n"
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, fn.Run(strings.NewReader("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"+item), &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "data: {j: &b x, l: *b}")

	stdout.Reset()
	stderr.Reset()
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nx: &a hello\nitems:\n" + strings.Replace(item, "  data: {", "  data: {k: *a, ", 1)
	require.Equal(t, 1, fn.Run(strings.NewReader(in), &stdout, &stderr))
	require.Equal(t, "[error] v1/ConfigMap/ns/cm: uses the YAML alias *a at line 8, whose anchor is outside this object; an item must not refer to anchors outside it (write the value out)\n"+
		"airunway-render: 1 error(s), 0 warning(s); nothing was rendered\n", stderr.String())
	out, err := yaml.Parse(stdout.String())
	require.NoError(t, err, "the output can be read back")
	require.Equal(t, "ResourceList", out.GetKind())
	require.Nil(t, out.Field("items"), "no items: they could not be written back")
	require.NotNil(t, out.Field("results"))
}

// TestLongNamesShortenedNeverCollide: models named with the full 63
// characters, alike but for the last one, render: every name derived from
// them fits 63 characters, is schema-valid, and no two models share one.
func TestLongNamesShortenedNeverCollide(t *testing.T) {
	const caps = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: gw, annotations: {config.kubernetes.io/local-config: "true"}}
spec:
  providers: [{name: vllm}, {name: dynamo, version: "1.1.1"}]
  gateway: {inferencePoolVersion: inference.networking.k8s.io/v1, gatewayAPIVersion: v1.5.1, parentRef: {name: gw}}
`
	var docs []string
	for _, provider := range []string{"vllm", "dynamo"} {
		for _, last := range []string{"1", "2"} {
			name := provider[:1] + strings.Repeat("m", 61) + last
			docs = append(docs, mdSpec(name, "  model: {id: Qwen/Qwen3-0.6B, storage: {volumes: [{name: cache, purpose: modelCache, size: 10Gi}]}}\n"+
				"  provider: {name: "+provider+"}\n  engine: {type: vllm}\n  resources: {gpu: {count: 1}}\n"))
		}
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "caps.yaml"), []byte(caps), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "models.yaml"), []byte(strings.Join(docs, "---\n")), 0o644))
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, Execute([]string{"render", "--capabilities", filepath.Join(dir, "caps.yaml"), filepath.Join(dir, "models.yaml")}, nil, &stdout, &stderr), stderr.String())

	objs, err := kio.FromBytes(stdout.Bytes())
	require.NoError(t, err)
	owner := map[string]string{}
	shortened := 0
	for _, o := range objs {
		id := o.GetKind() + "/" + o.GetName()
		limit := 63 // a DNS label: Services, and Jobs, whose name is a pod label
		if o.GetKind() == "PersistentVolumeClaim" {
			limit = 253 // a DNS subdomain
		}
		require.LessOrEqual(t, len(o.GetName()), limit, id)
		if o.GetKind() == hub.KindModelDeployment {
			continue
		}
		if shortenedName.MatchString(o.GetName()) {
			shortened++
		}
		from := o.GetAnnotations()["render.airunway.ai/generated-from"]
		require.NotContains(t, owner, id, "%s rendered from %s and %s", id, owner[id], from)
		owner[id] = from
		m, err := o.Map()
		require.NoError(t, err)
		require.Empty(t, schemacheck.Check(m), id)
	}
	// 6 picker objects per vLLM model and one download Job per Dynamo
	// model carry a shortened name
	require.Equal(t, 2*6+2*1, shortened)
}

var shortenedName = regexp.MustCompile(`^[vd]m+-[0-9a-f]{8}-(epp|model-download)$`)
