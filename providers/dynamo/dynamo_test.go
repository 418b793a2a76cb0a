package dynamo

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// Upstream §8 items 79–95, one case (or table row) per item; deliberate
// differences are named "difference: ...".

func TestObjectIdentity(t *testing.T) {
	cases := []struct {
		name           string
		opts           []opt
		want, notWant  string
		wantSidecarsOn bool
	}{
		{name: "item 79: aggregated vllm with a declared gateway gives Epp and VllmWorker, no Frontend", opts: []opt{withGateway(t)}, want: ServiceEpp, notWant: ServiceFrontend, wantSidecarsOn: true},
		{name: "item 79 difference: without a gateway in the capability file the standalone Frontend is rendered", want: ServiceFrontend, notWant: ServiceEpp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := renderSpec(t, base, tc.opts...)
			require.Equal(t, APIVersion, r.obj["apiVersion"])
			require.Equal(t, Kind, r.obj["kind"])
			require.Equal(t, "test-model", r.dgd.Metadata.Name)
			require.Equal(t, "default", r.dgd.Metadata.Namespace)
			require.Empty(t, r.dgd.Metadata.OwnerReferences, "no ownerReferences: the UID does not exist at render time")
			require.Nil(t, dig(r.obj, "metadata", "ownerReferences"))
			require.Equal(t, map[string]string{
				"airunway.ai/managed-by":       "airunway",
				"airunway.ai/model-deployment": "test-model",
				"airunway.ai/deployment":       "test-model",
				"airunway.ai/model-source":     "huggingface",
				"airunway.ai/engine-type":      "vllm",
				LabelModelID:                   "meta-llama-Llama-2-7b-chat-hf",
			}, r.dgd.Metadata.Labels)
			require.Equal(t, "test-model", r.dgd.Metadata.Annotations[hub.AnnotationGeneratedFrom])
			require.Equal(t, "vllm", r.dgd.Spec.BackendFramework)
			require.Contains(t, r.dgd.Spec.Services, tc.want)
			require.Contains(t, r.dgd.Spec.Services, ServiceWorker)
			require.NotContains(t, r.dgd.Spec.Services, tc.notWant)
			require.Len(t, r.dgd.Spec.Services, 2)
			require.Equal(t, tc.wantSidecarsOn, r.svc(t, ServiceWorker).FrontendSidecar != nil)
			require.Empty(t, r.others, "no storage, no PVC or Job")
		})
	}
}

func TestTopology(t *testing.T) {
	cases := []struct {
		name, spec string
		opts       []opt
		want       string
		warnField  string
	}{
		{name: "difference: gateway declared and not disabled gives Epp", spec: base, opts: []opt{withGateway(t)}, want: ServiceEpp},
		{name: "gateway.enabled false gives Frontend even with a declared gateway", spec: base + "gateway: {enabled: false}", opts: []opt{withGateway(t)}, want: ServiceFrontend},
		{name: "difference: gateway.enabled true without a declared gateway warns and gives Frontend", spec: base + "gateway: {enabled: true}", want: ServiceFrontend, warnField: "spec.gateway.enabled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := renderSpec(t, tc.spec, tc.opts...)
			require.Contains(t, r.dgd.Spec.Services, tc.want)
			require.Len(t, r.dgd.Spec.Services, 2)
			if tc.warnField != "" {
				require.Contains(t, warnings(r.l), tc.warnField)
			} else {
				require.Empty(t, warnings(r.l))
			}
		})
	}
}

func TestEppAndFrontend(t *testing.T) {
	t.Run("item 79: aggregated Epp config", func(t *testing.T) {
		r := renderSpec(t, base, withGateway(t))
		epp := r.svc(t, ServiceEpp)
		require.Equal(t, "epp", epp.ComponentType)
		require.Equal(t, int32(1), *epp.Replicas)
		require.Equal(t, "nvcr.io/nvidia/ai-dynamo/dynamo-frontend:1.1.1", epp.ExtraPodSpec.MainContainer.Image)
		require.Equal(t, []corev1.EnvVar{{Name: "DYN_DECODE_FALLBACK", Value: "true"}, {Name: "DYN_ENFORCE_DISAGG", Value: "false"}}, epp.ExtraPodSpec.MainContainer.Env)
		cfg := epp.EppConfig.Config
		require.Equal(t, []string{"disagg-profile-handler", "label-filter", "max-score-picker", "dyn-decode-scorer"}, pluginTypes(cfg))
		require.Equal(t, map[string]any{"label": "nvidia.com/dynamo-sub-component-type", "validValues": []any{"decode"}, "allowsNoLabel": true}, cfg.Plugins[1].Parameters)
		require.Equal(t, []eppProfile{{Name: "decode", Plugins: []eppPluginRef{{"decode-filter", 1}, {"dyn-decode", 1}, {"picker", 1}}}}, cfg.SchedulingProfiles)
		side := r.svc(t, ServiceWorker).FrontendSidecar
		require.Equal(t, &sidecar{Image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.1", Args: []string{"-m", "dynamo.frontend", "--router-mode", "direct"}}, side)
	})
	t.Run("item 80: disaggregated Epp config and sidecars", func(t *testing.T) {
		r := renderSpec(t, disagg, withGateway(t))
		epp := r.svc(t, ServiceEpp)
		require.Equal(t, []corev1.EnvVar{{Name: "DYN_DECODE_FALLBACK", Value: "false"}, {Name: "DYN_ENFORCE_DISAGG", Value: "true"}}, epp.ExtraPodSpec.MainContainer.Env)
		cfg := epp.EppConfig.Config
		require.Equal(t, []string{"disagg-profile-handler", "label-filter", "label-filter", "max-score-picker", "dyn-prefill-scorer", "dyn-decode-scorer"}, pluginTypes(cfg))
		require.Equal(t, "prefill-filter", cfg.Plugins[1].Name)
		require.Equal(t, false, cfg.Plugins[1].Parameters["allowsNoLabel"])
		require.Equal(t, false, cfg.Plugins[2].Parameters["allowsNoLabel"])
		require.Equal(t, []string{"prefill", "decode"}, []string{cfg.SchedulingProfiles[0].Name, cfg.SchedulingProfiles[1].Name})
		require.Equal(t, []eppPluginRef{{"prefill-filter", 1}, {"dyn-prefill", 1}, {"picker", 1}}, cfg.SchedulingProfiles[0].Plugins)
		for _, w := range []string{ServicePrefillWorker, ServiceDecodeWorker} {
			require.Equal(t, []string{"-m", "dynamo.frontend"}, r.svc(t, w).FrontendSidecar.Args, w)
		}
	})
	t.Run("Frontend defaults", func(t *testing.T) {
		r := renderSpec(t, base)
		f := r.svc(t, ServiceFrontend)
		require.Equal(t, "frontend", f.ComponentType)
		require.Equal(t, int32(1), *f.Replicas)
		require.Equal(t, &resources{Requests: &resourceItem{CPU: "2", Memory: "4Gi"}}, f.Resources)
		require.Equal(t, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.1", f.ExtraPodSpec.MainContainer.Image)
		require.Equal(t, []corev1.EnvVar{{Name: "DYN_ROUTER_MODE", Value: "round-robin"}}, f.ExtraPodSpec.MainContainer.Env)
		require.Nil(t, f.VolumeMounts)
		require.Nil(t, f.ExtraPodSpec.NodeSelector)
		require.Nil(t, r.svc(t, ServiceWorker).FrontendSidecar, "no sidecars without the Epp")
	})
}

func pluginTypes(c eppPluginConfig) []string {
	var out []string
	for _, p := range c.Plugins {
		out = append(out, p.Type)
	}
	return out
}

const disagg = "model: {id: meta-llama/Llama-2-7b-chat-hf}\nprovider: {name: dynamo}\nengine: {type: vllm}\nserving: {mode: disaggregated}\n" +
	"scaling: {prefill: {replicas: 2, gpu: {count: 2}, memory: 64Gi}, decode: {replicas: 3, gpu: {count: 1}, memory: 32Gi}}\n"

func TestDisaggregated(t *testing.T) {
	t.Run("item 80: prefill and decode workers sized by their components", func(t *testing.T) {
		r := renderSpec(t, disagg)
		require.NotContains(t, r.dgd.Spec.Services, ServiceWorker)
		p, d := r.svc(t, ServicePrefillWorker), r.svc(t, ServiceDecodeWorker)
		require.Equal(t, "worker", p.ComponentType)
		require.Equal(t, "prefill", p.SubComponentType)
		require.Equal(t, int32(2), *p.Replicas)
		require.Equal(t, &resources{Limits: &resourceItem{GPU: "2", Memory: "64Gi"}, Requests: &resourceItem{GPU: "2"}}, p.Resources)
		require.Equal(t, "decode", d.SubComponentType)
		require.Equal(t, int32(3), *d.Replicas)
		require.Equal(t, &resources{Limits: &resourceItem{GPU: "1", Memory: "32Gi"}, Requests: &resourceItem{GPU: "1"}}, d.Resources)
	})
	t.Run("item 89: role flags, NIXL kv-transfer-config and side-channel host for vllm", func(t *testing.T) {
		r := renderSpec(t, disagg)
		for role, name := range map[string]string{"prefill": ServicePrefillWorker, "decode": ServiceDecodeWorker} {
			c := r.svc(t, name).ExtraPodSpec.MainContainer
			var tp []string
			if role == "prefill" { // 2 GPUs per prefill pod
				tp = []string{"--tensor-parallel-size", "2"}
			}
			require.Equal(t, append(append([]string{"--model", "meta-llama/Llama-2-7b-chat-hf", "--enable-prefix-caching"}, tp...), "--disaggregation-mode", role,
				"--kv-transfer-config", `{"kv_connector":"NixlConnector","kv_role":"kv_both"}`), c.Args)
			require.Equal(t, []corev1.EnvVar{{Name: "VLLM_NIXL_SIDE_CHANNEL_HOST", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}, c.Env)
		}
	})
	t.Run("item 89: aggregated workers have no side-channel host", func(t *testing.T) {
		r := renderSpec(t, base)
		require.Empty(t, r.svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Env)
	})
	t.Run("item 89: sglang disaggregated has role flags but no NIXL settings", func(t *testing.T) {
		r := renderSpec(t, disagg+"engine: {type: sglang}")
		c := r.svc(t, ServicePrefillWorker).ExtraPodSpec.MainContainer
		require.Equal(t, []string{"--model-path", "meta-llama/Llama-2-7b-chat-hf", "--enable-prefix-caching", "--tp-size", "2", "--disaggregation-mode", "prefill"}, c.Args)
		require.Empty(t, c.Env)
	})
	t.Run("component replicas 0 pass through verbatim", func(t *testing.T) {
		r := renderSpec(t, "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: vllm}\nserving: {mode: disaggregated}\nscaling: {prefill: {replicas: 0, gpu: {count: 1}}, decode: {gpu: {count: 1}}}")
		require.Equal(t, int32(0), *r.svc(t, ServicePrefillWorker).Replicas)
		require.Equal(t, 0.0, dig(r.obj, "spec", "services", ServicePrefillWorker, "replicas"), "replicas: 0 is rendered, not omitted")
	})
}

func TestBackendFramework(t *testing.T) {
	for _, tc := range []struct{ engine, want string }{
		{"vllm", "vllm"}, {"sglang", "sglang"}, {"trtllm", "trtllm"}, {"custom-engine", "custom-engine"},
	} {
		t.Run("item 81: "+tc.engine, func(t *testing.T) {
			r := renderSpec(t, base, withEngine(tc.engine))
			require.Equal(t, tc.want, r.dgd.Spec.BackendFramework)
		})
	}
}

func TestImages(t *testing.T) {
	cases := []struct {
		name, spec, engine string
		opts               []opt
		worker, sidecar    string
		epp                string
	}{
		{name: "item 82: legacy spec.image is used", spec: base + "image: legacy:v1", engine: "vllm", worker: "legacy:v1"},
		{name: "item 82: engine.image wins over spec.image", spec: "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: vllm, image: engine:v2}\nresources: {gpu: {count: 1}}", engine: "vllm", worker: "engine:v2"},
		{name: "item 82: vllm default", spec: base, engine: "vllm", worker: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.1"},
		{name: "item 82: sglang default", spec: base, engine: "sglang", worker: "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.1.1"},
		{name: "item 82: trtllm default", spec: base, engine: "trtllm", worker: "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.1.1"},
		{name: "item 82: unknown engine falls back to vllm-runtime", spec: base, engine: "other", worker: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.1"},
		{name: "difference: tags follow the declared Dynamo release", spec: base, engine: "sglang", opts: []opt{withVersion("v1.3.0", nil)},
			worker: "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.3.0"},
		{name: "difference: the capability file's engine pin wins over the default", spec: base, engine: "sglang",
			opts:   []opt{withVersion("1.2.0", map[string]string{"sglang": "mirror/sglang-runtime:1.2.0"})},
			worker: "mirror/sglang-runtime:1.2.0"},
		{name: "difference: engine.image wins over the pin", spec: base + "image: mine:v1", engine: "sglang",
			opts:   []opt{withVersion("1.2.0", map[string]string{"sglang": "mirror/sglang-runtime:1.2.0"})},
			worker: "mine:v1"},
		{name: "difference: the gateway sidecar and Epp follow the release; the vllm pin applies to the sidecar", spec: base, engine: "sglang",
			opts:   []opt{withGateway(t), withVersion("1.2.0", map[string]string{"vllm": "mirror/vllm-runtime:1.2.0"})},
			worker: "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.2.0", sidecar: "mirror/vllm-runtime:1.2.0", epp: "nvcr.io/nvidia/ai-dynamo/dynamo-frontend:1.2.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := renderSpec(t, tc.spec, append([]opt{withEngine(tc.engine)}, tc.opts...)...)
			w := r.svc(t, ServiceWorker)
			require.Equal(t, tc.worker, w.ExtraPodSpec.MainContainer.Image)
			if tc.sidecar != "" {
				require.Equal(t, tc.sidecar, w.FrontendSidecar.Image)
				require.Equal(t, tc.epp, r.svc(t, ServiceEpp).ExtraPodSpec.MainContainer.Image)
			} else {
				require.Equal(t, tc.worker, r.svc(t, ServiceFrontend).ExtraPodSpec.MainContainer.Image, "the Frontend runs the worker image")
			}
		})
	}
}

func TestArgs(t *testing.T) {
	const id = "meta-llama/Llama-2-7b-chat-hf"
	noEngineDefaults := "model: {id: " + id + "}\nprovider: {name: dynamo}\nresources: {gpu: {count: 1}}\n"
	cases := []struct {
		name, spec, engine string
		want               []string
	}{
		{name: "item 83: vllm", spec: noEngineDefaults, engine: "vllm", want: []string{"--model", id}},
		{name: "item 83: sglang with context length", spec: noEngineDefaults + "engine: {contextLength: 4096, enablePrefixCaching: true}", engine: "sglang",
			want: []string{"--model-path", id, "--context-length", "4096", "--enable-prefix-caching"}},
		{name: "item 83: vllm with context length", spec: noEngineDefaults + "engine: {contextLength: 4096}", engine: "vllm",
			want: []string{"--model", id, "--max-model-len", "4096", "--enable-prefix-caching"}},
		{name: "item 83: trtllm ignores context length", spec: noEngineDefaults + "engine: {contextLength: 4096}", engine: "trtllm", want: []string{"--model-path", id}},
		{name: "item 84: served name and trust remote code (vllm)", spec: "model: {id: " + id + ", servedName: my-model}\nprovider: {name: dynamo}\nengine: {type: vllm, trustRemoteCode: true}\nresources: {gpu: {count: 1}}", engine: "vllm",
			want: []string{"--model", id, "--served-model-name", "my-model", "--trust-remote-code", "--enable-prefix-caching"}},
		{name: "item 84: trust remote code, prefix caching and eager (sglang)", spec: noEngineDefaults + "engine: {trustRemoteCode: true, enforceEager: true}", engine: "sglang",
			want: []string{"--model-path", id, "--trust-remote-code", "--enable-prefix-caching", "--enforce-eager"}},
		{name: "item 84: none of them for trtllm", spec: noEngineDefaults + "engine: {trustRemoteCode: true, enforceEager: true, enablePrefixCaching: true}", engine: "trtllm",
			want: []string{"--model-path", id}},
		{name: "item 86: custom args sorted by key, empty value is a bare flag", spec: noEngineDefaults + "engine: {enablePrefixCaching: false, args: {zeta: \"1\", alpha: \"\", mid: x}}", engine: "vllm",
			want: []string{"--model", id, "--no-enable-prefix-caching", "--alpha", "--mid", "x", "--zeta", "1"}},
		{name: "item 86: connector dropped for vllm", spec: noEngineDefaults + "engine: {args: {connector: nixl, max-num-seqs: \"8\"}}", engine: "vllm",
			want: []string{"--model", id, "--enable-prefix-caching", "--max-num-seqs", "8"}},
		{name: "item 86: connector kept for sglang", spec: noEngineDefaults + "engine: {args: {connector: nixl}}", engine: "sglang",
			want: []string{"--model-path", id, "--enable-prefix-caching", "--connector", "nixl"}},
		{name: "difference: explicit enablePrefixCaching false disables it (vllm)", spec: noEngineDefaults + "engine: {enablePrefixCaching: false}", engine: "vllm",
			want: []string{"--model", id, "--no-enable-prefix-caching"}},
		{name: "difference: explicit enablePrefixCaching false disables the radix cache (sglang)", spec: noEngineDefaults + "engine: {enablePrefixCaching: false}", engine: "sglang",
			want: []string{"--model-path", id, "--disable-radix-cache"}},
		{name: "difference: extraArgs come last, verbatim", spec: noEngineDefaults + "engine: {args: {b: \"2\"}, extraArgs: [--max-num-seqs=64, --enable-chunked-prefill]}", engine: "vllm",
			want: []string{"--model", id, "--enable-prefix-caching", "--b", "2", "--max-num-seqs=64", "--enable-chunked-prefill"}},
		{name: "difference: custom source without model.id has no empty --model", spec: "model: {source: custom}\nprovider: {name: dynamo}\nresources: {gpu: {count: 1}}\nengine: {args: {model: /models/x}}", engine: "vllm",
			want: []string{"--enable-prefix-caching", "--model", "/models/x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := renderSpec(t, tc.spec, withEngine(tc.engine))
			require.Equal(t, tc.want, r.svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Args)
		})
	}
	t.Run("difference: extraArgs follow the role flags in disaggregated mode", func(t *testing.T) {
		r := renderSpec(t, disagg+"engine: {type: vllm, extraArgs: [--block-size=32]}")
		args := r.svc(t, ServiceDecodeWorker).ExtraPodSpec.MainContainer.Args
		require.Equal(t, "--block-size=32", args[len(args)-1])
		require.Equal(t, "--kv-transfer-config", args[len(args)-3])
	})
	t.Run("item 86: args are deterministic", func(t *testing.T) {
		spec := noEngineDefaults + "engine: {args: {e: \"5\", d: \"4\", c: \"3\", b: \"2\", a: \"1\"}}"
		first := renderSpec(t, spec).svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Args
		for i := 0; i < 20; i++ {
			require.Equal(t, first, renderSpec(t, spec).svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Args)
		}
	})
}

func TestArgKeys(t *testing.T) {
	for _, key := range []string{"", "key;drop", "a b", "foo$bar", "x&y", "a|b", "a`b", "-leading"} {
		t.Run("item 86: invalid key "+key, func(t *testing.T) {
			req := request(t, "", base)
			req.MD.Spec.Engine.Args = map[string]string{key: "v"}
			l := Provider{}.Check(req).Errors()
			require.Len(t, l, 1, "%v", l)
			require.Equal(t, "spec.engine.args", l[0].Field)
			require.Contains(t, l[0].Message, "invalid engine arg key")
		})
	}
	for _, key := range []string{"tensor-parallel-size", "enable_feature", "maxBatchSize", "abc123"} {
		t.Run("item 86: valid key "+key, func(t *testing.T) {
			req := request(t, "", base)
			req.MD.Spec.Engine.Args = map[string]string{key: "1"} // base has 1 GPU
			require.Empty(t, Provider{}.Check(req))
		})
	}
}

// LoRA adapters: the workers run vLLM with room for them and carry the
// modelRef the operator discovers them by; one DynamoModel per adapter, whose
// baseModelName is that modelRef, makes the operator load it.
func TestAdapters(t *testing.T) {
	// Set after decoding: providertest decodes v1alpha1, which has no
	// adapters. Dynamo 1.4 loads hf:// adapters on both roles.
	var adapters opt = func(req *providers.Request) {
		req.MD.Spec.Adapters = []hub.Adapter{{Name: "sql", Source: "hf://org/sql-lora"}, {Name: "chat", Source: "hf://org/chat-lora"}}
	}
	release := func(v string) opt { return withVersion(v, nil) }
	t.Run("aggregated", func(t *testing.T) {
		r := renderSpec(t, base, adapters, release("1.4.0"))
		w := r.svc(t, ServiceWorker)
		require.Equal(t, &modelReference{Name: r.dgd.Metadata.Name}, w.ModelRef)
		require.Equal(t, []string{"--model", "meta-llama/Llama-2-7b-chat-hf", "--enable-prefix-caching", "--enable-lora", "--max-loras", "2", "--max-cpu-loras", "2"},
			w.ExtraPodSpec.MainContainer.Args)
		require.Contains(t, w.ExtraPodSpec.MainContainer.Env, corev1.EnvVar{Name: "DYN_LORA_ENABLED", Value: "true"})
		require.Len(t, w.ExtraPodMetadata.Annotations[AnnotationAdapters], 16)
		f := r.svc(t, ServiceFrontend)
		require.Nil(t, f.ModelRef, "the frontend serves no model itself")
		require.NotContains(t, f.ExtraPodMetadata.Annotations, AnnotationAdapters, "an adapter change must not restart the frontend")
		require.Len(t, r.others, 2)
		for i, name := range []string{"sql", "chat"} {
			m := r.others[i]
			require.Equal(t, ModelKind, m["kind"])
			require.Equal(t, APIVersion, m["apiVersion"])
			require.Equal(t, r.dgd.Metadata.Name+"-"+name, dig(m, "metadata", "name"))
			require.Equal(t, r.dgd.Metadata.Namespace, dig(m, "metadata", "namespace"))
			require.Equal(t, r.dgd.Metadata.Labels[LabelModelID], dig(m, "metadata", "labels", LabelModelID))
			require.Equal(t, map[string]any{"modelName": name, "baseModelName": r.dgd.Metadata.Name, "modelType": "lora",
				"source": map[string]any{"uri": "hf://org/" + name + "-lora"}}, m["spec"])
		}
	})
	t.Run("a changed source rolls the workers", func(t *testing.T) {
		digest := func(source string) string {
			r := renderSpec(t, base, adapters, release("1.4.0"), func(req *providers.Request) { req.MD.Spec.Adapters[0].Source = source })
			return r.svc(t, ServiceWorker).ExtraPodMetadata.Annotations[AnnotationAdapters]
		}
		require.Equal(t, digest("hf://org/sql-lora"), digest("hf://org/sql-lora"))
		require.NotEqual(t, digest("hf://org/sql-lora"), digest("hf://org/sql-lora-v2"))
	})
	t.Run("disaggregated: both roles load them", func(t *testing.T) {
		r := renderSpec(t, "model: {id: Qwen/Qwen3-0.6B}\nprovider: {name: dynamo}\nengine: {type: vllm}\n"+
			"serving: {mode: disaggregated}\nscaling: {prefill: {replicas: 1, gpu: {count: 1}}, decode: {replicas: 1, gpu: {count: 1}}}\n", adapters, release("1.4.0"))
		for _, name := range []string{ServicePrefillWorker, ServiceDecodeWorker} {
			w := r.svc(t, name)
			require.Equal(t, &modelReference{Name: r.dgd.Metadata.Name}, w.ModelRef, name)
			require.Subset(t, w.ExtraPodSpec.MainContainer.Args, []string{"--enable-lora", "--max-loras", "--max-cpu-loras"}, name)
		}
	})
	t.Run("the user's own flags and variable win", func(t *testing.T) {
		r := renderSpec(t, "model: {id: m/m}\nprovider: {name: dynamo}\nengine: {type: vllm, args: {max-loras: \"8\"}, extraArgs: [--max-lora-rank, \"64\"]}\n"+
			"resources: {gpu: {count: 1}}\nenv: [{name: DYN_LORA_ENABLED, value: \"1\"}]\n", adapters, release("1.4.0"))
		main := r.svc(t, ServiceWorker).ExtraPodSpec.MainContainer
		require.Equal(t, []string{"--model", "m/m", "--enable-prefix-caching", "--enable-lora", "--max-loras", "8", "--max-lora-rank", "64"}, main.Args)
		require.Equal(t, []corev1.EnvVar{{Name: "DYN_LORA_ENABLED", Value: "1"}}, main.Env)
	})
	t.Run("no adapters, no trace", func(t *testing.T) {
		r := renderSpec(t, base)
		w := r.svc(t, ServiceWorker)
		require.Nil(t, w.ModelRef)
		require.NotContains(t, w.ExtraPodMetadata.Annotations, AnnotationAdapters)
		require.Empty(t, r.others)
	})
	disaggregated := "model: {id: m/m}\nprovider: {name: dynamo}\nengine: {type: vllm}\nserving: {mode: disaggregated}\n" +
		"scaling: {prefill: {replicas: 1, gpu: {count: 1}}, decode: {replicas: 1, gpu: {count: 1}}}\n"
	for _, tc := range []struct {
		name, meta, spec, release, field, want string
	}{
		{name: "sglang", spec: "model: {id: m/m}\nprovider: {name: dynamo}\nengine: {type: sglang}\nresources: {gpu: {count: 1}}\n", release: "1.4.0",
			want: `are loaded by Dynamo's vllm backend only, not by "sglang"`},
		{name: "mocker", meta: mockerMeta, spec: base, release: "1.4.0", want: "are not loaded by Dynamo's mocker backend"},
		{name: "Dynamo 1.2: no hf:// sources", spec: base, release: "1.2.1",
			want: `need Dynamo 1.3.0 or later, whose workers fetch ` + "`hf://`" + ` adapters; the capability file declares "1.2.1"`},
		{name: "Dynamo 1.3 disaggregated: prefill loads none", spec: disaggregated, release: "1.3.0",
			want: `on disaggregated serving need Dynamo 1.4.0 or later, whose prefill workers load adapters too; the capability file declares "1.3.0"`},
		{name: "LoRA switched off", spec: base + "env: [{name: DYN_LORA_ENABLED, value: \"false\"}]\n", release: "1.4.0", field: "spec.env[0]",
			want: `DYN_LORA_ENABLED is "false", which switches the workers' LoRA support off`},
	} {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			l := Provider{}.Check(request(t, tc.meta, tc.spec, adapters, release(tc.release))).Errors()
			require.Len(t, l, 1, "%v", l)
			field := tc.field
			if field == "" {
				field = "spec.adapters"
			}
			require.Equal(t, field, l[0].Field)
			require.Contains(t, l[0].Message, tc.want)
		})
	}
	t.Run("Dynamo 1.3 aggregated is enough", func(t *testing.T) {
		require.Empty(t, Provider{}.Check(request(t, "", base, adapters, release("1.3.0"))).Errors())
	})
}

func TestCommands(t *testing.T) {
	for _, e := range []string{"vllm", "sglang", "trtllm"} {
		t.Run("item 85: "+e, func(t *testing.T) {
			r := renderSpec(t, base, withEngine(e))
			require.Equal(t, []string{"python3", "-m", "dynamo." + e}, r.svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Command)
		})
	}
}

func TestResources(t *testing.T) {
	cases := []struct {
		name, resources string
		want            *resources
	}{
		{name: "item 87: gpu 4 in limits and requests", resources: "resources: {gpu: {count: 4}}", want: &resources{Limits: &resourceItem{GPU: "4"}, Requests: &resourceItem{GPU: "4"}}},
		{name: "item 87: memory and cpu are limits only", resources: "resources: {gpu: {count: 1}, memory: 32Gi, cpu: \"8\"}",
			want: &resources{Limits: &resourceItem{GPU: "1", Memory: "32Gi", CPU: "8"}, Requests: &resourceItem{GPU: "1"}}},
		{name: "item 87 difference: gpu type amd.com/gpu keeps key gpu and names the resource in gpuType", resources: "resources: {gpu: {count: 2, type: amd.com/gpu}}",
			want: &resources{Limits: &resourceItem{GPU: "2", GPUType: "amd.com/gpu"}, Requests: &resourceItem{GPU: "2", GPUType: "amd.com/gpu"}}},
		{name: "item 87: the default gpu type is not spelled out", resources: "resources: {gpu: {count: 2, type: nvidia.com/gpu}}",
			want: &resources{Limits: &resourceItem{GPU: "2"}, Requests: &resourceItem{GPU: "2"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := renderSpec(t, "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: vllm}\n"+tc.resources)
			require.Equal(t, tc.want, r.svc(t, ServiceWorker).Resources)
		})
	}
	t.Run("item 87: gpu 0 renders no gpu key; empty limits and requests are omitted", func(t *testing.T) {
		req := request(t, "", base)
		zero := int32(0)
		req.MD.Spec.Resources.GPU.Count = &zero // past Check, as upstream's transformer test does
		r := render(t, req)
		require.Nil(t, r.svc(t, ServiceWorker).Resources)
		require.Nil(t, dig(r.obj, "spec", "services", ServiceWorker, "resources"))
	})
	t.Run("item 87: nil resources", func(t *testing.T) {
		req := request(t, "", base)
		req.MD.Spec.Resources = nil
		require.Nil(t, render(t, req).svc(t, ServiceWorker).Resources)
	})
	t.Run("difference: disaggregated gpu type", func(t *testing.T) {
		r := renderSpec(t, "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: vllm}\nserving: {mode: disaggregated}\nscaling: {prefill: {gpu: {count: 1, type: amd.com/gpu}}, decode: {gpu: {count: 1}}}")
		require.Equal(t, "amd.com/gpu", r.svc(t, ServicePrefillWorker).Resources.Limits.GPUType)
		require.Empty(t, r.svc(t, ServiceDecodeWorker).Resources.Limits.GPUType)
	})
}

func TestHFSecret(t *testing.T) {
	t.Run("item 88: envFromSecret on the aggregated worker and the Frontend", func(t *testing.T) {
		r := renderSpec(t, base+"secrets: {huggingFaceToken: hf-secret}")
		require.Equal(t, "hf-secret", r.svc(t, ServiceWorker).EnvFromSecret)
		require.Equal(t, "hf-secret", r.svc(t, ServiceFrontend).EnvFromSecret)
	})
	t.Run("item 88: envFromSecret on prefill and decode workers and their sidecars", func(t *testing.T) {
		r := renderSpec(t, disagg+"secrets: {huggingFaceToken: hf-secret}", withGateway(t))
		for _, w := range []string{ServicePrefillWorker, ServiceDecodeWorker} {
			require.Equal(t, "hf-secret", r.svc(t, w).EnvFromSecret)
			require.Equal(t, "hf-secret", r.svc(t, w).FrontendSidecar.EnvFromSecret)
		}
		require.Empty(t, r.svc(t, ServiceEpp).EnvFromSecret)
	})
}

func TestScheduling(t *testing.T) {
	t.Run("item 90: nodeSelector is copied into workers only", func(t *testing.T) {
		req := request(t, "", base+"nodeSelector: {gpu-type: a100}")
		r := render(t, req)
		req.MD.Spec.NodeSelector["gpu-type"] = "changed"
		require.Equal(t, map[string]string{"gpu-type": "a100"}, r.svc(t, ServiceWorker).ExtraPodSpec.NodeSelector)
		require.Equal(t, "a100", dig(r.obj, "spec", "services", ServiceWorker, "extraPodSpec", "nodeSelector", "gpu-type"), "later changes to the MD do not leak")
		require.Nil(t, r.svc(t, ServiceFrontend).ExtraPodSpec.NodeSelector)
	})
	t.Run("item 90: toleration with value and seconds", func(t *testing.T) {
		r := renderSpec(t, base+"tolerations: [{key: nvidia.com/gpu, operator: Equal, value: \"true\", effect: NoExecute, tolerationSeconds: 300}]")
		require.Equal(t, map[string]any{"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoExecute", "tolerationSeconds": 300.0},
			dig(r.obj, "spec", "services", ServiceWorker, "extraPodSpec", "tolerations", 0))
		require.Nil(t, dig(r.obj, "spec", "services", ServiceFrontend, "extraPodSpec", "tolerations"))
	})
	t.Run("item 90: disaggregated workers get both", func(t *testing.T) {
		r := renderSpec(t, disagg+"nodeSelector: {a: b}\ntolerations: [{key: k, operator: Exists}]")
		for _, w := range []string{ServicePrefillWorker, ServiceDecodeWorker} {
			require.Equal(t, map[string]string{"a": "b"}, r.svc(t, w).ExtraPodSpec.NodeSelector)
			require.Equal(t, []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}, r.svc(t, w).ExtraPodSpec.Tolerations)
		}
	})
}

func TestSanitizeLabelValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"simple", "simple"},
		{"with/slashes", "with-slashes"},
		{"-leading", "leading"},
		{"trailing-", "trailing"},
		{"", ""},
		{"this-is-a-very-long-label-value-that-exceeds-the-sixty-three-character-limit", "this-is-a-very-long-label-value-that-exceeds-the-sixty-three-ch"},
		{"meta-llama/Llama-2-7b-chat-hf", "meta-llama-Llama-2-7b-chat-hf"},
	} {
		t.Run("item 91: "+tc.in, func(t *testing.T) {
			require.Equal(t, tc.want, SanitizeLabelValue(tc.in))
		})
	}
	t.Run("difference: no model-id label for a custom model without id", func(t *testing.T) {
		r := renderSpec(t, "model: {source: custom}\nprovider: {name: dynamo}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}")
		require.NotContains(t, r.dgd.Metadata.Labels, LabelModelID)
	})
}

func TestOverrides(t *testing.T) {
	t.Run("item 92: arbitrary fields merge; typed routerMode is consumed, not merged", func(t *testing.T) {
		r := renderSpec(t, base+`provider: {name: dynamo, overrides: {routerMode: kv, spec: {customField: customValue}}}`)
		require.Equal(t, "customValue", dig(r.obj, "spec", "customField"))
		require.Equal(t, "vllm", dig(r.obj, "spec", "backendFramework"))
		require.Nil(t, r.obj["routerMode"], "difference: typed keys are not merged into the root")
		require.Equal(t, []corev1.EnvVar{{Name: "DYN_ROUTER_MODE", Value: "kv"}}, r.svc(t, ServiceFrontend).ExtraPodSpec.MainContainer.Env)
	})
	t.Run("item 92: services can be overwritten; generated fields survive", func(t *testing.T) {
		r := render(t, request(t, "", base, withOverrides(`{"spec":{"services":{"VllmWorker":{"replicas":3}}}}`)))
		require.Equal(t, 3.0, dig(r.obj, "spec", "services", ServiceWorker, "replicas"))
		require.Equal(t, "worker", dig(r.obj, "spec", "services", ServiceWorker, "componentType"))
	})
	t.Run("multinode through overrides", func(t *testing.T) {
		r := renderSpec(t, base+`provider: {name: dynamo, overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: 2}}}}}}`)
		require.Equal(t, 2.0, dig(r.obj, "spec", "services", ServiceWorker, "multinode", "nodeCount"))
	})
	t.Run("difference: null deletes", func(t *testing.T) {
		r := renderSpec(t, base+"nodeSelector: {a: b}\nprovider: {name: dynamo, overrides: {spec: {services: {VllmWorker: {extraPodSpec: {nodeSelector: null}}}}}}")
		require.Nil(t, dig(r.obj, "spec", "services", ServiceWorker, "extraPodSpec", "nodeSelector"))
		require.NotNil(t, dig(r.obj, "spec", "services", ServiceWorker, "extraPodSpec", "mainContainer"))
	})
	t.Run("typed frontend and epp settings", func(t *testing.T) {
		r := render(t, request(t, "", base, withOverrides(`{"frontend":{"replicas":2,"resources":{"cpu":"4","memory":"8Gi"}}}`)))
		f := r.svc(t, ServiceFrontend)
		require.Equal(t, int32(2), *f.Replicas)
		require.Equal(t, &resourceItem{CPU: "4", Memory: "8Gi"}, f.Resources.Requests)
		require.Nil(t, r.obj["frontend"])

		r = render(t, request(t, "", base, withGateway(t), withOverrides(`{"epp":{"replicas":2,"image":"my/epp:1"}}`)))
		e := r.svc(t, ServiceEpp)
		require.Equal(t, int32(2), *e.Replicas)
		require.Equal(t, "my/epp:1", e.ExtraPodSpec.MainContainer.Image)
		require.Nil(t, r.obj["epp"])
	})
	t.Run("difference: typed overrides for an absent component warn", func(t *testing.T) {
		r := renderSpec(t, base+`provider: {name: dynamo, overrides: {routerMode: kv, frontend: {}}}`, withGateway(t))
		require.Contains(t, warnings(r.l), "spec.provider.overrides.routerMode")
		require.Contains(t, warnings(r.l), "spec.provider.overrides.frontend")
		r = renderSpec(t, base+`provider: {name: dynamo, overrides: {epp: {image: x}}}`)
		require.Contains(t, warnings(r.l), "spec.provider.overrides.epp")
	})
	for _, tc := range []struct{ name, overrides, field, msg string }{
		{"difference: unknown key under frontend", `{"frontend":{"image":"x"}}`, "spec.provider.overrides.frontend", `unknown field "image" (supported: replicas, resources.cpu, resources.memory)`},
		{"difference: unknown key under epp", `{"epp":{"imag":"x"}}`, "spec.provider.overrides.epp", `unknown field "imag"`},
		{"routerMode must be a string", `{"routerMode":3}`, "spec.provider.overrides.routerMode", "non-empty string"},
		{"metadata refused", `{"metadata":{"name":"x"}}`, "spec.provider.overrides", `overriding "metadata" is not allowed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, l := Provider{}.Render(request(t, "", base, withOverrides(tc.overrides)))
			errs := l.Errors()
			require.Len(t, errs, 1, "%v", l)
			require.Equal(t, tc.field, errs[0].Field)
			require.Contains(t, errs[0].Message, tc.msg)
		})
	}
}

func TestEnvAndPodMetadata(t *testing.T) {
	t.Run("difference: spec.env reaches the workers, plaintext HF_TOKEN gives way to the Secret", func(t *testing.T) {
		r := renderSpec(t, base+"secrets: {huggingFaceToken: hf}\nenv: [{name: FOO, value: bar}, {name: HF_TOKEN, value: plain}, {name: POD, value: x, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]\n"+
			"model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, claimName: pvc}]}}")
		env := r.svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Env
		require.Equal(t, []string{"FOO", "POD", "HF_HOME"}, envNames(env))
		require.Empty(t, env[1].Value, "valueFrom wins over value")
		require.Contains(t, warnings(r.l)["spec.env[1]"], `HF_TOKEN comes from Secret "hf"`)
		require.Equal(t, []corev1.EnvVar{{Name: "DYN_ROUTER_MODE", Value: "round-robin"}}, r.svc(t, ServiceFrontend).ExtraPodSpec.MainContainer.Env, "env is for the model server")
	})
	t.Run("difference: a user NIXL host wins", func(t *testing.T) {
		r := renderSpec(t, disagg+"env: [{name: VLLM_NIXL_SIDE_CHANNEL_HOST, value: 10.0.0.1}]")
		require.Equal(t, []corev1.EnvVar{{Name: "VLLM_NIXL_SIDE_CHANNEL_HOST", Value: "10.0.0.1"}}, r.svc(t, ServiceDecodeWorker).ExtraPodSpec.MainContainer.Env)
	})
	t.Run("difference: podTemplate metadata and the model-deployment label on every pod", func(t *testing.T) {
		r := renderSpec(t, base+"podTemplate: {metadata: {labels: {team: ml, airunway.ai/model-deployment: hijack}, annotations: {prometheus.io/scrape: \"true\"}}}", withGateway(t))
		for _, name := range []string{ServiceEpp, ServiceWorker} {
			require.Equal(t, &podMetadata{
				Labels:      map[string]string{"team": "ml", "airunway.ai/model-deployment": "test-model"},
				Annotations: map[string]string{"prometheus.io/scrape": "true"},
			}, r.svc(t, name).ExtraPodMetadata, name)
		}
		require.NotContains(t, r.dgd.Metadata.Labels, "team", "podTemplate labels stay off the DynamoGraphDeployment")
	})
}

func TestStorageMounts(t *testing.T) {
	modelCache := "model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, claimName: model-pvc, mountPath: /model-cache}]}}\n"
	compCache := "model: {id: m, storage: {volumes: [{name: comp, purpose: compilationCache, claimName: comp-pvc}]}}\n"
	both := "model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, claimName: model-pvc}, {name: comp, purpose: compilationCache, claimName: comp-pvc}]}}\n"
	cases := []struct {
		name, spec string
		pvcs       []pvcRef
		mounts     []volumeMount
		env        []string
	}{
		{name: "item 93: modelCache gives pvcs, mount and HF_HOME", spec: base + modelCache,
			pvcs: []pvcRef{{Name: "model-pvc"}}, mounts: []volumeMount{{Name: "model-pvc", MountPoint: "/model-cache"}}, env: []string{"HF_HOME"}},
		{name: "item 93: compilationCache is marked", spec: base + compCache,
			pvcs: []pvcRef{{Name: "comp-pvc"}}, mounts: []volumeMount{{Name: "comp-pvc", MountPoint: "/compilation-cache", UseAsCompilationCache: true}}},
		{name: "item 93: both caches", spec: base + both,
			pvcs:   []pvcRef{{Name: "model-pvc"}, {Name: "comp-pvc"}},
			mounts: []volumeMount{{Name: "model-pvc", MountPoint: "/model-cache"}, {Name: "comp-pvc", MountPoint: "/compilation-cache", UseAsCompilationCache: true}}, env: []string{"HF_HOME"}},
		{name: "item 93: user HF_HOME is not overridden", spec: base + modelCache + "env: [{name: HF_HOME, value: /custom}]",
			pvcs: []pvcRef{{Name: "model-pvc"}}, mounts: []volumeMount{{Name: "model-pvc", MountPoint: "/model-cache"}}, env: []string{"HF_HOME"}},
		{name: "item 93: no storage, no pvcs or mounts", spec: base},
		{name: "item 93 difference: readOnly is not rendered (the schema has no such field)", spec: base + "model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, claimName: model-pvc, readOnly: true}]}}",
			pvcs: []pvcRef{{Name: "model-pvc"}}, mounts: []volumeMount{{Name: "model-pvc", MountPoint: "/model-cache"}}, env: []string{"HF_HOME"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := renderSpec(t, tc.spec)
			require.Equal(t, tc.pvcs, r.dgd.Spec.PVCs)
			w := r.svc(t, ServiceWorker)
			require.Equal(t, tc.mounts, w.VolumeMounts)
			require.Equal(t, tc.env, envNames(w.ExtraPodSpec.MainContainer.Env))
			require.Nil(t, r.svc(t, ServiceFrontend).VolumeMounts)
			if tc.pvcs != nil {
				require.Equal(t, false, dig(r.obj, "spec", "pvcs", 0, "create"), "create: false is rendered")
				require.Nil(t, dig(r.obj, "spec", "services", ServiceWorker, "volumeMounts", 0, "readOnly"))
			}
		})
	}
	t.Run("item 93: user HF_HOME value is kept", func(t *testing.T) {
		r := renderSpec(t, base+modelCache+"env: [{name: HF_HOME, value: /custom}]")
		require.Equal(t, "/custom", r.svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Env[0].Value)
	})
	t.Run("item 93: disaggregated workers both get mounts and HF_HOME", func(t *testing.T) {
		r := renderSpec(t, disagg+modelCache)
		for _, w := range []string{ServicePrefillWorker, ServiceDecodeWorker} {
			require.Equal(t, []volumeMount{{Name: "model-pvc", MountPoint: "/model-cache"}}, r.svc(t, w).VolumeMounts)
			require.Equal(t, []string{"HF_HOME", "VLLM_NIXL_SIDE_CHANNEL_HOST"}, envNames(r.svc(t, w).ExtraPodSpec.MainContainer.Env))
		}
	})
	t.Run("difference: read-only volumes warn", func(t *testing.T) {
		r := renderSpec(t, base+"model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, claimName: model-pvc, readOnly: true}]}}")
		require.Contains(t, warnings(r.l)["spec.model.storage.volumes[0].readOnly"], `PVC "model-pvc" is mounted read-write`)
	})
}

const mockerMeta = "{name: test-model, namespace: default, annotations: {airunway.ai/dynamo-test-backend: mocker}}"

func TestMocker(t *testing.T) {
	t.Run("item 94: aggregated mocker", func(t *testing.T) {
		r := render(t, request(t, mockerMeta, "model: {id: Qwen/Qwen3-0.6B, servedName: qwen}\nprovider: {name: dynamo}\nengine: {type: vllm, args: {x: \"1\"}}\nimage: custom:v1\nresources: {gpu: {count: 1}}", withGateway(t)))
		require.NotContains(t, r.dgd.Spec.Services, ServiceEpp, "mocker always uses the Frontend")
		f, w := r.svc(t, ServiceFrontend), r.svc(t, ServiceWorker)
		planner := "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.1.1"
		require.Equal(t, planner, f.ExtraPodSpec.MainContainer.Image, "beats spec.image")
		require.Equal(t, planner, w.ExtraPodSpec.MainContainer.Image)
		require.Equal(t, &resourceItem{CPU: "100m", Memory: "256Mi"}, f.Resources.Requests)
		require.Equal(t, []string{"python3", "-m", "dynamo.mocker"}, w.ExtraPodSpec.MainContainer.Command)
		require.Equal(t, []string{"--model-path", "Qwen/Qwen3-0.6B", "--model-name", "qwen", "--speedup-ratio", "1000.0", "--num-gpu-blocks-override", "4096", "--block-size", "16", "--max-num-seqs", "64"}, w.ExtraPodSpec.MainContainer.Args)
		require.Equal(t, &resources{Requests: &resourceItem{CPU: "100m", Memory: "256Mi"}, Limits: &resourceItem{CPU: "100m", Memory: "256Mi"}}, w.Resources, "no GPU")
		require.Nil(t, w.FrontendSidecar)
		require.Contains(t, warnings(r.l), "spec.engine")
		require.Contains(t, warnings(r.l)["spec.image"], "ignored in Dynamo mocker mode")
	})
	t.Run("item 94: model name defaults to model.id; no GPU needed", func(t *testing.T) {
		req := request(t, mockerMeta, "model: {id: Qwen/Qwen3-0.6B}\nprovider: {name: dynamo}\nengine: {type: vllm}\nresources: {cpu: \"1\"}")
		require.Empty(t, Provider{}.Check(req))
		args := render(t, req).svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Args
		require.Equal(t, "Qwen/Qwen3-0.6B", args[3])
	})
	t.Run("item 94: disaggregated mocker", func(t *testing.T) {
		req := request(t, mockerMeta, "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: vllm}\nserving: {mode: disaggregated}\nscaling: {prefill: {replicas: 1}, decode: {replicas: 1}}")
		require.Empty(t, Provider{}.Check(req))
		r := render(t, req)
		require.Contains(t, r.dgd.Spec.Services, ServiceFrontend)
		require.NotContains(t, r.dgd.Spec.Services, ServiceEpp)
		for role, name := range map[string]string{"prefill": ServicePrefillWorker, "decode": ServiceDecodeWorker} {
			args := r.svc(t, name).ExtraPodSpec.MainContainer.Args
			require.Equal(t, []string{"--disaggregation-mode", role}, args[len(args)-2:])
			require.NotContains(t, args, "--kv-transfer-config")
			require.Empty(t, r.svc(t, name).Resources.Limits.GPU)
		}
	})
	t.Run("difference: the annotation without spec.provider.name warns and renders normally", func(t *testing.T) {
		req := request(t, mockerMeta, "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}")
		r := render(t, req)
		require.Equal(t, []string{"python3", "-m", "dynamo.vllm"}, r.svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Command)
		require.Contains(t, warnings(r.l), "metadata.annotations.airunway.ai/dynamo-test-backend")
	})
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name, meta, spec, engine, field, msg string
	}{
		{name: "mocker with sglang", meta: mockerMeta, spec: "model: {id: m}\nprovider: {name: dynamo}\nresources: {cpu: \"1\"}", engine: "sglang", field: "spec.engine.type", msg: "Dynamo mocker mode only supports the vllm engine"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, tc.meta, tc.spec, withEngine(tc.engine))
			l := Provider{}.Check(req).Errors()
			require.Len(t, l, 1, "%v", l)
			require.Equal(t, tc.field, l[0].Field)
			require.Contains(t, l[0].Message, tc.msg)
		})
	}
	t.Run("item 95: disaggregated with prefill GPUs is fine", func(t *testing.T) {
		require.Empty(t, Provider{}.Check(request(t, "", disagg)))
	})
}

func TestScaleToZero(t *testing.T) {
	r := renderSpec(t, base+"scaling: {replicas: 0}")
	require.Equal(t, 0.0, dig(r.obj, "spec", "services", ServiceWorker, "replicas"))
	require.Len(t, r.l, 1)
	require.Equal(t, diag.Warning, r.l[0].Severity)
	require.Equal(t, "spec.scaling.replicas", r.l[0].Field)
	require.Equal(t, 1.0, dig(r.obj, "spec", "services", ServiceFrontend, "replicas"), "the Frontend keeps running")
}

func TestWarnings(t *testing.T) {
	for _, tc := range []struct{ name, spec, engine, field string }{
		{"difference: connector is dropped with a warning", base + "engine: {type: vllm, args: {connector: nixl}}", "vllm", "spec.engine.args.connector"},
		{"trustRemoteCode ignored by trtllm", base + "engine: {type: trtllm, trustRemoteCode: true}", "trtllm", "spec.engine.trustRemoteCode"},
		{"enforceEager ignored by trtllm", base + "engine: {type: trtllm, enforceEager: true}", "trtllm", "spec.engine.enforceEager"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := renderSpec(t, tc.spec, withEngine(tc.engine))
			require.Contains(t, warnings(r.l), tc.field)
		})
	}
	t.Run("a plain render warns about nothing", func(t *testing.T) {
		require.Empty(t, renderSpec(t, base).l)
	})
}
