package providers

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestFillRequests(t *testing.T) {
	q := resource.MustParse
	p := &Placement{Requests: map[string]corev1.ResourceList{
		ComponentMain:   {corev1.ResourceCPU: q("6"), corev1.ResourceMemory: q("48Gi")},
		ComponentDecode: {corev1.ResourceCPU: q("3")},
	}}
	cases := []struct {
		name      string
		component string
		in, want  corev1.ResourceRequirements
	}{
		{"nothing set: both defaults", ComponentMain, corev1.ResourceRequirements{},
			corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("6"), corev1.ResourceMemory: q("48Gi")}}},
		{"the user's request wins", ComponentMain, corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("2")}},
			corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("48Gi")}}},
		{"a limit alone already requests as much", ComponentMain, corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("32Gi")}},
			corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("32Gi")}, Requests: corev1.ResourceList{corev1.ResourceCPU: q("6")}}},
		{"each component its own", ComponentDecode, corev1.ResourceRequirements{},
			corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("3")}}},
		{"no decision, no request", ComponentPrefill, corev1.ResourceRequirements{}, corev1.ResourceRequirements{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in
			p.FillRequests(tc.component, &got)
			require.Equal(t, tc.want, got)
		})
	}
	require.Equal(t, "48Gi", p.DefaultRequest(ComponentMain, corev1.ResourceMemory))
	require.Empty(t, p.DefaultRequest(ComponentPrefill, corev1.ResourceCPU))
	var none *Placement
	rr := corev1.ResourceRequirements{}
	none.FillRequests(ComponentMain, &rr)
	require.Empty(t, rr.Requests, "a provider tested without a placement gets no default")
}
