package kuberay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
	"github.com/airunway-render/airunway-render/providers"
)

// request builds a Request from a spec in YAML, decoded, defaulted and
// validated like the pipeline does, against KubeRay release version.
func request(t *testing.T, name, version, spec string) *providers.Request {
	t.Helper()
	req := providertest.Request(providertest.Valid(t, "{name: "+name+", namespace: default}", spec), hub.ProviderKubeRay)
	req.Engine = hub.EngineVLLM
	req.Provider.Version = version
	return req
}

// render renders at KubeRay 1.3.0 and returns the object, its typed view
// and the diagnostics; Check must pass.
func render(t *testing.T, spec string) (providers.Object, *rayService, diag.List) {
	t.Helper()
	return renderReq(t, request(t, "test-model", "1.3.0", spec))
}

func renderReq(t *testing.T, req *providers.Request) (providers.Object, *rayService, diag.List) {
	t.Helper()
	require.Empty(t, Provider{}.Check(req).Errors())
	objs, l := Provider{}.Render(req)
	require.False(t, l.HasErrors(), "%v", l)
	require.Len(t, objs, 1)
	data, err := json.Marshal(objs[0])
	require.NoError(t, err)
	var rs rayService
	require.NoError(t, json.Unmarshal(data, &rs))
	return objs[0], &rs, l
}

const base = "model: {id: meta-llama/Llama-3.1-8B-Instruct}\nengine: {type: vllm}\n"

const disagg = "model: {id: m}\nengine: {type: vllm}\nserving: {mode: disaggregated}\n" +
	"scaling: {prefill: {replicas: 2, gpu: {count: 1, type: amd.com/gpu}}, decode: {replicas: 3, gpu: {count: 2, type: amd.com/gpu}, memory: 48Gi}}"

func head(rs *rayService) corev1.Container {
	return rs.Spec.RayClusterConfig.HeadGroupSpec.Template.Spec.Containers[0]
}

func worker(rs *rayService, i int) corev1.Container {
	return rs.Spec.RayClusterConfig.WorkerGroupSpecs[i].Template.Spec.Containers[0]
}

// llm is the Serve config's one LLMConfig as Ray's dashboard receives it:
// KubeRay parses serveConfigV2 as YAML (sigs.k8s.io/yaml) and sends it on
// as JSON (RayServiceReconciler.updateServeDeployment).
func llm(t *testing.T, rs *rayService) map[string]any {
	t.Helper()
	var config map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(rs.Spec.ServeConfigV2), &config))
	data, err := json.Marshal(config)
	require.NoError(t, err)
	var sent struct {
		Applications []struct {
			Name, RoutePrefix, ImportPath string
			Args                          struct {
				LLMConfigs []map[string]any `json:"llm_configs"`
			}
		}
	}
	require.NoError(t, json.Unmarshal(data, &sent))
	require.Len(t, sent.Applications, 1)
	require.Len(t, sent.Applications[0].Args.LLMConfigs, 1)
	return sent.Applications[0].Args.LLMConfigs[0]
}

// kwargs is the LLMConfig's engine_kwargs, as Ray receives them.
func kwargs(t *testing.T, rs *rayService) map[string]any {
	t.Helper()
	kw, _ := llm(t, rs)["engine_kwargs"].(map[string]any)
	return kw
}

func deployment(t *testing.T, rs *rayService) map[string]any {
	t.Helper()
	return llm(t, rs)["deployment_config"].(map[string]any)
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// TestUpstreamChecklist covers the rendering items of upstream's KubeRay
// tests (providers/kuberay/transformer_test.go in kaito-project/airunway; items
// 100-106 of our upstream checklist).
func TestUpstreamChecklist(t *testing.T) {
	cases := []struct {
		name, spec string
		check      func(t *testing.T, obj providers.Object, rs *rayService)
	}{
		{"item 100: aggregated gives one RayService", base + "resources: {gpu: {count: 1}}", func(t *testing.T, obj providers.Object, rs *rayService) {
			require.Equal(t, "ray.io/v1", rs.APIVersion)
			require.Equal(t, "RayService", rs.Kind)
			require.Equal(t, "test-model", rs.Name)
			require.Equal(t, "default", rs.Namespace)
			require.Empty(t, rs.OwnerReferences, "no ownerReferences: the UID does not exist at render time")
			require.Equal(t, map[string]string{
				"airunway.ai/managed-by": "airunway", "airunway.ai/deployment": "test-model", "airunway.ai/model-source": "huggingface",
				"airunway.ai/engine-type": "vllm", "airunway.ai/model-deployment": "test-model",
			}, rs.Labels)
			require.Equal(t, map[string]string{hub.AnnotationGeneratedFrom: "test-model"}, rs.Annotations)
			require.Equal(t, map[string]any{"num_replicas": 1.0}, deployment(t, rs))
			require.Equal(t, map[string]string{"dashboard-host": "0.0.0.0"}, rs.Spec.RayClusterConfig.HeadGroupSpec.RayStartParams)
			require.Len(t, rs.Spec.RayClusterConfig.WorkerGroupSpecs, 1)
			g := rs.Spec.RayClusterConfig.WorkerGroupSpecs[0]
			require.Equal(t, []int32{1, 1, 1}, []int32{*g.Replicas, g.MinReplicas, g.MaxReplicas})
			require.Equal(t, "test-model", g.Template.Labels["airunway.ai/model-deployment"])
			require.Equal(t, "test-model", rs.Spec.RayClusterConfig.HeadGroupSpec.Template.Labels["airunway.ai/model-deployment"])
		}},
		{"item 101: scaling.replicas 3 gives num_replicas 3", base + "scaling: {replicas: 3}", func(t *testing.T, _ providers.Object, rs *rayService) {
			require.Equal(t, map[string]any{"num_replicas": 3.0}, deployment(t, rs))
			g := rs.Spec.RayClusterConfig.WorkerGroupSpecs[0]
			require.Equal(t, []int32{3, 3, 3}, []int32{*g.Replicas, g.MinReplicas, g.MaxReplicas})
		}},
		{"item 102: disaggregated gives prefill then decode groups", disagg, func(t *testing.T, _ providers.Object, rs *rayService) {
			groups := rs.Spec.RayClusterConfig.WorkerGroupSpecs
			require.Len(t, groups, 2)
			require.Equal(t, "prefill-workers", groups[0].GroupName)
			require.Equal(t, []int32{2, 2, 2}, []int32{*groups[0].Replicas, groups[0].MinReplicas, groups[0].MaxReplicas})
			require.Equal(t, "decode-workers", groups[1].GroupName)
			require.Equal(t, []int32{3, 3, 3}, []int32{*groups[1].Replicas, groups[1].MinReplicas, groups[1].MaxReplicas})
			require.Equal(t, "32Gi", limit(worker(rs, 0), "memory"), "missing component memory defaults to 32Gi")
			require.Equal(t, "1", limit(worker(rs, 0), "amd.com/gpu"))
			require.Equal(t, "48Gi", limit(worker(rs, 1), "memory"))
			require.Equal(t, "2", limit(worker(rs, 1), "amd.com/gpu"))
			require.NotContains(t, worker(rs, 0).Resources.Limits, corev1.ResourceName("nvidia.com/gpu"))
			require.Equal(t, map[string]any{"num_replicas": 1.0}, deployment(t, rs), "the Serve config is unchanged in disaggregated mode")
		}},
		{"item 103: aggregated worker group replicas and limits", base + "scaling: {replicas: 2}\nresources: {gpu: {count: 4}}", func(t *testing.T, _ providers.Object, rs *rayService) {
			g := rs.Spec.RayClusterConfig.WorkerGroupSpecs[0]
			require.Equal(t, "gpu-workers", g.GroupName)
			require.Equal(t, int32(2), *g.Replicas)
			require.Equal(t, corev1.ResourceList{"nvidia.com/gpu": mustQ("4"), "memory": mustQ("32Gi")}, worker(rs, 0).Resources.Limits)
			require.Equal(t, corev1.ResourceList{"cpu": mustQ("1")}, worker(rs, 0).Resources.Requests, "without a cpu of its own or a placement, the worker requests the CPU of the Serve replica actor; vLLM's GPU workers reserve none")
		}},
		{"spec.resources.cpu is the workers' cpu request", base + "resources: {gpu: {count: 4}, cpu: \"16\"}", func(t *testing.T, _ providers.Object, rs *rayService) {
			require.Equal(t, corev1.ResourceList{"cpu": mustQ("16")}, worker(rs, 0).Resources.Requests)
			require.Equal(t, "4", limit(head(rs), "cpu"), "the head keeps its own limit")
		}},
		{"item 103: amd gpu type and memory", base + "resources: {gpu: {count: 2, type: amd.com/gpu}, memory: 64Gi}", func(t *testing.T, _ providers.Object, rs *rayService) {
			require.Equal(t, corev1.ResourceList{"amd.com/gpu": mustQ("2"), "memory": mustQ("64Gi")}, worker(rs, 0).Resources.Limits)
		}},
		{"item 104: head container and memory; no MODEL_ID or VLLM_ENGINE_ARGS, which nothing in Ray Serve LLM reads", base + "resources: {gpu: {count: 1}, memory: 64Gi}", func(t *testing.T, _ providers.Object, rs *rayService) {
			c := head(rs)
			require.Equal(t, "ray-head", c.Name)
			require.Empty(t, c.Env)
			require.Equal(t, corev1.ResourceList{"cpu": mustQ("4"), "memory": mustQ("64Gi")}, c.Resources.Limits)
		}},
		{"item 104: quantities in canonical form", base + "resources: {gpu: {count: 1}, memory: 1.5Gi}", func(t *testing.T, obj providers.Object, _ *rayService) {
			data, err := json.Marshal(obj)
			require.NoError(t, err)
			require.Contains(t, string(data), `"memory":"1536Mi"`)
			require.NotContains(t, string(data), "1.5Gi")
		}},
		{"item 104: head memory defaults to 16Gi", base, func(t *testing.T, _ providers.Object, rs *rayService) {
			require.Equal(t, corev1.ResourceList{"cpu": mustQ("4"), "memory": mustQ("16Gi")}, head(rs).Resources.Limits)
			require.Equal(t, "ray-worker", worker(rs, 0).Name)
			require.Equal(t, "32Gi", limit(worker(rs, 0), "memory"))
		}},
		{"item 105: the engine arguments, as Ray Serve LLM's model_loading_config and engine_kwargs", "model: {id: meta-llama/Llama-3.1-8B-Instruct, servedName: my-model}\nengine: {type: vllm, contextLength: 4096, trustRemoteCode: true, enablePrefixCaching: true, args: {zeta: z, alpha: \"\", gpu-memory-utilization: \"0.9\"}}", func(t *testing.T, _ providers.Object, rs *rayService) {
			require.Equal(t, map[string]any{"model_id": "my-model", "model_source": "meta-llama/Llama-3.1-8B-Instruct"}, llm(t, rs)["model_loading_config"])
			require.Equal(t, map[string]any{"max_model_len": 4096.0, "trust_remote_code": true, "enable_prefix_caching": true, "alpha": true, "gpu_memory_utilization": 0.9, "zeta": "z"}, kwargs(t, rs))
		}},
		{"item 106: no user env by default, default image", base, func(t *testing.T, _ providers.Object, rs *rayService) {
			require.Empty(t, head(rs).Env)
			require.Empty(t, worker(rs, 0).Env)
			require.Equal(t, DefaultImage, head(rs).Image)
			require.Equal(t, "rayproject/ray-llm:2.55.0-py311-cu128", worker(rs, 0).Image)
		}},
		{"item 106: FOO=bar then HF_TOKEN second, secretKeyRef preserved", base + "env: [{name: FOO, value: bar}]\nsecrets: {huggingFaceToken: hf-secret}", func(t *testing.T, _ providers.Object, rs *rayService) {
			e := head(rs).Env
			require.Len(t, e, 2)
			require.Equal(t, corev1.EnvVar{Name: "FOO", Value: "bar"}, e[0])
			require.Equal(t, "HF_TOKEN", e[1].Name)
			require.Equal(t, &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "hf-secret"}, Key: "HF_TOKEN"}, e[1].ValueFrom.SecretKeyRef)
		}},
		{"item 106: user secretKeyRef env preserved", base + "env: [{name: API_KEY, valueFrom: {secretKeyRef: {name: s, key: k}}}]", func(t *testing.T, _ providers.Object, rs *rayService) {
			require.Equal(t, "s", env(head(rs), "API_KEY").ValueFrom.SecretKeyRef.Name)
			require.Equal(t, "k", env(head(rs), "API_KEY").ValueFrom.SecretKeyRef.Key)
		}},
		{"item 106: spec.image is used", "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}\nimage: legacy:v1", func(t *testing.T, _ providers.Object, rs *rayService) {
			require.Equal(t, "legacy:v1", head(rs).Image)
			require.Equal(t, "legacy:v1", worker(rs, 0).Image)
		}},
		{"item 106: engine.image wins", "model: {id: m}\nengine: {type: vllm, image: engine:v2}", func(t *testing.T, _ providers.Object, rs *rayService) {
			require.Equal(t, "engine:v2", head(rs).Image)
		}},
		{"item 106: podTemplate label and annotation on the RayService", base + "podTemplate: {metadata: {labels: {team: ml}, annotations: {note: x}}}", func(t *testing.T, _ providers.Object, rs *rayService) {
			require.Equal(t, "ml", rs.Labels["team"])
			require.Equal(t, "x", rs.Annotations["note"])
			require.Equal(t, "test-model", rs.Annotations[hub.AnnotationGeneratedFrom])
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj, rs, _ := render(t, tc.spec)
			tc.check(t, obj, rs)
		})
	}
}

func limit(c corev1.Container, name corev1.ResourceName) string {
	q, ok := c.Resources.Limits[name]
	if !ok {
		return ""
	}
	return q.String()
}

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

// TestCheck covers the render-time refusals this provider adds to the
// catalogue's engine, mode and GPU rules (item 107, render's
// TestEligibility).
func TestCheck(t *testing.T) {
	cases := []struct {
		name, mdName, version, spec, engine string
		field, message                      string
	}{
		{"invalid arg key", "test-model", "1.3.0", "model: {id: m}\nengine: {type: vllm, args: {\"bad key\": x}}", "vllm", "spec.engine.args", `invalid engine arg key "bad key"`},
		{"the model in engine.args", "test-model", "1.3.0", "model: {id: m}\nengine: {type: vllm, args: {model: other/model}}", "vllm", "spec.engine.args.model", "sets model, which Ray Serve LLM refuses in engine_kwargs: it sets it from model_loading_config, which the kuberay provider fills from spec.model.id"},
		{"the served name in extraArgs", "test-model", "1.3.0", "model: {id: m}\nengine: {type: vllm, extraArgs: [--served-model-name, x]}", "vllm", "spec.engine.extraArgs[0]", "fills from spec.model.servedName"},
		{"another executor backend", "test-model", "1.3.0", "model: {id: m}\nengine: {type: vllm, args: {distributed-executor-backend: mp}}", "vllm", "spec.engine.args.distributed-executor-backend", "refuses any other backend"},
		{"one key of a JSON flag", "test-model", "1.3.0", "model: {id: m}\nengine: {type: vllm, extraArgs: [--compilation-config.level, \"3\"]}", "vllm", "spec.engine.extraArgs[0]", "give --compilation-config its whole JSON value"},
		{"a token that is no flag", "test-model", "1.3.0", "model: {id: m}\nengine: {type: vllm, extraArgs: [--max-num-seqs, \"8\", \"16\"]}", "vllm", "spec.engine.extraArgs[2]", `"16" is not a flag or the value of one`},
		{"no model id", "test-model", "1.3.0", "model: {source: custom}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}", "vllm", "spec.model.id", "must be set for the kuberay provider"},
		{"1.7: name over 47 characters", strings.Repeat("a", 48), "1.7.0", base, "vllm", "metadata.name", "KubeRay 1.7.0 rejects RayService names longer than 47 characters"},
		{"1.4: name starting with a digit", "1-model", "1.4.0", base, "vllm", "metadata.name", "KubeRay 1.4.0 rejects RayService names that are not DNS-1035 labels"},
		{"1.3: name over 46 characters", strings.Repeat("a", 47), "1.3.0", base, "vllm", "metadata.name", "must fit in 63 characters, so the name must have at most 46"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, tc.mdName, tc.version, tc.spec)
			req.Engine = tc.engine
			l := Provider{}.Check(req).Errors()
			require.Len(t, l, 1, "%v", l)
			require.Equal(t, tc.field, l[0].Field)
			require.Contains(t, l[0].Message, tc.message)
		})
	}

	t.Run("every problem is reported", func(t *testing.T) {
		req := request(t, strings.Repeat("a", 48), "1.7.0", "model: {id: m}\nengine: {type: vllm, args: {\"bad key\": x}}\nresources: {gpu: {count: 1}}")
		require.Len(t, Provider{}.Check(req).Errors(), 2)
	})
	t.Run("names at the limits pass", func(t *testing.T) {
		require.Empty(t, Provider{}.Check(request(t, strings.Repeat("a", 47), "1.7.0", base)))
		require.Empty(t, Provider{}.Check(request(t, strings.Repeat("a", 40), "1.3.0", base)))
		l := Provider{}.Check(request(t, strings.Repeat("a", 46), "1.3.0", base))
		require.Len(t, l, 1)
		require.Equal(t, diag.Warning, l[0].Severity, "1.3 runs it, but shortens the serve Service name")
		require.Contains(t, l[0].Message, "the serve Service will not be "+strings.Repeat("a", 46)+"-serve-svc")
		l = Provider{}.Check(request(t, "1-model", "1.3.0", base))
		require.Len(t, l, 1)
		require.Equal(t, diag.Warning, l[0].Severity)
	})
}

func TestNodeSelectorAndTolerationsOnWorkersOnly(t *testing.T) {
	spec := "nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\ntolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"
	for _, tc := range []struct{ name, spec string }{{"aggregated", base + spec}, {"disaggregated", disagg + "\n" + spec}} {
		t.Run(tc.name, func(t *testing.T) {
			_, rs, _ := render(t, tc.spec)
			for _, g := range rs.Spec.RayClusterConfig.WorkerGroupSpecs {
				require.Equal(t, map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, g.Template.Spec.NodeSelector, g.GroupName)
				require.Equal(t, []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, g.Template.Spec.Tolerations, g.GroupName)
			}
			hs := rs.Spec.RayClusterConfig.HeadGroupSpec.Template.Spec
			require.Empty(t, hs.NodeSelector, "the head needs no GPU node")
			require.Empty(t, hs.Tolerations)
		})
	}
}

func TestEnvAndHFTokenOnWorkers(t *testing.T) {
	_, rs, _ := render(t, disagg+"\nsecrets: {huggingFaceToken: hf-secret}\nenv: [{name: FOO, value: bar}, {name: HF_TOKEN, value: plaintext}, {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]")
	for i := range rs.Spec.RayClusterConfig.WorkerGroupSpecs {
		e := worker(rs, i).Env
		require.Len(t, e, 3, "FOO, POD_IP, HF_TOKEN; the plaintext token gives way to the Secret")
		require.Equal(t, corev1.EnvVar{Name: "FOO", Value: "bar"}, e[0])
		require.Equal(t, "status.podIP", e[1].ValueFrom.FieldRef.FieldPath, "every valueFrom source is kept (upstream keeps secretKeyRef only)")
		require.Equal(t, "hf-secret", e[2].ValueFrom.SecretKeyRef.Name)
	}
	require.Equal(t, []string{"FOO", "POD_IP", "HF_TOKEN"}, envNames(head(rs)))

	_, rs, l := render(t, base+"env: [{name: VLLM_ENGINE_ARGS, value: --model mine}]")
	require.Equal(t, []string{"VLLM_ENGINE_ARGS"}, envNames(head(rs)), "the user's variable is passed on")
	require.Len(t, l, 1)
	require.Equal(t, diag.IgnoredField, l[0].Code)
	require.Equal(t, "spec.env[0]", l[0].Field)
	require.Contains(t, l[0].Message, "VLLM_ENGINE_ARGS reaches the Ray pods but nothing reads it")
}

func envNames(c corev1.Container) []string {
	var names []string
	for _, e := range c.Env {
		names = append(names, e.Name)
	}
	return names
}

// TestEngineKwargs: the command line the other providers pass becomes
// Ray Serve LLM's engine_kwargs, typed as vLLM's parser types flags,
// with the later of two same-named arguments winning.
func TestEngineKwargs(t *testing.T) {
	cases := []struct {
		name, spec string
		want       map[string]any
	}{
		{"no engine object: nothing", "model: {id: m}\nresources: {gpu: {count: 1}}", nil},
		{"defaulted engine: prefix caching on", "model: {id: m}\nengine: {type: vllm}", map[string]any{"enable_prefix_caching": true}},
		{"explicit false disables prefix caching", "model: {id: m}\nengine: {type: vllm, enablePrefixCaching: false}", map[string]any{"enable_prefix_caching": false}},
		{"eager", "model: {id: m}\nengine: {type: vllm, enforceEager: true, enablePrefixCaching: false}", map[string]any{"enforce_eager": true, "enable_prefix_caching": false}},
		{"extraArgs: --name=value, --name value, --name alone, --no-name", "model: {id: m}\nengine: {type: vllm, extraArgs: [--max-num-seqs=64, --enable-chunked-prefill, --kv-cache-dtype, fp8, --no-enable-prefix-caching, --seed, \"-1\"]}",
			map[string]any{"max_num_seqs": 64.0, "enable_chunked_prefill": true, "kv_cache_dtype": "fp8", "enable_prefix_caching": false, "seed": -1.0}},
		{"user argument replaces the derived one", "model: {id: m}\nengine: {type: vllm, contextLength: 4096, args: {max-model-len: \"8192\"}}",
			map[string]any{"max_model_len": 8192.0, "enable_prefix_caching": true}},
		{"whitespace and JSON travel as written", "model: {id: m}\nengine: {type: vllm, enablePrefixCaching: false, args: {chat-template: \"{{ messages }} {{ tools }}\", override-generation-config: '{\"temperature\": 0.5, \"top_k\": 20}', revision: \"\\\"main\\\"\"}}",
			map[string]any{"chat_template": "{{ messages }} {{ tools }}", "override_generation_config": map[string]any{"temperature": 0.5, "top_k": 20.0}, "revision": `"main"`, "enable_prefix_caching": false}},
		{"strings that YAML would read as something else stay strings", "model: {id: m}\nengine: {type: vllm, enablePrefixCaching: false, args: {a: \"yes\", b: \"off\", c: \"null\", d: \"0x1F\", e: \"1_000\"}}",
			map[string]any{"a": "yes", "b": "off", "c": "null", "d": "0x1F", "e": "1_000", "enable_prefix_caching": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, rs, _ := render(t, tc.spec)
			require.Equal(t, tc.want, kwargs(t, rs))
		})
	}
}
func TestOverrides(t *testing.T) {
	_, rs, _ := render(t, base+"provider: {overrides: {spec: {rayClusterConfig: {headGroupSpec: {rayStartParams: {num-cpus: \"0\"}, template: {spec: {terminationGracePeriodSeconds: 60}}}}}}}")
	hg := rs.Spec.RayClusterConfig.HeadGroupSpec
	require.Equal(t, map[string]string{"dashboard-host": "0.0.0.0", "num-cpus": "0"}, hg.RayStartParams, "maps merge")
	require.Equal(t, int64(60), *hg.Template.Spec.TerminationGracePeriodSeconds)
	require.Len(t, hg.Template.Spec.Containers, 1)

	obj, _, _ := render(t, base+"provider: {overrides: {spec: {serveConfigV2: null}}}")
	require.NotContains(t, obj["spec"], "serveConfigV2", "null deletes")

	_, rs, _ = render(t, base+"provider: {overrides: {spec: {rayClusterConfig: {workerGroupSpecs: [{groupName: custom, minReplicas: 0, maxReplicas: 1, template: {spec: {containers: [{name: c, image: i}]}}}]}}}}")
	require.Len(t, rs.Spec.RayClusterConfig.WorkerGroupSpecs, 1)
	require.Equal(t, "custom", rs.Spec.RayClusterConfig.WorkerGroupSpecs[0].GroupName, "a list is replaced whole")

	// Validation refuses these keys first; the provider refuses them again.
	for _, key := range []string{"apiVersion", "kind", "metadata", "status"} {
		req := providertest.Request(providertest.Decode(t, "", base+"provider: {overrides: {"+key+": {}}}"), hub.ProviderKubeRay)
		req.Engine, req.Provider.Version = hub.EngineVLLM, "1.3.0"
		_, l := Provider{}.Render(req)
		require.True(t, l.HasErrors(), key)
		require.Equal(t, "spec.provider.overrides", l.Errors()[0].Field)
		require.Contains(t, l.Errors()[0].Message, `overriding "`+key+`" is not allowed`)
	}
}

func TestPodTemplateMetadata(t *testing.T) {
	_, rs, _ := render(t, disagg+"\npodTemplate: {metadata: {labels: {team: ml, airunway.ai/model-deployment: hijack, airunway.ai/managed-by: me}, annotations: {prometheus.io/scrape: \"true\"}}}")
	require.Equal(t, "airunway", rs.Labels["airunway.ai/managed-by"], "the renderer's labels win")
	require.Equal(t, "test-model", rs.Labels["airunway.ai/model-deployment"])
	require.Equal(t, "ml", rs.Labels["team"])
	templates := []corev1.PodTemplateSpec{rs.Spec.RayClusterConfig.HeadGroupSpec.Template}
	for _, g := range rs.Spec.RayClusterConfig.WorkerGroupSpecs {
		templates = append(templates, g.Template)
	}
	require.Len(t, templates, 3)
	for _, pt := range templates {
		require.Equal(t, map[string]string{"team": "ml", "airunway.ai/model-deployment": "test-model", "airunway.ai/managed-by": "me"}, pt.Labels)
		require.Equal(t, map[string]string{"prometheus.io/scrape": "true"}, pt.Annotations)
	}
}

func TestWarnings(t *testing.T) {
	cases := []struct {
		name, spec string
		fields     []string
		message    string
	}{
		{"storage ignored", "engine: {type: vllm}\nmodel: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, size: 100Gi}, {name: extra, claimName: pvc, mountPath: /x}]}}", []string{"spec.model.storage.volumes"}, "no volume (cache, extra) is mounted"},
		{"disaggregated serve config", disagg, []string{"spec.serving.mode"}, "does not split prefill from decode"},
		{"component scaled to zero", "model: {id: m}\nengine: {type: vllm}\nserving: {mode: disaggregated}\nscaling: {prefill: {replicas: 0, gpu: {count: 1}}, decode: {replicas: 1, gpu: {count: 1}}}", []string{"spec.scaling.prefill.replicas", "spec.serving.mode"}, ""},
		{"nothing to say", base, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, l := render(t, tc.spec)
			var fields []string
			for _, p := range l {
				require.Equal(t, diag.Warning, p.Severity)
				fields = append(fields, p.Field)
			}
			require.ElementsMatch(t, tc.fields, fields)
			if tc.message != "" {
				require.Contains(t, l[0].Message, tc.message)
			}
		})
	}
}

func TestScaleToZeroIsExplicit(t *testing.T) {
	obj, rs, l := render(t, base+"scaling: {replicas: 0}")
	require.Equal(t, map[string]any{"num_replicas": 0.0}, deployment(t, rs))
	g := rs.Spec.RayClusterConfig.WorkerGroupSpecs[0]
	require.Equal(t, []int32{0, 0, 0}, []int32{*g.Replicas, g.MinReplicas, g.MaxReplicas})
	require.Len(t, l, 1)
	require.Equal(t, diag.Warning, l[0].Severity)
	require.Equal(t, "spec.scaling.replicas", l[0].Field)
	group := obj["spec"].(map[string]any)["rayClusterConfig"].(map[string]any)["workerGroupSpecs"].([]any)[0].(map[string]any)
	require.Contains(t, group, "replicas", "a zero count is written, not dropped")
}
func TestImagePin(t *testing.T) {
	req := request(t, "test-model", "1.7.0", base)
	req.Provider.Images = map[string]string{"vllm": "registry.example.com/ray-llm@sha256:abc"}
	_, rs, _ := renderReq(t, req)
	require.Equal(t, "registry.example.com/ray-llm@sha256:abc", head(rs).Image)
	require.Equal(t, "registry.example.com/ray-llm@sha256:abc", worker(rs, 0).Image)

	req = request(t, "test-model", "1.7.0", "model: {id: m}\nengine: {type: vllm, image: mine:v1}")
	req.Provider.Images = map[string]string{"vllm": "pinned:v0"}
	_, rs, _ = renderReq(t, req)
	require.Equal(t, "mine:v1", head(rs).Image, "the model's own image wins over the pin")
}

// TestServeConfig pins the Serve config byte for byte: the shape of
// KubeRay's Ray Serve LLM sample (ray-operator/config/samples/
// ray-service.llm-serve.yaml), one application whose builder is Ray Serve
// LLM's build_openai_app, which the rayproject/ray-llm images carry
// (upstream's `vllm_serve:deployment` is in none of them).
func TestServeConfig(t *testing.T) {
	_, rs, _ := render(t, "model: {id: Qwen/Qwen3-8B, servedName: qwen}\nengine: {type: vllm, contextLength: 8192}\nscaling: {replicas: 2}")
	require.Equal(t, `applications:
  - name: llm
    route_prefix: /
    import_path: ray.serve.llm:build_openai_app
    args:
      llm_configs:
        - model_loading_config:
            model_id: qwen
            model_source: Qwen/Qwen3-8B
          engine_kwargs:
            enable_prefix_caching: true
            max_model_len: 8192
          deployment_config:
            num_replicas: 2
`, rs.Spec.ServeConfigV2)
}

// TestSchemaAtEachRelease validates the output against the RayService
// schema of both ends of the supported range: 1.3.0 requires rayStartParams
// on every group, 1.7.0 requires rayClusterConfig.
func TestSchemaAtEachRelease(t *testing.T) {
	specs := map[string]string{
		"minimal":       base,
		"full":          "model: {id: m, servedName: s}\nengine: {type: vllm, contextLength: 8192, trustRemoteCode: true, args: {a: b}, extraArgs: [--x]}\nresources: {gpu: {count: 2, type: amd.com/gpu}, memory: 64Gi, cpu: \"8\"}\nscaling: {replicas: 2}\nenv: [{name: A, value: b}]\nsecrets: {huggingFaceToken: hf}\nnodeSelector: {a: b}\ntolerations: [{key: k, operator: Exists}]\npodTemplate: {metadata: {labels: {l: v}, annotations: {a: v}}}",
		"disaggregated": disagg,
		"scale to zero": base + "scaling: {replicas: 0}",
		"overrides":     base + "provider: {overrides: {spec: {rayClusterConfig: {headGroupSpec: {rayStartParams: {num-cpus: \"0\"}}}}}}",
	}
	for _, version := range []string{"1.3.0", "1.7.0"} {
		for name, spec := range specs {
			t.Run(version+" "+name, func(t *testing.T) {
				obj, _, _ := renderReq(t, request(t, "test-model", version, spec))
				require.Empty(t, schemacheck.CheckAtVersion(obj, version))
				for _, g := range obj["spec"].(map[string]any)["rayClusterConfig"].(map[string]any)["workerGroupSpecs"].([]any) {
					require.Equal(t, map[string]any{}, g.(map[string]any)["rayStartParams"], "rayStartParams {} is always written")
				}
			})
		}
	}
	t.Run("1.3.0 refuses a group without rayStartParams", func(t *testing.T) {
		obj, _, _ := render(t, base)
		delete(obj["spec"].(map[string]any)["rayClusterConfig"].(map[string]any)["workerGroupSpecs"].([]any)[0].(map[string]any), "rayStartParams")
		require.NotEmpty(t, schemacheck.CheckAtVersion(obj, "1.3.0"), "the schema check is not vacuous")
		require.Empty(t, schemacheck.CheckAtVersion(obj, "1.7.0"))
	})
}

func TestDeterministic(t *testing.T) {
	spec := "model: {id: m}\nengine: {type: vllm, args: {z: \"1\", a: \"2\", m: \"3\"}}\nenv: [{name: B, value: b}, {name: A, value: a}]\nnodeSelector: {z: a, a: z, m: m}\npodTemplate: {metadata: {labels: {z: a, a: z}}}"
	first, _, _ := render(t, spec)
	want, err := json.Marshal(first)
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		again, _, _ := render(t, spec)
		got, err := json.Marshal(again)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
}

// TestTensorParallelism is issue 36's report: Llama-3.3-70B on 4 GPUs
// rendered no tensor parallelism (as upstream), so vLLM loaded the model
// on one GPU and ran out of memory. The replica now shards over its pod's
// GPUs, in a placement group that keeps its GPU actors in that pod, with a
// memory-backed /dev/shm for NCCL.
func TestTensorParallelism(t *testing.T) {
	_, rs, _ := render(t, "model: {id: meta-llama/Llama-3.3-70B-Instruct}\nengine: {type: vllm}\nresources: {gpu: {count: 4}}")
	require.Equal(t, map[string]any{"enable_prefix_caching": true, "tensor_parallel_size": 4.0}, kwargs(t, rs))
	one := map[string]any{"GPU": 1.0}
	require.Equal(t, map[string]any{"bundles": []any{one, one, one, one}, "strategy": "STRICT_PACK"}, llm(t, rs)["placement_group_config"])
	pod := rs.Spec.RayClusterConfig.WorkerGroupSpecs[0].Template.Spec
	require.Equal(t, "/dev/shm", pod.Containers[0].VolumeMounts[0].MountPath)
	require.Equal(t, corev1.StorageMediumMemory, pod.Volumes[0].EmptyDir.Medium)
	require.Empty(t, rs.Spec.RayClusterConfig.HeadGroupSpec.Template.Spec.Volumes, "the head runs no GPU work")

	_, rs, _ = render(t, "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}")
	require.NotContains(t, llm(t, rs), "placement_group_config", "one GPU: Ray Serve LLM's default placement")
	require.NotContains(t, kwargs(t, rs), "tensor_parallel_size")
	require.Empty(t, rs.Spec.RayClusterConfig.WorkerGroupSpecs[0].Template.Spec.Volumes)
}

// TestTensorParallelismDisaggregated: the one Serve deployment may run in
// either worker group, so its replicas shard over the smaller group's
// GPUs.
func TestTensorParallelismDisaggregated(t *testing.T) {
	_, rs, _ := render(t, "model: {id: m}\nengine: {type: vllm}\nserving: {mode: disaggregated}\nscaling: {prefill: {replicas: 1, gpu: {count: 4}}, decode: {replicas: 1, gpu: {count: 2}}}")
	require.Equal(t, 2.0, kwargs(t, rs)["tensor_parallel_size"])
	for i := range 2 {
		require.Equal(t, "/dev/shm", worker(rs, i).VolumeMounts[0].MountPath)
	}
}

// TestParallelismContradicted: an explicit size that contradicts a
// replica's GPUs is an error at its field; one that agrees is rendered
// once, in the user's spelling.
func TestParallelismContradicted(t *testing.T) {
	l := Provider{}.Check(request(t, "test-model", "1.3.0", "model: {id: m}\nengine: {type: vllm, args: {tensor-parallel-size: \"2\"}}\nresources: {gpu: {count: 4}}")).Errors()
	require.Len(t, l, 1, "%v", l)
	require.Equal(t, "spec.engine.args.tensor-parallel-size", l[0].Field)
	require.Equal(t, `"tensor-parallel-size" sets the tensor parallel size to 2, which contradicts the 4 GPUs per pod: the tensor parallel size × the pipeline parallel size must be 4; leave both out for 4 × 1, or set both to sizes whose product is 4`, l[0].Message)

	_, rs, _ := render(t, "model: {id: m}\nengine: {type: vllm, extraArgs: [-tp, \"4\"]}\nresources: {gpu: {count: 4}}")
	require.Equal(t, map[string]any{"enable_prefix_caching": true, "tensor_parallel_size": 4.0}, kwargs(t, rs), "vLLM's short name becomes the field")
}

// TestReplicaPlacementAutoscaled: Ray Serve's autoscaling replaces
// num_replicas, and the placement group stays.
func TestReplicaPlacementAutoscaled(t *testing.T) {
	_, rs, _ := render(t, "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}\nscaling: {replicas: 1}")
	require.Contains(t, llm(t, rs), "placement_group_config")
	req := providertest.Request(providertest.Valid(t, "{name: test-model, namespace: default}", "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}"), hub.ProviderKubeRay)
	one, four, sixteen, delay := int32(1), int32(4), int32(16), int32(600)
	req.MD.Spec.Scaling = &hub.ScalingSpec{Autoscaling: &hub.AutoscalingSpec{Metric: hub.MetricRunningRequests, MinReplicas: &one, MaxReplicas: &four, Target: &sixteen, ScaleDownDelaySeconds: &delay}}
	var parsed map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(ServeConfig(req.MD, nil)), &parsed))
	c := parsed["applications"].([]any)[0].(map[string]any)["args"].(map[string]any)["llm_configs"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"autoscaling_config": map[string]any{"min_replicas": 1.0, "max_replicas": 4.0, "target_ongoing_requests": 16.0, "downscale_delay_s": 600.0}}, c["deployment_config"])
	require.Equal(t, "STRICT_PACK", c["placement_group_config"].(map[string]any)["strategy"])
}
