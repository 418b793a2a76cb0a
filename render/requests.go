package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
)

// Default requests of a model-server pod when the ModelDeployment names no
// cpu or memory and the pool gives no capacity to share (docs/placement.md,
// "CPU and memory requests"). Small on purpose: a request larger than the
// node keeps the pod Pending, and the nodes of an undescribed pool may be
// as small as one GPU, 8 vCPUs and 32 GB.
const (
	fallbackMilliCPUPerGPU = 1000
	fallbackMemoryPerGPU   = 4 << 30 // 4 GiB
)

// DefaultRequests returns the cpu and memory requests of one model-server
// pod that uses gpus GPUs of pool (nil when no pool is declared), for the
// resources the ModelDeployment leaves unset.
//
// On a pool that declares its nodes' capacity, a pod requests half of its
// GPUs' share of one node (gpus / GPUs per node × capacity ÷ 2), so that
// the requests of the pods that fill a node's GPUs take half its cpu and
// memory: the other half stays for DaemonSets, sidecars and a capacity
// stated a little high, and the GPUs, not the requests, decide where pods
// fit, as the plan counts. Without a capacity, or for a pod without GPUs,
// it requests 1 cpu and 4 GiB per GPU (at least one), never more than half
// a node of a declared capacity. CPU is rounded down to 100m, memory to
// 1 MiB; limits are never defaulted, so a guess can neither throttle nor
// kill a model server that loads.
func DefaultRequests(gpus int32, pool *hub.NodePool) corev1.ResourceList {
	units := int64(max(gpus, 1))
	cpu, memory := units*fallbackMilliCPUPerGPU, units*fallbackMemoryPerGPU
	if pool != nil && pool.Capacity != nil {
		nodeCPU, nodeMemory := capacity(pool.Capacity.CPU, true), capacity(pool.Capacity.Memory, false)
		perNode := int64(capabilities.DefaultGPUsPerNode)
		if pool.GPU != nil && pool.GPU.PerNode > 0 {
			perNode = int64(pool.GPU.PerNode)
		}
		if gpus > 0 && pool.GPU != nil {
			// The fewest GPUs per node assumed when unknown would overstate
			// the share; 8, the largest common GPU node, understates it.
			perNode = max(perNode, int64(gpus))
			if nodeCPU > 0 {
				cpu = nodeCPU * int64(gpus) / perNode / 2
			}
			if nodeMemory > 0 {
				memory = nodeMemory * int64(gpus) / perNode / 2
			}
		} else {
			if nodeCPU > 0 {
				cpu = min(cpu, nodeCPU/2)
			}
			if nodeMemory > 0 {
				memory = min(memory, nodeMemory/2)
			}
		}
	}
	cpu = max(cpu/100*100, 100)
	memory = max(memory>>20, 1) << 20
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
	}
}

// capacity reads a declared capacity in millicores (cpu) or bytes; 0 when
// unset. Resolve validated it.
func capacity(value string, milli bool) int64 {
	if value == "" {
		return 0
	}
	q := hub.MustParseQuantity(value)
	if milli {
		return q.MilliValue()
	}
	return q.Value()
}
