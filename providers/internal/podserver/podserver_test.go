package podserver

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

func request(labels map[string]string) *providers.Request {
	md := &hub.ModelDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"},
		Spec: hub.ModelDeploymentSpec{
			Model:       hub.ModelSpec{ID: "org/model", Source: hub.SourceHuggingFace},
			PodTemplate: &hub.PodTemplateSpec{Metadata: &hub.PodTemplateMetadata{Labels: labels}},
		},
	}
	return &providers.Request{MD: md, Engine: hub.EngineVLLM, Provider: &hub.ResolvedProvider{Name: hub.ProviderVLLM}, Placement: providers.NewPlacement(md)}
}

func TestDeploymentPodLabels(t *testing.T) {
	hijack := map[string]string{LabelApp: "x", hub.LabelDeployment: "x", hub.LabelModelDeployment: "x", "team": "ml"}
	cases := []struct {
		name     string
		routable bool
		want     map[string]string
	}{
		{"routable pods carry the InferencePool label, forced to the model", true,
			map[string]string{LabelApp: "m-decode", hub.LabelDeployment: "m", hub.LabelModelDeployment: "m", "team": "ml"}},
		{"other pods never carry it, even from podTemplate", false,
			map[string]string{LabelApp: "m-decode", hub.LabelDeployment: "m", "team": "ml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Deployment(request(hijack), Server{Name: "m-decode", Routable: tc.routable})
			require.Equal(t, tc.want, d.Spec.Template.Labels)
			require.Equal(t, map[string]string{LabelApp: "m-decode", hub.LabelDeployment: "m"}, d.Spec.Selector.MatchLabels)
			require.Equal(t, "m", d.Labels[hub.LabelModelDeployment])
		})
	}
}

func TestResources(t *testing.T) {
	rr := Resources(2, "", "", "")
	require.Equal(t, "2", rr.Limits.Name(hub.DefaultGPUResource, "").String(), "an empty type means upstream's nvidia.com/gpu")
	rr = Resources(0, "amd.com/gpu", "", "")
	require.Nil(t, rr.Limits)
	require.Nil(t, rr.Requests)
}

func TestImage(t *testing.T) {
	req := request(nil)
	require.Equal(t, "default:v1", Image(req, "default:v1"))
	req.Provider = &hub.ResolvedProvider{Images: map[string]string{hub.EngineVLLM: "pinned:v2"}}
	require.Equal(t, "pinned:v2", Image(req, "default:v1"))
	req.MD.Spec.Image = "legacy:v3"
	require.Equal(t, "legacy:v3", Image(req, "default:v1"))
	req.MD.Spec.Engine = &hub.EngineSpec{Image: "engine:v4"}
	require.Equal(t, "engine:v4", Image(req, "default:v1"))
}

func TestObjectsReportsAnOverrideErrorOnce(t *testing.T) {
	req := request(nil)
	var l diag.List
	objs := Objects(req, []Server{{Name: "a"}, {Name: "b"}}, json.RawMessage(`{"kind":"X"}`), &l)
	require.Len(t, objs, 4)
	require.Len(t, l, 1)
	require.Equal(t, "spec.provider.overrides", l[0].Field)
}

func TestFloating(t *testing.T) {
	for image, want := range map[string]bool{
		"vllm/vllm-openai:cu130-nightly": true,
		"vllm/vllm-openai:nightly":       true,
		"vllm/vllm-openai:latest":        true,
		"vllm/vllm-openai":               true,
		"registry:5000/vllm/vllm-openai": true,
		"vllm/vllm-openai:v0.11.0":       false,
		"registry:5000/vllm:v0.11.0":     false,
	} {
		require.Equal(t, want, floating(image), image)
	}
}
