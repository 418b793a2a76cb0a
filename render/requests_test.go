package render

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
)

func TestDefaultRequests(t *testing.T) {
	h100 := &hub.NodePool{Name: "h100", GPU: &hub.PoolGPU{PerNode: 8}, Capacity: &hub.NodeCapacity{CPU: "96", Memory: "768Gi"}}
	l4 := &hub.NodePool{Name: "l4", GPU: &hub.PoolGPU{PerNode: 1}, Capacity: &hub.NodeCapacity{CPU: "7910m", Memory: "27Gi"}}
	unknownPerNode := &hub.NodePool{Name: "gpu", GPU: &hub.PoolGPU{}, Capacity: &hub.NodeCapacity{CPU: "32", Memory: "256Gi"}}
	tinyCPU := &hub.NodePool{Name: "cpu", Capacity: &hub.NodeCapacity{CPU: "1", Memory: "2Gi"}}
	cases := []struct {
		name        string
		gpus        int32
		pool        *hub.NodePool
		cpu, memory string
	}{
		{"no pool declared: 1 cpu and 4Gi per GPU", 2, nil, "2", "8Gi"},
		{"no pool, no GPUs: one unit", 0, nil, "1", "4Gi"},
		{"a pool without capacity", 4, &hub.NodePool{Name: "gpu", GPU: &hub.PoolGPU{PerNode: 8}}, "4", "16Gi"},
		{"half the share of one of eight GPUs", 1, h100, "6", "48Gi"},
		{"half the share of a whole node", 8, h100, "48", "384Gi"},
		{"rounded down to 100m and 1Mi", 1, l4, "3900m", "13824Mi"},
		{"GPUs per node unknown: eight assumed", 2, unknownPerNode, "4", "32Gi"},
		{"a pod with more GPUs than assumed takes the node's half", 16, unknownPerNode, "16", "128Gi"},
		{"no GPUs: never more than half a declared node", 0, tinyCPU, "500m", "1Gi"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := DefaultRequests(tc.gpus, tc.pool)
			cpu, memory := got[corev1.ResourceCPU], got[corev1.ResourceMemory]
			require.Equal(t, tc.cpu, cpu.String())
			require.Equal(t, tc.memory, memory.String())
		})
	}
}
