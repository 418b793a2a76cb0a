package plan

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// fullSpec has every field the plan reads of a pod, and fields it does
// not read, each set.
func fullSpec() corev1.PodSpec {
	res := func(cpu, gpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpu)},
		}
	}
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "server", Image: "vllm/vllm-openai:v0.11.0", Args: []string{"--model", "m"},
			Env:       []corev1.EnvVar{{Name: "HF_HOME", Value: "/cache"}},
			Resources: res("4", "2"),
		}},
		InitContainers: []corev1.Container{
			{Name: "sidecar", Image: "proxy", RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways), Resources: res("1", "0")},
			{Name: "download", Image: "fetch", Resources: res("8", "0")},
		},
		Overhead:     corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		NodeSelector: map[string]string{"gpu": "h100"},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
		}}},
		Tolerations:    []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		ResourceClaims: []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: ptr("gpus")}},
		Volumes:        []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
}

// TestSchedulingSpecKeepsWhatThePlanReads: the reduced spec the Reader
// keeps gives the plan the same requests (init containers and sidecars,
// overhead), node labels, tolerations and claims as the whole pod.
func TestSchedulingSpecKeepsWhatThePlanReads(t *testing.T) {
	full := fullSpec()
	podLevel := fullSpec()
	podLevel.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32")}}
	template := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
		"metadata": map[string]any{"name": "gpus", "namespace": "team"},
		"spec": map[string]any{"spec": map[string]any{"devices": map[string]any{"requests": []any{
			map[string]any{"name": "gpu", "exactly": map[string]any{"deviceClassName": "gpu.nvidia.com", "count": int64(2)}},
		}}}},
	}}
	templates := map[types.NamespacedName]*unstructured.Unstructured{{Namespace: "team", Name: "gpus"}: template}
	for name, spec := range map[string]corev1.PodSpec{"containers": full, "pod-level resources": podLevel} {
		t.Run(name, func(t *testing.T) {
			slim := schedulingSpec(&spec)
			if got, want := podRequests(&slim), podRequests(&spec); !reflect.DeepEqual(got, want) {
				t.Errorf("requests: got %v, the whole pod has %v", got, want)
			}
			if got, want := requiredLabels(&slim), requiredLabels(&spec); !reflect.DeepEqual(got, want) || len(want) != 2 {
				t.Errorf("node labels: got %v, the whole pod has %v", got, want)
			}
			if !reflect.DeepEqual(slim.Tolerations, spec.Tolerations) {
				t.Errorf("tolerations: got %v, the whole pod has %v", slim.Tolerations, spec.Tolerations)
			}
			gotDevices, _, gotUnplaced, err1 := podClaims(&slim, "team", templates, "Deployment/m", "m")
			wantDevices, _, wantUnplaced, err2 := podClaims(&spec, "team", templates, "Deployment/m", "m")
			if err1 != nil || err2 != nil || !reflect.DeepEqual(gotDevices, wantDevices) || gotUnplaced != wantUnplaced || len(wantDevices) != 1 {
				t.Errorf("claims: got %v %q %v, the whole pod has %v %q %v", gotDevices, gotUnplaced, err1, wantDevices, wantUnplaced, err2)
			}
			for _, c := range append(slim.Containers, slim.InitContainers...) {
				if c.Image != "" || c.Args != nil || c.Env != nil {
					t.Errorf("container %q keeps what the plan never reads: %+v", c.Name, c)
				}
			}
			if slim.Volumes != nil {
				t.Errorf("the spec keeps its volumes: %v", slim.Volumes)
			}
		})
	}
}

// TestReaderSharesAlikeSpecs: pods alike in what the plan reads share one
// kept spec, however their images and environments differ; pods that
// differ in it do not.
func TestReaderSharesAlikeSpecs(t *testing.T) {
	r := NewReader()
	a, b, other := fullSpec(), fullSpec(), fullSpec()
	b.Containers[0].Image, b.Containers[0].Env = "another:image", nil
	other.Tolerations = nil
	sa, sb, so := r.scheduling(&a), r.scheduling(&b), r.scheduling(&other)
	if sa != sb {
		t.Error("two pods alike but for their image and environment keep two specs")
	}
	if sa == so {
		t.Error("pods with different tolerations share one spec")
	}
	if len(r.specs) != 2 {
		t.Errorf("the reader keeps %d specs, want 2", len(r.specs))
	}
}
