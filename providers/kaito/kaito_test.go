package kaito

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
	"github.com/airunway-render/airunway-render/providers"
)

type option func(*providers.Request)

// at declares the KAITO release, as a capability file does.
func at(version string) option {
	return func(r *providers.Request) { r.Provider.Version = version }
}

// nap declares node auto-provisioning with these instance types.
func nap(gpu, cpu string) option {
	return func(r *providers.Request) {
		r.Provider.NodeAutoProvisioning = &hub.NodeAutoProvisioning{GPUInstanceType: gpu, CPUInstanceType: cpu}
	}
}

func pinned(engine, img string) option {
	return func(r *providers.Request) { r.Provider.Images = map[string]string{engine: img} }
}

// mutate changes the ModelDeployment after validation, for upstream test
// inputs that its webhook would not admit.
func mutate(f func(*hub.ModelDeployment)) option {
	return func(r *providers.Request) { f(r.MD) }
}

// request builds a Request from a spec in YAML, decoded, defaulted and
// validated like the pipeline does; the engine is spec.engine.type or vllm.
func request(t *testing.T, spec string, opts ...option) *providers.Request {
	t.Helper()
	req := providertest.Request(providertest.Valid(t, "", spec), hub.ProviderKAITO)
	for _, o := range opts {
		o(req)
	}
	return req
}

// render checks and renders; neither may fail. It returns the problems
// of both stages.
func render(t *testing.T, spec string, opts ...option) (providers.Object, diag.List) {
	t.Helper()
	req := request(t, spec, opts...)
	cl := Provider{}.Check(req)
	require.False(t, cl.HasErrors(), "%v", cl)
	objs, l := Provider{}.Render(req)
	require.False(t, l.HasErrors(), "%v", l)
	require.Len(t, objs, 1)
	return objs[0], append(cl, l...)
}

// failures runs Check then Render as the pipeline does and returns the
// errors of the first stage that has any.
func failures(t *testing.T, spec string, opts ...option) diag.List {
	t.Helper()
	req := request(t, spec, opts...)
	if errs := (Provider{}).Check(req).Errors(); len(errs) > 0 {
		return errs
	}
	_, l := Provider{}.Render(req)
	return l.Errors()
}

func get(obj providers.Object, path ...string) any {
	var cur any = obj
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

func count(t *testing.T, obj providers.Object) int64 {
	t.Helper()
	n, err := providertest.Int64(get(obj, "resource", "count"))
	require.NoError(t, err)
	return n
}

func matchLabels(obj providers.Object) map[string]any {
	m, _ := get(obj, "resource", "labelSelector", "matchLabels").(map[string]any)
	return m
}

// template decodes inference.template strictly into a PodTemplateSpec: the
// CRD leaves it schemaless, so this is the check that KAITO could use it.
func template(t *testing.T, obj providers.Object) corev1.PodTemplateSpec {
	t.Helper()
	raw := get(obj, "inference", "template")
	require.NotNil(t, raw, "no inference.template")
	data, err := json.Marshal(raw)
	require.NoError(t, err)
	var pt corev1.PodTemplateSpec
	strict, err := sigsjson.UnmarshalStrict(data, &pt, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	require.NoError(t, err)
	require.Empty(t, strict)
	return pt
}

func fields(l diag.List, severity diag.Severity) []string {
	var out []string
	for _, p := range l {
		if p.Severity == severity {
			out = append(out, p.Field)
		}
	}
	return out
}

const (
	vllmMD  = "model: {id: meta-llama/Llama-2-7b-chat-hf}\nengine: {type: vllm}\nprovider: {name: kaito}\n"
	llamaMD = "model: {id: meta-llama/Llama-2-7b-chat-hf}\nengine: {type: llamacpp}\nimage: my-image:latest\nprovider: {name: kaito}\n"
	// presetMD names a preset every supported KAITO release registers.
	presetMD   = "model: {id: phi-3.5-mini-instruct}\nengine: {type: vllm}\nprovider: {name: kaito}\n"
	llamaNoImg = "model: {id: meta-llama/Llama-2-7b-chat-hf}\nengine: {type: llamacpp}\nprovider: {name: kaito}\n"
)

func TestWorkspace(t *testing.T) {
	t.Run("item 58: vllm preset workspace", func(t *testing.T) {
		obj, l := render(t, vllmMD)
		require.Empty(t, l)
		require.Equal(t, APIVersion, obj["apiVersion"])
		require.Equal(t, Kind, obj["kind"])
		require.Equal(t, "test-model", get(obj, "metadata", "name"))
		require.Equal(t, "default", get(obj, "metadata", "namespace"))
		require.Nil(t, get(obj, "metadata", "ownerReferences"), "no ownerReferences: the UID does not exist at render time")
		require.Equal(t, map[string]any{
			"airunway.ai/managed-by": "airunway", "airunway.ai/deployment": "test-model", "airunway.ai/model-source": "huggingface",
			"airunway.ai/engine-type": "vllm", "airunway.ai/model-deployment": "test-model",
		}, get(obj, "metadata", "labels"))
		require.Equal(t, map[string]any{hub.AnnotationGeneratedFrom: "test-model"}, get(obj, "metadata", "annotations"))
		require.Equal(t, map[string]any{"preset": map[string]any{"name": "meta-llama/Llama-2-7b-chat-hf"}}, obj["inference"])
		require.Equal(t, int64(1), count(t, obj))
		require.NotContains(t, obj, "spec", "resource and inference are top-level fields")
	})
}

func TestReplicas(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		want       int64
	}{
		{"item 59: scaling.replicas 3 gives count 3", vllmMD + "scaling: {replicas: 3}", 3},
		{"item 59: no scaling gives count 1", vllmMD, 1},
		{"item 59: scaling without replicas gives count 1", vllmMD + "scaling: {}", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, _ := render(t, tc.spec)
			require.Equal(t, tc.want, count(t, obj))
		})
	}
	t.Run("item 59: replicas 0 is refused instead of coerced to 1", func(t *testing.T) {
		errs := failures(t, vllmMD+"scaling: {replicas: 0}")
		require.Len(t, errs, 1)
		require.Equal(t, "spec.scaling.replicas", errs[0].Field)
		require.Contains(t, errs[0].Message, "cannot be scaled to zero")
		// A direct Render call still never emits count 0.
		objs, _ := Provider{}.Render(request(t, vllmMD+"scaling: {replicas: 0}"))
		require.Equal(t, int64(1), count(t, objs[0]))
	})
}

func TestLlamaCppTemplate(t *testing.T) {
	t.Run("item 60: llamacpp template with spec.image", func(t *testing.T) {
		obj, _ := render(t, llamaMD)
		require.Nil(t, get(obj, "inference", "preset"))
		pt := template(t, obj)
		require.Len(t, pt.Spec.Containers, 1)
		c := pt.Spec.Containers[0]
		require.Equal(t, "model", c.Name)
		require.Equal(t, "my-image:latest", c.Image)
		require.Equal(t, []string{"huggingface://meta-llama/Llama-2-7b-chat-hf", "--address=:5000"}, c.Args)
		require.Equal(t, []corev1.ContainerPort{{ContainerPort: 5000}}, c.Ports)
		require.Equal(t, map[string]string{"airunway.ai/model-deployment": "test-model"}, pt.Labels)
		require.Equal(t, "llamacpp", get(obj, "metadata", "labels", "airunway.ai/engine-type"))
	})
	for _, tc := range []struct {
		name, spec string
		opts       []option
		want       string
	}{
		{"item 61: engine.image wins over spec.image", llamaMD, []option{mutate(func(md *hub.ModelDeployment) { md.Spec.Engine.Image = "engine-image:v2" })}, "engine-image:v2"},
		{"item 61: engine.image alone is accepted (upstream requires spec.image)", llamaNoImg + "engine: {type: llamacpp, image: engine-image:v2}", nil, "engine-image:v2"},
		{"item 61: the capability file's llamacpp pin is the fallback", llamaNoImg, []option{pinned(hub.EngineLlamaCpp, "ghcr.io/kaito-project/aikit/llama:pinned")}, "ghcr.io/kaito-project/aikit/llama:pinned"},
		{"item 61: the MD's image wins over the pin", llamaMD, []option{pinned(hub.EngineLlamaCpp, "pinned:1")}, "my-image:latest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, _ := render(t, tc.spec, tc.opts...)
			require.Equal(t, tc.want, template(t, obj).Spec.Containers[0].Image)
		})
	}
	for _, tc := range []struct {
		name, spec string
		want       []string
	}{
		{"item 62: ggufUrl is the model argument", llamaMD + "engine: {type: llamacpp, args: {ggufUrl: \"https://example.com/m.gguf\"}}", []string{"https://example.com/m.gguf", "--address=:5000"}},
		{"item 62: custom source passes no model argument", "model: {source: custom}\nengine: {type: llamacpp}\nimage: my-image:latest", []string{"--address=:5000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, _ := render(t, tc.spec)
			require.Equal(t, tc.want, template(t, obj).Spec.Containers[0].Args)
		})
	}
	t.Run("item 62: ggufUrl with a custom source is reported as ignored", func(t *testing.T) {
		obj, l := render(t, "model: {source: custom}\nengine: {type: llamacpp, args: {ggufUrl: u, threads: \"4\"}}\nimage: i:1")
		require.Equal(t, []string{"--address=:5000"}, template(t, obj).Spec.Containers[0].Args)
		require.Equal(t, []string{"spec.engine.args.ggufUrl", "spec.engine.args.threads"}, fields(l, diag.Warning))
	})
}

func TestCompatibility(t *testing.T) {
	for _, tc := range []struct {
		name, spec, engine string
		opts               []option
		field, message     string
	}{
		{"item 63: llamacpp without any image", llamaNoImg, hub.EngineLlamaCpp, nil, "spec.engine.image", "llamacpp engine requires an image"},
		{"item 73: a name KAITO's Services cannot carry", vllmMD, hub.EngineVLLM, []option{mutate(func(md *hub.ModelDeployment) { md.Name = "1-model" })}, "metadata.name", `"1-model" cannot name the Services`},
		{"item 73: a name too long for KAITO's headless Service", vllmMD, hub.EngineVLLM, []option{mutate(func(md *hub.ModelDeployment) { md.Name = strings.Repeat("m", 55) })}, "metadata.name", "-headless"},
		{"item 73: preset without a model id", "model: {source: custom}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}", hub.EngineVLLM, nil, "spec.model.id", "names the KAITO preset"},
		{"item 73: preset GPUs other than NVIDIA cannot be honoured", vllmMD + "resources: {gpu: {count: 1, type: amd.com/gpu}}", hub.EngineVLLM, nil, "spec.resources.gpu.type", `"amd.com/gpu" cannot be honoured`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, tc.spec, tc.opts...)
			req.Engine = tc.engine
			errs := Provider{}.Check(req).Errors()
			require.Len(t, errs, 1, "%v", errs)
			require.Equal(t, tc.field, errs[0].Field)
			require.Contains(t, errs[0].Message, tc.message)
		})
	}
	t.Run("item 63: Render refuses too when Check is skipped", func(t *testing.T) {
		_, l := Provider{}.Render(request(t, llamaNoImg))
		require.True(t, l.HasErrors())
		req := request(t, vllmMD)
		req.Engine = hub.EngineSGLang
		_, l = Provider{}.Render(req)
		require.Contains(t, l.Errors()[0].Message, "unsupported engine type for KAITO: sglang")
	})
}

func TestLabelSelector(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		opts       []option
		want       map[string]any
	}{
		{"item 64: nodeSelector joins the os label", vllmMD + "nodeSelector: {gpu-type: a100}", nil,
			map[string]any{"gpu-type": "a100", "kubernetes.io/os": "linux", LabelGPUPresent: "true"}},
		{"item 64: no nodeSelector and no GPU: exactly the os label", llamaMD, nil, map[string]any{"kubernetes.io/os": "linux"}},
		{"item 64: vllm without GPUs (direct call): exactly the os label", vllmMD + "resources: {memory: 1Gi}", nil, map[string]any{"kubernetes.io/os": "linux"}},
		{"item 65: one GPU forces the GPU label", vllmMD + "resources: {gpu: {count: 1}}", nil, map[string]any{"kubernetes.io/os": "linux", LabelGPUPresent: "true"}},
		{"item 65: a user's false cannot turn the GPU label off", vllmMD + "resources: {gpu: {count: 1}}\nnodeSelector: {nvidia.com/gpu.present: \"false\"}", nil,
			map[string]any{"kubernetes.io/os": "linux", LabelGPUPresent: "true"}},
		{"item 65: llamacpp without GPUs has no GPU label", llamaMD + "resources: {gpu: {count: 0}, cpu: \"2\"}", nil, map[string]any{"kubernetes.io/os": "linux"}},
		{"item 65: llamacpp with GPUs gets the GPU label", llamaMD + "resources: {gpu: {count: 1}}", nil, map[string]any{"kubernetes.io/os": "linux", LabelGPUPresent: "true"}},
		{"item 65: KAITO 0.6 forces no GPU label", presetMD + "resources: {gpu: {count: 1}}\nnodeSelector: {pool: gpu}", []option{at("0.6.2")}, map[string]any{"kubernetes.io/os": "linux", "pool": "gpu"}},
		{"item 65: KAITO 0.7 forces no GPU label", presetMD + "resources: {gpu: {count: 1}}", []option{at("0.7.2")}, map[string]any{"kubernetes.io/os": "linux"}},
		{"item 65: KAITO 0.8 forces the GPU label", presetMD + "resources: {gpu: {count: 1}}", []option{at("0.8.1")}, map[string]any{"kubernetes.io/os": "linux", LabelGPUPresent: "true"}},
		{"item 65: KAITO 0.12 forces the GPU label", vllmMD + "resources: {gpu: {count: 1}}", []option{at("0.12.0")}, map[string]any{"kubernetes.io/os": "linux", LabelGPUPresent: "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, tc.spec, tc.opts...)
			objs, l := Provider{}.Render(req)
			require.False(t, l.HasErrors(), "%v", l)
			require.Equal(t, tc.want, matchLabels(objs[0]))
		})
	}
}

func TestOverrides(t *testing.T) {
	t.Run("item 66: null deletes the GPU label, a custom label is added", func(t *testing.T) {
		obj, _ := render(t, vllmMD+`provider: {name: kaito, overrides: {"resource":{"labelSelector":{"matchLabels":{"nvidia.com/gpu.present":null,"accelerator.vendor":"example.com/custom"}}}}}`)
		require.Equal(t, map[string]any{"kubernetes.io/os": "linux", "accelerator.vendor": "example.com/custom"}, matchLabels(obj))
	})
	t.Run("item 67: resource and inference overrides merge, count is kept", func(t *testing.T) {
		obj, _ := render(t, vllmMD+`provider: {name: kaito, overrides: {"resource":{"labelSelector":{"matchLabels":{"custom":"label"}}},"inference":{"preset":{"accessMode":"private"}}}}`)
		require.Equal(t, "label", matchLabels(obj)["custom"])
		require.Equal(t, "linux", matchLabels(obj)["kubernetes.io/os"])
		require.Equal(t, "private", get(obj, "inference", "preset", "accessMode"))
		require.Equal(t, "meta-llama/Llama-2-7b-chat-hf", get(obj, "inference", "preset", "name"))
		require.Equal(t, int64(1), count(t, obj))
	})
	t.Run("item 67: count override keeps the labelSelector", func(t *testing.T) {
		obj, _ := render(t, vllmMD+`provider: {name: kaito, overrides: {"resource":{"count":10}}}`)
		require.Equal(t, int64(10), count(t, obj))
		require.NotEmpty(t, matchLabels(obj))
	})
	t.Run("item 67: invalid overrides are an error", func(t *testing.T) {
		req := request(t, vllmMD, mutate(func(md *hub.ModelDeployment) { md.Spec.Provider.Overrides = json.RawMessage(`{bad`) }))
		_, l := Provider{}.Render(req)
		require.Equal(t, []string{"spec.provider.overrides"}, fields(l, diag.Error))
	})
	for _, key := range []string{"apiVersion", "kind", "metadata", "status"} {
		t.Run("item 67: overriding "+key+" is refused", func(t *testing.T) {
			// Validation refuses the key first; this is the second line.
			md := providertest.Decode(t, "", vllmMD+"provider: {name: kaito, overrides: {"+key+": {}}}")
			_, l := Provider{}.Render(providertest.Request(md, hub.ProviderKAITO))
			require.Contains(t, l.Errors()[0].Message, `overriding "`+key+`" is not allowed`)
		})
	}
	t.Run("item 67: removing the labelSelector is refused", func(t *testing.T) {
		errs := failures(t, vllmMD+`provider: {name: kaito, overrides: {"resource":{"labelSelector":null}}}`)
		require.Equal(t, "spec.provider.overrides.resource", errs[0].Field)
	})
}

func TestEnv(t *testing.T) {
	t.Run("item 68: env then HF_TOKEN from the Secret", func(t *testing.T) {
		obj, _ := render(t, llamaMD+"env: [{name: FOO, value: bar}]\nsecrets: {huggingFaceToken: my-hf-secret}")
		require.Equal(t, []corev1.EnvVar{
			{Name: "FOO", Value: "bar"},
			{Name: "HF_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "my-hf-secret"}, Key: "HF_TOKEN"}}},
		}, template(t, obj).Spec.Containers[0].Env)
	})
	t.Run("item 68: secretKeyRef passes through; other valueFrom forms are kept too", func(t *testing.T) {
		obj, _ := render(t, llamaMD+"env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: k}}}, {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]")
		env := template(t, obj).Spec.Containers[0].Env
		require.Len(t, env, 2)
		require.Equal(t, "s", env[0].ValueFrom.SecretKeyRef.Name)
		require.Equal(t, "k", env[0].ValueFrom.SecretKeyRef.Key)
		require.Equal(t, "status.podIP", env[1].ValueFrom.FieldRef.FieldPath, "upstream drops non-secretKeyRef valueFrom")
	})
	t.Run("item 68: a plaintext HF_TOKEN gives way to the Secret", func(t *testing.T) {
		obj, _ := render(t, llamaMD+"env: [{name: HF_TOKEN, value: plain}]\nsecrets: {huggingFaceToken: s}")
		env := template(t, obj).Spec.Containers[0].Env
		require.Len(t, env, 1)
		require.Empty(t, env[0].Value)
	})
}

func TestTemplateResources(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		want       corev1.ResourceRequirements
	}{
		{"item 69: memory and cpu are requests", llamaMD + "resources: {memory: 16Gi, cpu: \"4\"}",
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": mustQ("16Gi"), "cpu": mustQ("4")}}},
		{"item 69: no resources, no resources block", llamaMD, corev1.ResourceRequirements{}},
		{"item 69: GPU only: no requests, a GPU limit (upstream renders none)", llamaMD + "resources: {gpu: {count: 2}}",
			corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": mustQ("2")}}},
		{"item 69: the GPU limit honours gpu.type", llamaMD + "resources: {gpu: {count: 1, type: amd.com/gpu}, memory: 8Gi}",
			corev1.ResourceRequirements{Limits: corev1.ResourceList{"amd.com/gpu": mustQ("1")}, Requests: corev1.ResourceList{"memory": mustQ("8Gi")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, _ := render(t, tc.spec)
			got := template(t, obj).Spec.Containers[0].Resources
			require.True(t, equalResources(tc.want, got), "want %v, got %v", tc.want, got)
			if len(tc.want.Limits)+len(tc.want.Requests) == 0 {
				require.Nil(t, get(obj, "inference", "template", "spec", "containers").([]any)[0].(map[string]any)["resources"])
			}
		})
	}
}

func TestPodTemplateMetadata(t *testing.T) {
	t.Run("item 70: podTemplate labels and annotations go on the Workspace", func(t *testing.T) {
		obj, _ := render(t, vllmMD+"podTemplate: {metadata: {labels: {team: ml, airunway.ai/model-deployment: hijack}, annotations: {note: x}}}")
		require.Equal(t, "ml", get(obj, "metadata", "labels", "team"))
		require.Equal(t, "test-model", get(obj, "metadata", "labels", "airunway.ai/model-deployment"), "the label the reporter selects on cannot be overridden")
		require.Equal(t, map[string]any{"note": "x", hub.AnnotationGeneratedFrom: "test-model"}, get(obj, "metadata", "annotations"))
	})
	t.Run("item 70: and on the llama.cpp pods", func(t *testing.T) {
		obj, _ := render(t, llamaMD+"podTemplate: {metadata: {labels: {team: ml}, annotations: {note: x}}}")
		pt := template(t, obj)
		require.Equal(t, map[string]string{"team": "ml", "airunway.ai/model-deployment": "test-model"}, pt.Labels)
		require.Equal(t, map[string]string{"note": "x"}, pt.Annotations)
	})
}

func TestServedName(t *testing.T) {
	for _, spec := range []string{llamaMD, vllmMD} {
		t.Run("item 71: no served-model-name, a warning instead", func(t *testing.T) {
			obj, l := render(t, spec+"model: {id: meta-llama/Llama-2-7b-chat-hf, servedName: alias}")
			require.NotContains(t, toYAML(t, obj), "served-model-name")
			require.NotContains(t, toYAML(t, obj), "alias")
			require.Equal(t, []string{"spec.model.servedName"}, fields(l, diag.Warning))
		})
	}
}

func TestInstanceType(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		opts       []option
		want       any
	}{
		{"item 72: no node auto-provisioning, no instanceType", llamaMD, nil, nil},
		{"item 72: NAP with a CPU type for a CPU workload", llamaMD, []option{nap("", "Standard_D4s_v5")}, "Standard_D4s_v5"},
		{"item 72: NAP with a GPU type for a GPU workload", vllmMD + "resources: {gpu: {count: 1}}", []option{nap("Standard_NC24ads_A100_v4", "Standard_D4s_v5")}, "Standard_NC24ads_A100_v4"},
		{"item 72: KAITO 0.6 NAP without a type for the workload leaves the CRD default", llamaMD, []option{at("0.6.2"), nap("Standard_NC24ads_A100_v4", "")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, _ := render(t, tc.spec, tc.opts...)
			require.Equal(t, tc.want, get(obj, "resource", "instanceType"))
			require.NotEmpty(t, matchLabels(obj), "labelSelector stays: the CRD requires it")
		})
	}
	t.Run("item 72: NAP with a GPU type keeps the GPU label", func(t *testing.T) {
		obj, _ := render(t, vllmMD+"resources: {gpu: {count: 1}}", nap("Standard_NC24ads_A100_v4", ""))
		require.Equal(t, "true", matchLabels(obj)[LabelGPUPresent])
	})
	for _, tc := range []struct {
		name, spec string
		opts       []option
		field      string
		message    string
	}{
		{"item 72: KAITO 0.8+ NAP without a type for the workload is refused", llamaMD, []option{nap("Standard_NC24ads_A100_v4", "")}, "", "names no cpuInstanceType"},
		{"item 72: null override removing the NAP instanceType is refused on 0.8+", vllmMD + `provider: {name: kaito, overrides: {"resource":{"instanceType":null}}}`, []option{nap("Standard_NC24ads_A100_v4", "")}, "spec.provider.overrides.resource.instanceType", "must not be removed: KAITO 0.10.0 with node auto-provisioning"},
		{"item 72: an instanceType override without NAP is refused on 0.8+", presetMD + `provider: {name: kaito, overrides: {"resource":{"instanceType":"Standard_NC6s_v3"}}}`, []option{at("0.8.1")}, "spec.provider.overrides.resource.instanceType", "must be empty on KAITO 0.8.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := failures(t, tc.spec, tc.opts...)
			require.Len(t, errs, 1, "%v", errs)
			require.Equal(t, tc.field, errs[0].Field)
			require.Contains(t, errs[0].Message, tc.message)
		})
	}
	t.Run("item 72: null override removes the instanceType on 0.6", func(t *testing.T) {
		obj, _ := render(t, presetMD+`provider: {name: kaito, overrides: {"resource":{"instanceType":null,"preferredNodes":["n1"]}}}`, at("0.6.2"), nap("Standard_NC24ads_A100_v4", ""))
		require.Nil(t, get(obj, "resource", "instanceType"))
	})
}

func TestVersions(t *testing.T) {
	const preferred = `provider: {name: kaito, overrides: {"resource":{"preferredNodes":["gpu-node-1"]}}}`
	t.Run("KAITO 0.6 accepts preferredNodes through overrides", func(t *testing.T) {
		obj, l := render(t, presetMD+preferred, at("0.6.2"))
		require.Equal(t, []any{"gpu-node-1"}, get(obj, "resource", "preferredNodes"))
		require.Empty(t, l, "preferredNodes answers the instance-type warning")
	})
	t.Run("KAITO 0.6 without preferredNodes or NAP warns about the default instance type", func(t *testing.T) {
		_, l := render(t, presetMD, at("0.6.2"))
		require.Len(t, l, 1)
		require.Equal(t, diag.Warning, l[0].Severity)
		require.Contains(t, l[0].Message, LegacyDefaultInstanceType)
		require.Contains(t, l[0].Message, "KAITO 0.6.2")
	})
	for _, v := range []string{"0.8.1", "0.10.0", "0.12.0"} {
		t.Run("KAITO "+v+" renders preferredNodes with a deprecation warning", func(t *testing.T) {
			obj, l := render(t, presetMD+preferred, at(v))
			require.Equal(t, []any{"gpu-node-1"}, get(obj, "resource", "preferredNodes"), "the CRD still accepts it")
			require.Len(t, l, 1)
			require.Equal(t, diag.Warning, l[0].Severity)
			require.Equal(t, "spec.provider.overrides.resource.preferredNodes", l[0].Field)
			require.Contains(t, l[0].Message, "KAITO "+v)
			require.Contains(t, l[0].Message, "deprecated since KAITO 0.8.0")
			require.Contains(t, l[0].Message, "`spec.nodeSelector`", "names the replacement")
		})
	}
	t.Run("KAITO 0.10 accepts a null preferredNodes (it deletes nothing)", func(t *testing.T) {
		render(t, vllmMD+`provider: {name: kaito, overrides: {"resource":{"preferredNodes":null}}}`)
	})
	for _, v := range []string{"0.6.2", "0.8.1"} {
		t.Run("KAITO "+v+" refuses a Hugging Face id it has no preset for, naming the closest", func(t *testing.T) {
			errs := failures(t, vllmMD+preferred, at(v), mutate(func(md *hub.ModelDeployment) {
				if v == "0.8.1" {
					md.Spec.Provider.Overrides = nil
				}
			}))
			require.Len(t, errs, 1, "%v", errs)
			require.Equal(t, "spec.model.id", errs[0].Field)
			require.Contains(t, errs[0].Message, `"meta-llama/Llama-2-7b-chat-hf" has no KAITO preset in KAITO `+v+`, which accepts only its registered preset names (Hugging Face ids from KAITO 0.9.0); closest presets: `+"`llama-3.1-8b-instruct` (meta-llama/Llama-3.1-8B-Instruct), `llama-3.3-70b-instruct`")
		})
	}
	// KAITO's own model lists (presets.json, derived from each release's
	// supported_models.yaml) map a Hugging Face id to the preset name.
	for v, tc := range map[string]struct{ id, preset string }{
		"0.6.0": {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"},
		"0.7.2": {"microsoft/Phi-4-mini-instruct", "phi-4-mini-instruct"},
		"0.8.1": {"mistralai/Ministral-3-8B-Instruct-2512", "ministral-3-8b-instruct"},
		"0.8.2": {"google/gemma-3-4b-it", "gemma-3-4b-instruct"}, // after the last derived release: 0.8.1's list
	} {
		t.Run("KAITO "+v+" maps "+tc.id+" to its preset", func(t *testing.T) {
			obj, l := render(t, "model: {id: "+tc.id+"}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}\n", at(v))
			require.Equal(t, tc.preset, get(obj, "inference", "preset", "name"))
			require.Contains(t, fmt.Sprint(l), fmt.Sprintf("is rendered as KAITO %s's preset %q", v, tc.preset))
		})
	}
	t.Run("KAITO 0.7 has no Ministral 3 preset (0.8 added it)", func(t *testing.T) {
		errs := failures(t, "model: {id: mistralai/Ministral-3-8B-Instruct-2512}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}\n", at("0.7.2"))
		require.Len(t, errs, 1, "%v", errs)
		require.Contains(t, errs[0].Message, "has no KAITO preset in KAITO 0.7.2")
	})
	t.Run("KAITO 0.8 accepts a preset name set through overrides", func(t *testing.T) {
		obj, _ := render(t, vllmMD+`provider: {name: kaito, overrides: {"inference":{"preset":{"name":"llama-3.1-8b-instruct"}}}}`, at("0.8.1"))
		require.Equal(t, "llama-3.1-8b-instruct", get(obj, "inference", "preset", "name"))
	})
	t.Run("KAITO 0.8 reports a Hugging Face id set through overrides there", func(t *testing.T) {
		errs := failures(t, "model: {id: phi-4}\nengine: {type: vllm}\n"+`provider: {name: kaito, overrides: {"inference":{"preset":{"name":"microsoft/phi-4"}}}}`, at("0.8.1"))
		require.Equal(t, "spec.provider.overrides.inference.preset.name", errs[0].Field)
	})
	for _, v := range []string{"0.9.0", "0.10.0", "0.12.0"} {
		t.Run("KAITO "+v+" accepts a Hugging Face id", func(t *testing.T) {
			obj, _ := render(t, vllmMD, at(v))
			require.Equal(t, "meta-llama/Llama-2-7b-chat-hf", get(obj, "inference", "preset", "name"))
		})
	}
	t.Run("a malformed version is an error", func(t *testing.T) {
		errs := Provider{}.Check(request(t, vllmMD, at("zero")))
		require.True(t, errs.HasErrors())
	})
}

func TestHFTokenForPresets(t *testing.T) {
	obj, l := render(t, vllmMD+"secrets: {huggingFaceToken: hf-token}")
	require.Empty(t, l)
	require.Equal(t, map[string]any{"name": "meta-llama/Llama-2-7b-chat-hf", "presetOptions": map[string]any{"modelAccessSecret": "hf-token"}}, get(obj, "inference", "preset"))
	obj, _ = render(t, vllmMD+"secrets: {huggingFaceToken: hf-token}\n"+`provider: {name: kaito, overrides: {"inference":{"preset":{"presetOptions":{"modelAccessSecret":null}}}}}`)
	require.Equal(t, map[string]any{}, get(obj, "inference", "preset", "presetOptions"), "an override can take it away for presets whose weights ship in images")
}

func TestTolerations(t *testing.T) {
	const tol = "tolerations: [{key: dedicated, operator: Equal, value: inference, effect: NoSchedule}]\n"
	t.Run("the llama.cpp pods carry the tolerations", func(t *testing.T) {
		obj, l := render(t, llamaMD+tol+"nodeSelector: {pool: cpu}")
		pt := template(t, obj)
		require.Equal(t, []corev1.Toleration{{Key: "dedicated", Operator: "Equal", Value: "inference", Effect: "NoSchedule"}}, pt.Spec.Tolerations)
		require.Empty(t, pt.Spec.NodeSelector, "KAITO turns resource.labelSelector into node affinity")
		require.Empty(t, l)
	})
	t.Run("presets ignore them, with a warning", func(t *testing.T) {
		obj, l := render(t, vllmMD+tol)
		require.NotContains(t, toYAML(t, obj), "dedicated")
		require.Equal(t, []string{"spec.tolerations"}, fields(l, diag.Warning))
	})
}

// TestIgnoredFields: every field a path does not render is named once.
func TestIgnoredFields(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		want       []string
	}{
		{"preset path", vllmMD + "model: {id: meta-llama/Llama-2-7b-chat-hf, servedName: a, storage: {volumes: [{name: cache, purpose: modelCache, claimName: pvc}]}}\n" +
			"engine: {type: vllm, image: img:1, contextLength: 4096, trustRemoteCode: true, enforceEager: true, enablePrefixCaching: false, args: {b: \"1\", a: \"\"}, extraArgs: [--x]}\n" +
			"env: [{name: A, value: b}]\nresources: {gpu: {count: 4}, memory: 64Gi, cpu: \"8\"}\ntolerations: [{key: k, operator: Exists}]",
			[]string{"spec.engine.contextLength", "spec.engine.trustRemoteCode", "spec.engine.enforceEager", "spec.engine.enablePrefixCaching", "spec.engine.args", "spec.engine.extraArgs", "spec.engine.image",
				"spec.env", "spec.resources.memory", "spec.resources.cpu", "spec.resources.gpu.count", "spec.tolerations", "spec.model.servedName", "spec.model.storage.volumes[0]"}},
		{"llama.cpp path", llamaMD + "model: {id: m, servedName: a, storage: {volumes: [{name: cache, purpose: modelCache, size: 10Gi}]}}\n" +
			"engine: {type: llamacpp, contextLength: 4096, trustRemoteCode: true, enforceEager: true, enablePrefixCaching: false, args: {ggufUrl: u, threads: \"4\"}, extraArgs: [--x]}",
			[]string{"spec.engine.contextLength", "spec.engine.trustRemoteCode", "spec.engine.enforceEager", "spec.engine.enablePrefixCaching", "spec.engine.args.threads", "spec.engine.extraArgs", "spec.model.servedName", "spec.model.storage.volumes[0]"}},
		{"defaults alone warn about nothing", vllmMD + "engine: {type: vllm}\nresources: {gpu: {count: 1}}", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, l := render(t, tc.spec)
			require.Equal(t, tc.want, fields(l, diag.Warning))
			for _, p := range l {
				if p.Field != "spec.resources.gpu.count" {
					require.Contains(t, p.Message, "is ignored by the kaito provider")
				}
			}
		})
	}
}

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

// equalResources compares quantities by value, not by their cached text.
func equalResources(a, b corev1.ResourceRequirements) bool {
	same := func(x, y corev1.ResourceList) bool {
		if len(x) != len(y) {
			return false
		}
		for k, q := range x {
			if o, ok := y[k]; !ok || q.Cmp(o) != 0 {
				return false
			}
		}
		return true
	}
	return same(a.Limits, b.Limits) && same(a.Requests, b.Requests)
}

func toYAML(t *testing.T, obj providers.Object) string {
	t.Helper()
	out, err := yaml.Marshal(obj)
	require.NoError(t, err)
	return string(out)
}

// TestSchemaAtEveryRelease validates what each path renders against the
// Workspace CRD schema of every release the golden cases cannot all cover.
func TestSchemaAtEveryRelease(t *testing.T) {
	specs := map[string]string{
		"preset":         presetMD + "resources: {gpu: {count: 1}}\nsecrets: {huggingFaceToken: s}\nscaling: {replicas: 2}",
		"llamacpp cpu":   llamaMD + "resources: {memory: 4Gi, cpu: \"2\"}\nenv: [{name: A, value: b}]\ntolerations: [{key: k, operator: Exists}]",
		"llamacpp gpu":   llamaMD + "resources: {gpu: {count: 1}}",
		"nap and config": presetMD + "resources: {gpu: {count: 1}}\n" + `provider: {name: kaito, overrides: {"inference":{"config":"params"}}}`,
	}
	for _, v := range []string{"0.6.2", "0.7.2", "0.8.1", "0.10.0", "0.12.0"} {
		for name, spec := range specs {
			t.Run(v+" "+name, func(t *testing.T) {
				opts := []option{at(v)}
				if name == "nap and config" {
					opts = append(opts, nap("Standard_NC24ads_A100_v4", ""))
				}
				obj, _ := render(t, spec, opts...)
				require.Empty(t, schemacheck.CheckAtVersion(obj, v))
			})
		}
	}
	t.Run("the check has teeth: a 0.12 field fails at 0.10", func(t *testing.T) {
		obj, _ := render(t, presetMD+"resources: {gpu: {count: 1}}\n"+`provider: {name: kaito, overrides: {"resource":{"partition":{"mode":"mig"}}}}`, at("0.12.0"))
		require.Empty(t, schemacheck.CheckAtVersion(obj, "0.12.0"))
		require.NotEmpty(t, schemacheck.CheckAtVersion(obj, "0.10.0"))
	})
}

// TestPlacementOnPresets covers the node pool reaching the Workspace: its
// labels join resource.labelSelector, and a taint KAITO does not tolerate
// by itself is a warning, since presets have no toleration field.
func TestPlacementOnPresets(t *testing.T) {
	pools := []hub.NodePool{
		{Name: "h100", Selector: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, GPU: &hub.PoolGPU{PerNode: 8},
			Taints: []hub.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}, {Key: "dedicated", Value: "ml", Effect: "NoSchedule"}}},
	}
	onPool := func(r *providers.Request) {
		caps := *r.Caps
		caps.NodePools = pools
		r.Caps = &caps
		r.Placement.Set(providers.ComponentMain, &pools[0])
	}
	obj, l := render(t, "model: {id: microsoft/phi-4}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}", onPool)
	match := obj["resource"].(map[string]any)["labelSelector"].(map[string]any)["matchLabels"]
	require.Equal(t, map[string]any{"kubernetes.io/os": "linux", "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, match)
	require.Len(t, l, 1, "%v", l)
	require.Equal(t, diag.Warning, l[0].Severity)
	require.Contains(t, l[0].Message, `node pool "h100" has taint dedicated:NoSchedule, which KAITO preset pods do not tolerate`)
	require.NotContains(t, l[0].Message, "nvidia.com/gpu:", "KAITO tolerates its own GPU taint")
}

func TestBackend(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		want       providers.Backend
	}{
		{"preset by Hugging Face id: KAITO's pods and served name", vllmMD + "model: {id: Qwen/Qwen3-0.6B, servedName: alias}",
			providers.Backend{PodSelector: map[string]string{LabelWorkspace: "test-model"}, Port: 5000, ServedName: "qwen3-0.6b", IgnoresServedName: true}},
		{"built-in preset name", vllmMD + "model: {id: phi-4-mini-instruct}",
			providers.Backend{PodSelector: map[string]string{LabelWorkspace: "test-model"}, Port: 5000, ServedName: "phi-4-mini-instruct", IgnoresServedName: true}},
		{"llama.cpp template: our own pod label", llamaMD + "model: {id: m, servedName: alias}",
			providers.Backend{PodSelector: map[string]string{hub.LabelModelDeployment: "test-model"}, Port: 5000, IgnoresServedName: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, tc.spec)
			require.Equal(t, tc.want, Provider{}.Backend(req))
			if req.Engine == hub.EngineLlamaCpp {
				obj, _ := render(t, tc.spec)
				labels := at0(obj, "inference", "template", "metadata", "labels")
				require.Equal(t, "test-model", labels[hub.LabelModelDeployment], "the pool selects the template's label")
			}
		})
	}
}

func at0(obj providers.Object, path ...string) map[string]any {
	var v any = map[string]any(obj)
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	return v.(map[string]any)
}
