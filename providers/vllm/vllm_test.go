package vllm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

// request builds a Request from a spec in YAML, decoded, defaulted and
// validated like the pipeline does.
func request(t *testing.T, spec string) *providers.Request {
	t.Helper()
	req := providertest.Request(providertest.Valid(t, "", spec), hub.ProviderVLLM)
	req.Engine = hub.EngineVLLM
	return req
}

func render(t *testing.T, spec string) (*appsv1.Deployment, *corev1.Service, diag.List) {
	t.Helper()
	objs, l := Provider{}.Render(request(t, spec))
	require.False(t, l.HasErrors(), "%v", l)
	require.Len(t, objs, 2)
	var d appsv1.Deployment
	var s corev1.Service
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0], &d))
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs[1], &s))
	return &d, &s, l
}

const base = "model: {id: meta-llama/Llama-3.1-8B-Instruct}\nengine: {type: vllm}\n"

func TestObjectsAndLabels(t *testing.T) {
	d, s, _ := render(t, base+"podTemplate: {metadata: {labels: {app: hijack, airunway.ai/deployment: hijack, team: ml}}}")
	require.Equal(t, "Deployment", d.Kind)
	require.Equal(t, "test-model", d.Name)
	require.Equal(t, "default", d.Namespace)
	require.Empty(t, d.OwnerReferences, "no ownerReferences: the UID does not exist at render time")
	require.Equal(t, "airunway", d.Labels["airunway.ai/managed-by"])
	require.Equal(t, "vllm", d.Labels["airunway.ai/engine-type"])
	require.Equal(t, int32(1), *d.Spec.Replicas)
	// The user cannot clobber the labels the selector matches on.
	pod := d.Spec.Template.Labels
	require.Equal(t, "test-model", pod["app"])
	require.Equal(t, "test-model", pod["airunway.ai/deployment"])
	require.Equal(t, "test-model", pod["airunway.ai/model-deployment"])
	require.Equal(t, "ml", pod["team"])
	for k, v := range d.Spec.Selector.MatchLabels {
		require.Equal(t, v, pod[k], "selector label %s", k)
	}
	require.Equal(t, int32(8000), s.Spec.Ports[0].Port)
	require.Equal(t, int32(8000), s.Spec.Ports[0].TargetPort.IntVal)
	require.Equal(t, d.Spec.Selector.MatchLabels, s.Spec.Selector)
	require.NotContains(t, s.Labels, "team", "podTemplate labels stay off the Service")
}

func TestArgs(t *testing.T) {
	cases := []struct {
		name, spec string
		want       []string
		absent     []string
	}{
		{name: "networking first, then model flags", spec: base + "model: {id: meta-llama/Llama-3.1-8B-Instruct, servedName: my-alias}\nengine: {type: vllm, contextLength: 4096, trustRemoteCode: true}",
			want: []string{"--host", "0.0.0.0", "--port", "8000", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--served-model-name", "my-alias", "--max-model-len", "4096", "--trust-remote-code", "--enable-prefix-caching"}},
		{name: "eager and prefix caching true", spec: base + "engine: {type: vllm, enforceEager: true, enablePrefixCaching: true}", want: []string{"--enforce-eager", "--enable-prefix-caching"}},
		{name: "explicit false disables prefix caching", spec: base + "engine: {type: vllm, enablePrefixCaching: false, enforceEager: false}", want: []string{"--no-enable-prefix-caching"}, absent: []string{"--enable-prefix-caching", "--enforce-eager"}},
		{name: "no engine object: no prefix-caching flag either way", spec: "model: {id: m}\nresources: {gpu: {count: 1}}", absent: []string{"--enable-prefix-caching", "--no-enable-prefix-caching"}},
		{name: "gpu 4 gives tensor parallelism", spec: base + "resources: {gpu: {count: 4}}", want: []string{"--tensor-parallel-size", "4"}},
		{name: "gpu 1 gives none", spec: base + "resources: {gpu: {count: 1}}", absent: []string{"--tensor-parallel-size"}},
		{name: "sorted args then extraArgs verbatim", spec: base + "engine: {type: vllm, args: {zeta: last, alpha: first}, extraArgs: [--raw-flag, raw-value, --second-raw]}",
			want: []string{"--alpha", "first", "--zeta", "last", "--raw-flag", "raw-value", "--second-raw"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, _, _ := render(t, tc.spec)
			args := d.Spec.Template.Spec.Containers[0].Args
			require.True(t, providertest.ContainsRun(args, tc.want), "args %v do not contain %v", args, tc.want)
			for _, a := range tc.absent {
				require.NotContains(t, args, a)
			}
		})
	}
}

// TestUserFlagsWin covers upstream's suppression rule: each derived flag
// steps aside when the user sets it, so it appears exactly once.
func TestUserFlagsWin(t *testing.T) {
	cases := []struct{ name, spec, flag, value string }{
		{"tp from args", base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, args: {tensor-parallel-size: \"4\"}}", "--tensor-parallel-size", "4"},
		{"tp from extraArgs with =", base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, extraArgs: [--tensor-parallel-size=4]}", "--tensor-parallel-size=4", ""},
		{"tp from extraArgs split", base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, extraArgs: [--tensor-parallel-size, \"4\"]}", "--tensor-parallel-size", "4"},
		{"model from args", base + "engine: {type: vllm, args: {model: override/model}}", "--model", "override/model"},
		{"max-model-len from args", base + "engine: {type: vllm, contextLength: 4096, args: {max-model-len: \"8192\"}}", "--max-model-len", "8192"},
		{"served name from args", base + "model: {id: m, servedName: a}\nengine: {type: vllm, args: {served-model-name: b}}", "--served-model-name", "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, _, _ := render(t, tc.spec)
			args := d.Spec.Template.Spec.Containers[0].Args
			stem := strings.SplitN(tc.flag, "=", 2)[0]
			n := 0
			for i, a := range args {
				if a == stem || strings.HasPrefix(a, stem+"=") {
					n++
					require.Equal(t, tc.flag, a)
					if tc.value != "" {
						require.Equal(t, tc.value, args[i+1])
					}
				}
			}
			require.Equal(t, 1, n, "flag %s in %v", stem, args)
		})
	}
}

func TestCheck(t *testing.T) {
	cases := []struct{ name, spec, engine, field, message string }{
		{"port in args", base + "engine: {type: vllm, args: {port: \"9000\"}}", "vllm", "spec.engine.args.port", `engine arg "port" conflicts`},
		{"--host in args", base + "engine: {type: vllm, args: {--host: x}}", "vllm", "spec.engine.args.--host", `engine arg "--host" conflicts`},
		{"--port=9000 in args", base + "engine: {type: vllm, args: {--port=9000: \"\"}}", "vllm", "spec.engine.args.--port=9000", "conflicts"},
		{"host in extraArgs", base + "engine: {type: vllm, extraArgs: [--host=127.0.0.1]}", "vllm", "spec.engine.extraArgs[0]", `engine extraArg "--host=127.0.0.1" conflicts`},
		{"invalid arg key", base + "engine: {type: vllm, args: {-bad-key: x}}", "vllm", "spec.engine.args", `invalid engine arg key "-bad-key"`},
		{"tp in args contradicts the GPUs", base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, args: {tensor-parallel-size: \"3\"}}", "vllm", "spec.engine.args.tensor-parallel-size",
			`"tensor-parallel-size" sets the tensor parallel size to 3, which contradicts the 4 GPUs per pod: the tensor parallel size × the pipeline parallel size must be 4; leave both out for 4 × 1, or set both to sizes whose product is 4`},
		{"-tp in extraArgs contradicts the GPUs", base + "resources: {gpu: {count: 2}}\nengine: {type: vllm, extraArgs: [-tp, \"8\"]}", "vllm", "spec.engine.extraArgs[0]", `"-tp" sets the tensor parallel size to 8, which contradicts the 2 GPUs per pod`},
		{"both in extraArgs", base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, extraArgs: [--pipeline-parallel-size=2, -tp, \"4\"]}", "vllm", "spec.engine.extraArgs[1]", "sets the tensor parallel size to 4 and the pipeline parallel size to 2, which contradicts the 4 GPUs per pod"},
		{"not a number", base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, args: {pipeline-parallel-size: two}}", "vllm", "spec.engine.args.pipeline-parallel-size", `"pipeline-parallel-size" sets the pipeline parallel size to "two", which is not a positive whole number`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, tc.spec)
			req.Engine = tc.engine
			l := Provider{}.Check(req).Errors()
			require.Len(t, l, 1, "%v", l)
			require.Equal(t, tc.field, l[0].Field)
			require.Contains(t, l[0].Message, tc.message)
		})
	}
}

// TestParallelismAgreeing: a parallelism flag that agrees with the GPUs
// passes the check and is rendered once, in the user's spelling.
func TestParallelismAgreeing(t *testing.T) {
	for _, extra := range [][]string{{"-tp", "4"}, {"--tensor_parallel_size=4"}, {"--tensor-parallel-size", "4"}} {
		spec := base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, extraArgs: [\"" + strings.Join(extra, "\", \"") + "\"]}"
		require.Empty(t, Provider{}.Check(request(t, spec)).Errors(), "%v", extra)
		d, _, _ := render(t, spec)
		args := d.Spec.Template.Spec.Containers[0].Args
		require.Equal(t, extra, args[len(args)-len(extra):])
		require.NotContains(t, args[:len(args)-len(extra)], "--tensor-parallel-size", "no derived flag beside the user's")
	}
}

// TestParallelismOfTheUser: sizes the user sets that multiply to the
// GPUs are rendered as written, and nothing is derived beside them.
func TestParallelismOfTheUser(t *testing.T) {
	spec := base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, args: {pipeline-parallel-size: \"2\", tensor-parallel-size: \"2\"}}"
	require.Empty(t, Provider{}.Check(request(t, spec)).Errors())
	d, _, _ := render(t, spec)
	require.Contains(t, strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "), "--pipeline-parallel-size 2 --tensor-parallel-size 2")
}

func TestImage(t *testing.T) {
	d, _, _ := render(t, base)
	require.Equal(t, DefaultImage, d.Spec.Template.Spec.Containers[0].Image)
	d, _, _ = render(t, base+"image: legacy:v1")
	require.Equal(t, "legacy:v1", d.Spec.Template.Spec.Containers[0].Image)
	d, _, _ = render(t, "model: {id: m}\nengine: {type: vllm, image: engine:v2}")
	require.Equal(t, "engine:v2", d.Spec.Template.Spec.Containers[0].Image)

	req := request(t, base)
	req.Provider = &hub.ResolvedProvider{Name: hub.ProviderVLLM, Images: map[string]string{"vllm": "pinned@sha256:abc"}}
	objs, _ := Provider{}.Render(req)
	require.Contains(t, toYAML(t, objs[0]), "image: pinned@sha256:abc")
}

func TestProbesResourcesAndVolumes(t *testing.T) {
	d, _, _ := render(t, base+"resources: {gpu: {count: 4, type: amd.com/gpu}, memory: 32Gi, cpu: \"8\"}\nmodel: {id: m, storage: {volumes: [{name: model-cache, claimName: shared-model-cache, purpose: modelCache, readOnly: true}]}}")
	c := d.Spec.Template.Spec.Containers[0]
	for _, p := range []struct {
		probe                    *corev1.Probe
		delay, period, threshold int32
	}{{c.StartupProbe, 15, 10, 60}, {c.LivenessProbe, 15, 10, 3}, {c.ReadinessProbe, 15, 5, 3}} {
		require.Equal(t, "/health", p.probe.HTTPGet.Path)
		require.Equal(t, int32(8000), p.probe.HTTPGet.Port.IntVal)
		require.Equal(t, []int32{p.delay, p.period, p.threshold}, []int32{p.probe.InitialDelaySeconds, p.probe.PeriodSeconds, p.probe.FailureThreshold})
	}
	require.Equal(t, "4", c.Resources.Limits.Name("amd.com/gpu", "").String(), "gpu.type is honoured")
	require.Equal(t, "4", c.Resources.Requests.Name("amd.com/gpu", "").String())
	require.Equal(t, "32Gi", c.Resources.Limits.Memory().String())
	require.Equal(t, "8", c.Resources.Requests.Cpu().String())
	require.True(t, c.Resources.Limits.Cpu().IsZero(), "cpu is a request only")
	vols := d.Spec.Template.Spec.Volumes
	require.Len(t, vols, 2)
	require.Equal(t, "shm", vols[0].Name)
	require.Equal(t, "20Gi", vols[0].EmptyDir.SizeLimit.String())
	require.Equal(t, "shared-model-cache", vols[1].PersistentVolumeClaim.ClaimName)
	require.Equal(t, []corev1.VolumeMount{{Name: "shm", MountPath: "/dev/shm"}, {Name: "model-cache", MountPath: "/model-cache", ReadOnly: true}}, c.VolumeMounts)

	d, _, _ = render(t, base+"resources: {gpu: {count: 1}}")
	require.Empty(t, d.Spec.Template.Spec.Volumes, "one GPU needs no /dev/shm")
}

func TestEnv(t *testing.T) {
	d, _, _ := render(t, base+"secrets: {huggingFaceToken: my-hf-secret}\nenv: [{name: FOO, value: bar}, {name: HF_TOKEN, value: plain}, {name: BOTH, value: x, valueFrom: {secretKeyRef: {name: s, key: k}}}]")
	env := d.Spec.Template.Spec.Containers[0].Env
	require.Len(t, env, 3)
	require.Equal(t, corev1.EnvVar{Name: "FOO", Value: "bar"}, env[0])
	require.Equal(t, "BOTH", env[1].Name)
	require.Empty(t, env[1].Value, "valueFrom wins over value")
	require.Equal(t, "HF_TOKEN", env[2].Name)
	require.Empty(t, env[2].Value)
	require.Equal(t, "my-hf-secret", env[2].ValueFrom.SecretKeyRef.Name)
	require.Equal(t, "HF_TOKEN", env[2].ValueFrom.SecretKeyRef.Key)
}

func TestOverrides(t *testing.T) {
	d, _, _ := render(t, base+"provider: {overrides: {spec: {minReadySeconds: 5, template: {spec: {terminationGracePeriodSeconds: 60}}}}}")
	require.Equal(t, int32(5), d.Spec.MinReadySeconds)
	require.Equal(t, int64(60), *d.Spec.Template.Spec.TerminationGracePeriodSeconds)
	require.Len(t, d.Spec.Template.Spec.Containers, 1, "maps merge, the containers survive")

	d, _, _ = render(t, base+"nodeSelector: {a: b}\nprovider: {overrides: {spec: {template: {spec: {nodeSelector: null}}}}}")
	require.Empty(t, d.Spec.Template.Spec.NodeSelector, "null deletes")

	// Validation refuses these keys first; the provider refuses them again,
	// so no caller that skips validation can change an object's identity.
	for _, key := range []string{"apiVersion", "kind", "metadata", "status"} {
		req := providertest.Request(providertest.Decode(t, "", base+"provider: {overrides: {"+key+": {}}}"), hub.ProviderVLLM)
		req.Engine = hub.EngineVLLM
		_, l := Provider{}.Render(req)
		require.True(t, l.HasErrors(), key)
		require.Equal(t, "spec.provider.overrides", l.Errors()[0].Field)
		require.Contains(t, l.Errors()[0].Message, `overriding "`+key+`" is not allowed`)
	}
}

func TestScaleToZeroIsExplicit(t *testing.T) {
	d, _, l := render(t, base+"scaling: {replicas: 0}")
	require.Equal(t, int32(0), *d.Spec.Replicas)
	require.Len(t, l, 1)
	require.Equal(t, diag.Warning, l[0].Severity)
	require.Equal(t, "spec.scaling.replicas", l[0].Field)
}

func toYAML(t *testing.T, obj providers.Object) string {
	t.Helper()
	out, err := yaml.Marshal(obj)
	require.NoError(t, err)
	return string(out)
}
