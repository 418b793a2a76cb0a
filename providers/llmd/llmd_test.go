package llmd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

// decode builds a defaulted ModelDeployment `test-model` in `default` from
// a spec in YAML, as the pipeline does before validation.
func decode(t *testing.T, spec string) *hub.ModelDeployment {
	t.Helper()
	return providertest.Decode(t, "", spec)
}

// request builds a Request from a spec that passes validation, with the
// embedded default capabilities (llm-d 0.6.0).
func request(t *testing.T, spec string) *providers.Request {
	t.Helper()
	md := decode(t, spec)
	require.False(t, hub.ValidateModelDeployment(md).HasErrors(), "%v", hub.ValidateModelDeployment(md))
	return unvalidated(md)
}

// unvalidated builds a Request without validation, to reach what upstream's
// transformer does with input its webhook would refuse.
func unvalidated(md *hub.ModelDeployment) *providers.Request {
	req := providertest.Request(md, hub.ProviderLLMD)
	req.Engine = hub.EngineVLLM
	return req
}

type rendered struct {
	objs        []providers.Object
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	diags       diag.List
}

func renderReq(t *testing.T, req *providers.Request) rendered {
	t.Helper()
	require.False(t, Provider{}.Check(req).HasErrors(), "%v", Provider{}.Check(req))
	objs, l := Provider{}.Render(req)
	require.False(t, l.HasErrors(), "%v", l)
	out := rendered{objs: objs, diags: l}
	for _, obj := range objs {
		switch obj["kind"] {
		case "Deployment":
			var d appsv1.Deployment
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &d))
			out.deployments = append(out.deployments, &d)
		case "Service":
			var s corev1.Service
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &s))
			out.services = append(out.services, &s)
		default:
			t.Fatalf("unexpected kind %v", obj["kind"])
		}
	}
	return out
}

func render(t *testing.T, spec string) rendered {
	t.Helper()
	return renderReq(t, request(t, spec))
}

func container(d *appsv1.Deployment) corev1.Container { return d.Spec.Template.Spec.Containers[0] }

func args(d *appsv1.Deployment) []string { return container(d).Args }

const (
	modelID = "meta-llama/Llama-3.1-8B-Instruct"
	base    = "model: {id: " + modelID + "}\nprovider: {name: llmd}\nengine: {type: vllm}\n"
	disagg  = "model: {id: " + modelID + "}\nprovider: {name: llmd}\nengine: {type: vllm}\nserving: {mode: disaggregated}\n"
)

func TestObjects(t *testing.T) {
	t.Run("item 110: aggregated renders exactly a Deployment and a Service, labelled, without ownerReferences", func(t *testing.T) {
		r := render(t, base)
		require.Len(t, r.objs, 2)
		require.Equal(t, []any{"apps/v1", "Deployment", "v1", "Service"}, []any{r.objs[0]["apiVersion"], r.objs[0]["kind"], r.objs[1]["apiVersion"], r.objs[1]["kind"]})
		d, s := r.deployments[0], r.services[0]
		for _, m := range []struct {
			name, namespace string
			labels          map[string]string
			annotations     map[string]string
			owners          int
		}{{d.Name, d.Namespace, d.Labels, d.Annotations, len(d.OwnerReferences)}, {s.Name, s.Namespace, s.Labels, s.Annotations, len(s.OwnerReferences)}} {
			require.Equal(t, "test-model", m.name)
			require.Equal(t, "default", m.namespace)
			require.Zero(t, m.owners, "no ownerReferences: the ModelDeployment's UID does not exist at render time")
			require.Equal(t, "airunway", m.labels["airunway.ai/managed-by"])
			require.Equal(t, "test-model", m.labels["airunway.ai/deployment"])
			require.Equal(t, "vllm", m.labels["airunway.ai/engine-type"])
			require.Equal(t, "huggingface", m.labels["airunway.ai/model-source"])
			require.Equal(t, "test-model", m.annotations[hub.AnnotationGeneratedFrom])
		}
		require.Equal(t, "vllm", container(d).Name)
		require.Empty(t, container(d).Command, "no command: the image's entrypoint serves")
		require.Empty(t, d.Spec.Template.Spec.Volumes)
	})
}

// Every model server, aggregated, decode and prefill, has a startup and a
// readiness probe on vLLM's /health:8000 and no liveness probe (upstream
// llm-d renders none: its pods would be Ready, and routed to, while the
// model still loads).
func TestProbes(t *testing.T) {
	for name, spec := range map[string]string{
		"aggregated":    base,
		"disaggregated": disagg + "scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 2}}}",
	} {
		t.Run(name, func(t *testing.T) {
			r := render(t, spec)
			require.Len(t, r.deployments, map[string]int{"aggregated": 1, "disaggregated": 2}[name])
			for _, d := range r.deployments {
				c := container(d)
				for _, p := range []struct {
					probe             *corev1.Probe
					period, threshold int32
				}{{c.StartupProbe, 10, 360}, {c.ReadinessProbe, 5, 3}} {
					require.NotNil(t, p.probe, d.Name)
					require.NotNil(t, p.probe.HTTPGet, d.Name)
					require.Equal(t, "/health", p.probe.HTTPGet.Path)
					require.Equal(t, int32(8000), p.probe.HTTPGet.Port.IntVal)
					require.Equal(t, c.Ports[0].ContainerPort, p.probe.HTTPGet.Port.IntVal, "the probe reaches the port vLLM serves")
					require.Equal(t, []int32{0, p.period, p.threshold}, []int32{p.probe.InitialDelaySeconds, p.probe.PeriodSeconds, p.probe.FailureThreshold}, d.Name)
				}
				require.Equal(t, int32(3600), c.StartupProbe.PeriodSeconds*c.StartupProbe.FailureThreshold, "one hour to download and load the model")
				require.Nil(t, c.LivenessProbe, "no liveness probe: a restart downloads the model again")
				require.NotContains(t, c.Args, "--port", "vLLM listens on its default port, the probed one")
			}
		})
	}
}

func TestReplicas(t *testing.T) {
	cases := []struct {
		name, spec string
		want       int32
		warn       string
	}{
		{name: "item 111: scaling.replicas 3", spec: base + "scaling: {replicas: 3}", want: 3},
		{name: "item 111: no scaling gives 1", spec: base, want: 1},
		{name: "replicas 0 scales to zero with a warning (upstream: 1)", spec: base + "scaling: {replicas: 0}", want: 0, warn: "spec.scaling.replicas"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, tc.spec)
			require.Equal(t, tc.want, *r.deployments[0].Spec.Replicas)
			if tc.warn == "" {
				require.Empty(t, r.diags)
				return
			}
			require.Len(t, r.diags, 1)
			require.Equal(t, diag.Warning, r.diags[0].Severity)
			require.Equal(t, tc.warn, r.diags[0].Field)
		})
	}
}

func TestArgs(t *testing.T) {
	cases := []struct {
		name, spec string
		want       []string
		absent     []string
	}{
		{name: "item 112: model flags", spec: "model: {id: " + modelID + ", servedName: my-alias}\nprovider: {name: llmd}\nengine: {type: vllm, contextLength: 4096, trustRemoteCode: true}",
			want: []string{"--model", modelID, "--served-model-name", "my-alias", "--max-model-len", "4096", "--trust-remote-code", "--enable-prefix-caching"}},
		{name: "item 113: enablePrefixCaching true", spec: base + "engine: {type: vllm, enablePrefixCaching: true}",
			want: []string{"--enable-prefix-caching"}, absent: []string{"--no-enable-prefix-caching"}},
		{name: "item 113: enablePrefixCaching false", spec: base + "engine: {type: vllm, enablePrefixCaching: false}",
			want: []string{"--no-enable-prefix-caching"}, absent: []string{"--enable-prefix-caching"}},
		{name: "item 113: enforceEager true after prefix caching", spec: base + "engine: {type: vllm, enforceEager: true}",
			want: []string{"--enable-prefix-caching", "--enforce-eager"}},
		{name: "item 113: enforceEager false", spec: base + "engine: {type: vllm, enforceEager: false}", absent: []string{"--enforce-eager"}},
		{name: "no engine object: prefix caching takes the CRD default, on (upstream: off)", spec: "model: {id: m}\nprovider: {name: llmd}\nresources: {gpu: {count: 1}}",
			want: []string{"--model", "m", "--enable-prefix-caching"}, absent: []string{"--no-enable-prefix-caching"}},
		{name: "item 114: gpu 4 gives tensor parallelism 4", spec: base + "resources: {gpu: {count: 4}}", want: []string{"--tensor-parallel-size", "4"}},
		{name: "item 114: gpu 1 gives none", spec: base + "resources: {gpu: {count: 1}}", absent: []string{"--tensor-parallel-size"}},
		{name: "item 119: sorted args then extraArgs verbatim, at the end", spec: base + "engine: {type: vllm, args: {zeta: last, alpha: first}, extraArgs: [--raw-flag, raw-value, --second-raw]}",
			want: []string{"--alpha", "first", "--zeta", "last", "--raw-flag", "raw-value", "--second-raw"}},
		{name: "custom source without model.id: no empty --model", spec: "model: {source: custom}\nprovider: {name: llmd}\nengine: {type: vllm, args: {model: /models/mine}}",
			want: []string{"--model", "/models/mine"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := args(render(t, tc.spec).deployments[0])
			require.True(t, providertest.ContainsRun(a, tc.want), "args %v do not contain %v", a, tc.want)
			for _, f := range tc.absent {
				require.NotContains(t, a, f)
			}
			if strings.HasPrefix(tc.name, "item 119") {
				require.Equal(t, tc.want, a[len(a)-len(tc.want):])
			}
		})
	}
}

// TestArgsExactOrder pins upstream llm-d's flag order, which differs from
// the direct vLLM provider's (prefix caching before eager mode, no
// networking flags).
func TestArgsExactOrder(t *testing.T) {
	r := render(t, "model: {id: m, servedName: s}\nprovider: {name: llmd}\nengine: {type: vllm, contextLength: 4096, trustRemoteCode: true, enforceEager: true, args: {b: \"2\", a: \"\"}, extraArgs: [--x=1]}\nresources: {gpu: {count: 2}}")
	require.Equal(t, []string{"--model", "m", "--served-model-name", "s", "--max-model-len", "4096", "--trust-remote-code",
		"--enable-prefix-caching", "--enforce-eager", "--tensor-parallel-size", "2", "--a", "--b", "2", "--x=1"}, args(r.deployments[0]))
}

// TestUserFlagsWin covers the derived-flag suppression the direct vLLM
// provider has and upstream llm-d lacks: a flag the user sets replaces the
// derived one instead of appearing twice.
func TestUserFlagsWin(t *testing.T) {
	cases := []struct{ name, spec, flag, value string }{
		{"tensor parallelism from args", base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, args: {tensor-parallel-size: \"4\"}}", "--tensor-parallel-size", "4"},
		{"tensor parallelism from extraArgs with =", base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, extraArgs: [--tensor-parallel-size=4]}", "--tensor-parallel-size=4", ""},
		{"model from args", base + "engine: {type: vllm, args: {model: override/model}}", "--model", "override/model"},
		{"max-model-len from extraArgs", base + "engine: {type: vllm, contextLength: 4096, extraArgs: [--max-model-len, \"8192\"]}", "--max-model-len", "8192"},
		{"prefix caching off from extraArgs", base + "engine: {type: vllm, enablePrefixCaching: true, extraArgs: [--no-enable-prefix-caching]}", "--no-enable-prefix-caching", ""},
		{"kv-transfer-config from args", disagg + "scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}\nengine: {type: vllm, args: {kv-transfer-config: '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'}}", "--kv-transfer-config", `{"kv_connector":"NixlConnector","kv_role":"kv_both"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, d := range render(t, tc.spec).deployments {
				a := args(d)
				stem := strings.SplitN(tc.flag, "=", 2)[0]
				n := 0
				for i, tok := range a {
					if tok == stem || strings.HasPrefix(tok, stem+"=") {
						n++
						require.Equal(t, tc.flag, tok)
						if tc.value != "" {
							require.Equal(t, tc.value, a[i+1])
						}
					}
				}
				require.Equal(t, 1, n, "flag %s in %v", stem, a)
				if stem == "--no-enable-prefix-caching" {
					require.NotContains(t, a, "--enable-prefix-caching")
				}
			}
		})
	}
}

func TestImage(t *testing.T) {
	pinned := func(t *testing.T, spec string) string {
		req := request(t, spec)
		req.Provider = &hub.ResolvedProvider{Name: hub.ProviderLLMD, Version: "0.6.0", Images: map[string]string{"vllm": "registry.example.com/vllm-openai:v0.10.2"}}
		return container(renderReq(t, req).deployments[0]).Image
	}
	cases := []struct {
		name string
		got  func(t *testing.T) string
		want string
	}{
		{"item 115: default image", func(t *testing.T) string { return container(render(t, base).deployments[0]).Image }, "vllm/vllm-openai:v0.19.1"},
		{"item 115: spec.image used", func(t *testing.T) string {
			return container(render(t, base+"image: legacy:v1\nresources: {gpu: {count: 1}}").deployments[0]).Image
		}, "legacy:v1"},
		{"item 115: engine.image wins", func(t *testing.T) string {
			return container(render(t, "model: {id: m}\nprovider: {name: llmd}\nengine: {type: vllm, image: engine:v2}").deployments[0]).Image
		}, "engine:v2"},
		{"capability pin replaces the default", func(t *testing.T) string { return pinned(t, base) }, "registry.example.com/vllm-openai:v0.10.2"},
		{"engine.image wins over the pin", func(t *testing.T) string {
			return pinned(t, "model: {id: m}\nprovider: {name: llmd}\nengine: {type: vllm, image: engine:v2}")
		}, "engine:v2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, tc.got(t)) })
	}
}

func TestResources(t *testing.T) {
	cases := []struct {
		name, spec     string
		limits, reqs   map[string]string
		noResourcesKey bool
	}{
		{name: "item 116: gpu 2 and memory 32Gi", spec: base + "resources: {gpu: {count: 2}, memory: 32Gi}",
			limits: map[string]string{"nvidia.com/gpu": "2", "memory": "32Gi"}, reqs: map[string]string{"nvidia.com/gpu": "2", "memory": "32Gi"}},
		{name: "cpu is a request only", spec: base + "resources: {gpu: {count: 1}, cpu: \"8\"}",
			limits: map[string]string{"nvidia.com/gpu": "1"}, reqs: map[string]string{"nvidia.com/gpu": "1", "cpu": "8"}},
		{name: "gpu.type names the GPU resource (upstream: always nvidia.com/gpu)", spec: base + "resources: {gpu: {count: 1, type: amd.com/gpu}}",
			limits: map[string]string{"amd.com/gpu": "1"}, reqs: map[string]string{"amd.com/gpu": "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := container(render(t, tc.spec).deployments[0]).Resources
			require.Equal(t, tc.limits, quantities(res.Limits))
			require.Equal(t, tc.reqs, quantities(res.Requests))
		})
	}
	t.Run("item 116: no resources, no resources key", func(t *testing.T) {
		md := decode(t, "model: {id: m}\nprovider: {name: llmd}\nimage: custom:v1")
		require.Nil(t, md.Spec.Resources, "the webhook's GPU default skips a legacy spec.image")
		objs, _ := Provider{}.Render(unvalidated(md))
		c := objs[0]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		require.NotContains(t, c, "resources")
	})
}

func TestEnv(t *testing.T) {
	cases := []struct {
		name, spec string
		want       []corev1.EnvVar
	}{
		{name: "item 117: HF secret gives HF_TOKEN from the Secret", spec: base + "secrets: {huggingFaceToken: my-hf-secret}",
			want: []corev1.EnvVar{hfToken("my-hf-secret")}},
		{name: "item 117: user env in order", spec: base + "env: [{name: FOO, value: bar}, {name: SECRET_VAL, valueFrom: {secretKeyRef: {name: s, key: k}}}]",
			want: []corev1.EnvVar{{Name: "FOO", Value: "bar"}, {Name: "SECRET_VAL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}}}},
		{name: "any valueFrom passes through (upstream drops all but secretKeyRef)", spec: base + "env: [{name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}, {name: LEVEL, valueFrom: {configMapKeyRef: {name: cm, key: level}}}]",
			want: []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
				{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "level"}}}}},
		{name: "a plaintext HF_TOKEN gives way to the Secret (upstream: both, the Secret last)", spec: base + "secrets: {huggingFaceToken: my-hf-secret}\nenv: [{name: HF_TOKEN, value: plain}, {name: FOO, value: bar}]",
			want: []corev1.EnvVar{{Name: "FOO", Value: "bar"}, hfToken("my-hf-secret")}},
		{name: "valueFrom wins over value (upstream emits both, which the API server rejects)", spec: base + "env: [{name: BOTH, value: x, valueFrom: {secretKeyRef: {name: s, key: k}}}]",
			want: []corev1.EnvVar{{Name: "BOTH", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, d := range render(t, tc.spec+"\n").deployments {
				require.Equal(t, tc.want, container(d).Env)
			}
		})
	}
}

func TestPodTemplateAndPlacement(t *testing.T) {
	t.Run("item 118: nodeSelector and tolerations on the pod", func(t *testing.T) {
		r := render(t, base+"nodeSelector: {gpu-type: a100}\ntolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]")
		spec := r.deployments[0].Spec.Template.Spec
		require.Equal(t, map[string]string{"gpu-type": "a100"}, spec.NodeSelector)
		require.Equal(t, []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, spec.Tolerations)
	})
	t.Run("item 118: podTemplate metadata; the selector labels cannot be clobbered", func(t *testing.T) {
		r := render(t, base+"podTemplate: {metadata: {labels: {custom-label: v, app: hijack, airunway.ai/deployment: hijack, airunway.ai/model-deployment: hijack}, annotations: {custom-annotation: a}}}")
		d, s := r.deployments[0], r.services[0]
		require.Equal(t, "v", d.Labels["custom-label"])
		require.Equal(t, "a", d.Annotations["custom-annotation"])
		require.Equal(t, "a", d.Spec.Template.Annotations["custom-annotation"])
		pod := d.Spec.Template.Labels
		require.Equal(t, "v", pod["custom-label"])
		require.Equal(t, map[string]string{"airunway.ai/deployment": "test-model", "app": "test-model"}, d.Spec.Selector.MatchLabels)
		for k, v := range d.Spec.Selector.MatchLabels {
			require.Equal(t, v, pod[k], "selector label %s", k)
		}
		require.Equal(t, "test-model", pod["airunway.ai/model-deployment"])
		require.Equal(t, d.Spec.Selector.MatchLabels, s.Spec.Selector)
		require.NotContains(t, s.Labels, "custom-label", "podTemplate labels stay off the Service")
	})
}

func TestService(t *testing.T) {
	t.Run("item 119: ClusterIP, http 8000 to 8000", func(t *testing.T) {
		s := render(t, base).services[0]
		require.Equal(t, corev1.ServiceTypeClusterIP, s.Spec.Type)
		require.Len(t, s.Spec.Ports, 1)
		p := s.Spec.Ports[0]
		require.Equal(t, "http", p.Name)
		require.Equal(t, int32(8000), p.Port)
		require.Equal(t, int32(8000), p.TargetPort.IntVal)
		require.Equal(t, corev1.ProtocolTCP, p.Protocol)
	})
}

func TestDisaggregated(t *testing.T) {
	const spec = disagg + "scaling: {prefill: {replicas: 4, gpu: {count: 1}, memory: 64Gi}, decode: {replicas: 2, gpu: {count: 4, type: amd.com/gpu}, memory: 256Gi}}"
	r := render(t, spec)
	t.Run("item 120: decode Deployment, prefill Deployment, decode Service, prefill Service", func(t *testing.T) {
		var got []string
		for _, o := range r.objs {
			got = append(got, o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string))
		}
		require.Equal(t, []string{"Deployment/test-model-decode", "Deployment/test-model-prefill", "Service/test-model-decode", "Service/test-model-prefill"}, got)
		for i, d := range r.deployments {
			require.Equal(t, map[string]string{"airunway.ai/deployment": "test-model", "app": d.Name}, d.Spec.Selector.MatchLabels)
			require.Equal(t, d.Spec.Selector.MatchLabels, r.services[i].Spec.Selector)
		}
	})
	t.Run("item 120: KV-transfer roles", func(t *testing.T) {
		require.True(t, providertest.ContainsRun(args(r.deployments[0]), []string{"--kv-transfer-config", `{"kv_connector":"PyNcclConnector","kv_role":"kv_consumer"}`}))
		require.True(t, providertest.ContainsRun(args(r.deployments[1]), []string{"--kv-transfer-config", `{"kv_connector":"PyNcclConnector","kv_role":"kv_producer"}`}))
	})
	t.Run("item 120: component replicas", func(t *testing.T) {
		require.Equal(t, int32(2), *r.deployments[0].Spec.Replicas)
		require.Equal(t, int32(4), *r.deployments[1].Spec.Replicas)
	})
	t.Run("item 114: decode gpu 4 has tensor parallelism 4, prefill gpu 1 none", func(t *testing.T) {
		require.True(t, providertest.ContainsRun(args(r.deployments[0]), []string{"--tensor-parallel-size", "4"}))
		require.NotContains(t, args(r.deployments[1]), "--tensor-parallel-size")
	})
	t.Run("issue 36: /dev/shm on the 4-GPU decode pods, none on the 1-GPU prefill pods", func(t *testing.T) {
		pod := r.deployments[0].Spec.Template.Spec
		require.Equal(t, "/dev/shm", pod.Containers[0].VolumeMounts[0].MountPath)
		require.Equal(t, corev1.StorageMediumMemory, pod.Volumes[0].EmptyDir.Medium)
		require.Empty(t, r.deployments[1].Spec.Template.Spec.Volumes)
	})
	t.Run("component gpu, gpu.type and memory", func(t *testing.T) {
		require.Equal(t, map[string]string{"amd.com/gpu": "4", "memory": "256Gi"}, quantities(container(r.deployments[0]).Resources.Limits))
		require.Equal(t, map[string]string{"amd.com/gpu": "4", "memory": "256Gi"}, quantities(container(r.deployments[0]).Resources.Requests))
		require.Equal(t, map[string]string{"nvidia.com/gpu": "1", "memory": "64Gi"}, quantities(container(r.deployments[1]).Resources.Limits))
	})
	t.Run("only decode pods carry airunway.ai/model-deployment", func(t *testing.T) {
		r := render(t, spec+"\npodTemplate: {metadata: {labels: {airunway.ai/model-deployment: test-model}}}")
		require.Equal(t, "test-model", r.deployments[0].Spec.Template.Labels["airunway.ai/model-deployment"])
		require.NotContains(t, r.deployments[1].Spec.Template.Labels, "airunway.ai/model-deployment", "even from podTemplate: prefill pods must not join the InferencePool")
		require.Equal(t, "test-model", r.deployments[1].Labels["airunway.ai/model-deployment"], "the Deployment object itself is still labelled")
	})
	t.Run("item 120: disaggregated without scaling is an error", func(t *testing.T) {
		md := decode(t, disagg)
		require.Contains(t, hub.ValidateModelDeployment(md).Errors()[0].Message, "disaggregated mode requires scaling.prefill and scaling.decode")
	})
	t.Run("component replicas 0 scale to zero with a warning", func(t *testing.T) {
		r := render(t, disagg+"scaling: {prefill: {replicas: 0, gpu: {count: 1}}, decode: {gpu: {count: 1}}}")
		require.Equal(t, int32(0), *r.deployments[1].Spec.Replicas)
		require.Len(t, r.diags, 1)
		require.Equal(t, "spec.scaling.prefill.replicas", r.diags[0].Field)
		require.Equal(t, diag.Warning, r.diags[0].Severity)
	})
}

func TestOverrides(t *testing.T) {
	t.Run("item 121: spec.replicas is refused at validation; upstream's transformer would merge it", func(t *testing.T) {
		md := decode(t, base+"provider: {name: llmd, overrides: {spec: {replicas: 5}}}")
		require.Contains(t, hub.ValidateModelDeployment(md).Errors()[0].Message, `overriding "replicas" is forbidden`)
		objs, l := Provider{}.Render(unvalidated(md))
		require.False(t, l.HasErrors())
		n, err := providertest.Int64(objs[0]["spec"].(map[string]any)["replicas"])
		require.NoError(t, err)
		require.Equal(t, int64(5), n)
	})
	t.Run("overrides merge into every Deployment, never a Service", func(t *testing.T) {
		r := render(t, disagg+"scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}\nprovider: {name: llmd, overrides: {spec: {minReadySeconds: 30, strategy: {type: Recreate}, template: {metadata: {annotations: {a: b}}}}}}")
		for _, d := range r.deployments {
			require.Equal(t, int32(30), d.Spec.MinReadySeconds)
			require.Equal(t, appsv1.RecreateDeploymentStrategyType, d.Spec.Strategy.Type)
			require.Equal(t, "b", d.Spec.Template.Annotations["a"])
			require.Len(t, d.Spec.Template.Spec.Containers, 1, "maps merge: the pod spec survives")
		}
		for _, o := range r.objs[2:] {
			require.NotContains(t, o["spec"], "minReadySeconds")
		}
	})
	t.Run("null deletes", func(t *testing.T) {
		r := render(t, base+"podTemplate: {metadata: {annotations: {a: b}}}\nprovider: {name: llmd, overrides: {spec: {template: {metadata: {annotations: null}}}}}")
		require.Empty(t, r.deployments[0].Spec.Template.Annotations)
	})
	errorCases := []struct{ name, overrides, field, message string }{
		{"item 121: metadata refused", "{metadata: {labels: {a: b}}}", "spec.provider.overrides", `overriding "metadata" is not allowed`},
		{"item 121: spec.template.spec refused", "{spec: {template: {spec: {terminationGracePeriodSeconds: 60}}}}", "spec.provider.overrides.spec.template.spec", `overriding "spec.template.spec" is not allowed`},
		{"spec.template.spec: null refused", "{spec: {template: {spec: null}}}", "spec.provider.overrides.spec.template.spec", `overriding "spec.template.spec" is not allowed`},
		{"spec.template: null refused (it would delete the pod spec)", "{spec: {template: null}}", "spec.provider.overrides.spec.template", "non-object value"},
		{"spec replaced by a scalar refused", "{spec: 1}", "spec.provider.overrides.spec", "non-object value"},
	}
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			md := decode(t, base+"provider: {name: llmd, overrides: "+tc.overrides+"}")
			_, l := Provider{}.Render(unvalidated(md))
			errs := l.Errors()
			require.Len(t, errs, 1, "%v", errs)
			require.Equal(t, tc.field, errs[0].Field)
			require.Contains(t, errs[0].Message, tc.message)
		})
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name, spec, engine, field, message string
		mdName                             string
	}{
		{name: "item 119: invalid arg key", spec: base + "engine: {type: vllm, args: {-bad-key: x}}", engine: "vllm", field: "spec.engine.args", message: `invalid engine arg key "-bad-key"`},
		{name: "issue 36: tensor parallelism contradicting the GPUs", spec: base + "resources: {gpu: {count: 4}}\nengine: {type: vllm, args: {tensor-parallel-size: \"2\"}}", engine: "vllm", field: "spec.engine.args.tensor-parallel-size",
			message: `"tensor-parallel-size" sets the tensor parallel size to 2, which contradicts the 4 GPUs per pod: the tensor parallel size × the pipeline parallel size must be 4`},
		{name: "issue 36: one command line for prefill and decode of different sizes", spec: disagg + "engine: {type: vllm, extraArgs: [-tp, \"4\"]}\nscaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 4}}}", engine: "vllm", field: "spec.engine.extraArgs[0]",
			message: `"-tp" sets the tensor parallel size to 4, which contradicts the 1 GPU per prefill pod`},
		{name: "generated -prefill name too long for a Service", spec: disagg + "scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}", engine: "vllm", field: "metadata.name", message: "must be no more than 63 characters",
			mdName: strings.Repeat("a", 56)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			md := decode(t, tc.spec)
			if tc.mdName != "" {
				md.Name = tc.mdName
			}
			req := unvalidated(md)
			req.Engine = tc.engine
			l := Provider{}.Check(req).Errors()
			require.Len(t, l, 1, "%v", l)
			require.Equal(t, tc.field, l[0].Field)
			require.Contains(t, l[0].Message, tc.message)
		})
	}
	t.Run("a 55-character name still fits -prefill", func(t *testing.T) {
		md := decode(t, disagg+"scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}")
		md.Name = strings.Repeat("a", 55)
		require.Empty(t, Provider{}.Check(unvalidated(md)).Errors())
	})
	t.Run("without the gateway, only the vLLM Deployments remain", func(t *testing.T) {
		req := unvalidated(decode(t, base))
		l := Provider{}.Check(req)
		require.Len(t, l, 1, "%v", l)
		require.Equal(t, diag.LLMDWithoutGateway, l[0].Code)
		req.GatewayEnabled = true
		require.Empty(t, Provider{}.Check(req))
	})
}

func TestIgnoredFieldsWarn(t *testing.T) {
	cases := []struct{ name, spec, field string }{
		{"storage", base + "model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, claimName: pvc}]}}", "spec.model.storage"},
		{"resources.memory in disaggregated mode", disagg + "scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}\nresources: {memory: 32Gi}", "spec.resources.memory"},
		{"resources.cpu in disaggregated mode", disagg + "scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}\nresources: {cpu: \"4\"}", "spec.resources.cpu"},
		{"scaling.replicas in disaggregated mode", disagg + "scaling: {replicas: 3, prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}", "spec.scaling.replicas"},
		{"scaling.prefill in aggregated mode", base + "scaling: {replicas: 1, prefill: {gpu: {count: 1}}}", "spec.scaling.prefill"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, tc.spec)
			require.Len(t, r.diags, 1, "%v", r.diags)
			require.Equal(t, diag.Warning, r.diags[0].Severity)
			require.Equal(t, tc.field, r.diags[0].Field)
			require.Contains(t, r.diags[0].Message, "ignored by the llmd provider")
		})
	}
	t.Run("storage renders no volumes", func(t *testing.T) {
		r := render(t, base+"model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, claimName: pvc}]}}")
		require.Empty(t, r.deployments[0].Spec.Template.Spec.Volumes)
		require.Empty(t, container(r.deployments[0]).VolumeMounts)
	})
}

func hfToken(secret string) corev1.EnvVar {
	return corev1.EnvVar{Name: "HF_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "HF_TOKEN"}}}
}

// quantities renders a ResourceList as strings: Quantity values that are
// equal may differ in their cached form.
func quantities(rl corev1.ResourceList) map[string]string {
	if rl == nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range rl {
		out[string(k)] = v.String()
	}
	return out
}
