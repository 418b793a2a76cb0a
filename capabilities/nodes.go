package capabilities

import (
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/gpus"
	"github.com/airunway-render/airunway-render/api/hub"
)

// What a generated node has where the capability file does not say.
const (
	// DefaultPoolNodes is the node count of a pool without `nodes.count`.
	DefaultPoolNodes = 2
	// MaxPoolNodes bounds `nodes.count`: the Nodes are generated.
	MaxPoolNodes = 1000
	// DefaultGPUsPerNode stands in for a GPU pool's unknown `perNode`.
	DefaultGPUsPerNode = 8
	// Node allocatable without `capacity`: a typical GPU node, and a
	// typical CPU node.
	defaultGPUNodeCPU, defaultGPUNodeMemory = "96", "768Gi"
	defaultCPUNodeCPU, defaultCPUNodeMemory = "16", "64Gi"
	defaultNodePods                         = "110"
	// NodeAddress is every generated node's address: loopback, so nothing
	// that reads it (KWOK, a scheduler plugin, a probe) dials off the
	// machine.
	NodeAddress = "127.0.0.1"
	// KWOKAnnotation hands a Node to KWOK's fake kubelet.
	KWOKAnnotation = "kwok.x-k8s.io/node"
)

// Nodes returns the Nodes the capability file describes, for a simulated
// cluster (KWOK, kind): per pool, its `nodes.count` Nodes (an autoscaled
// pool at its `nodes.max`, the most it can grow to; default
// DefaultPoolNodes) named `<pool>-<i>`, labelled with the pool's selector
// and, for NVIDIA GPUs, GPU Feature Discovery's labels; tainted as the pool
// says; with the pool's GPUs (perNode, default DefaultGPUsPerNode) as
// capacity under its resource name, and the pool's cpu and memory. A DRA
// pool's Nodes have no GPU capacity: its GPUs are the devices of
// ResourceSlices. Sorted by pool order, then index; the same file gives
// the same Nodes.
func (r *Resolved) Nodes() []corev1.Node {
	var nodes []corev1.Node
	for _, p := range r.NodePools {
		for i := range poolNodeCount(p) {
			nodes = append(nodes, poolNode(p, i))
		}
	}
	return nodes
}

// poolNodeCount is how many Nodes a pool is generated with.
func poolNodeCount(p hub.NodePool) int32 {
	if _, most, ok := p.Nodes.Range(); ok {
		return most
	}
	return DefaultPoolNodes
}

// nodeName names a pool's i-th generated Node.
func nodeName(p hub.NodePool, i int32) string { return fmt.Sprintf("%s-%d", p.Name, i) }

func poolNode(p hub.NodePool, i int32) corev1.Node {
	name := nodeName(p, i)
	labels := map[string]string{
		"kubernetes.io/arch":     "amd64",
		"kubernetes.io/os":       "linux",
		"kubernetes.io/hostname": name,
		hub.LabelNodePool:        p.Name,
	}
	cpu, memory := defaultCPUNodeCPU, defaultCPUNodeMemory
	allocatable := corev1.ResourceList{corev1.ResourcePods: resource.MustParse(defaultNodePods)}
	if g := p.GPU; g != nil {
		cpu, memory = defaultGPUNodeCPU, defaultGPUNodeMemory
		perNode := g.PerNode
		if perNode == 0 {
			perNode = DefaultGPUsPerNode
		}
		resourceName := g.ResourceName
		if resourceName == "" {
			resourceName = hub.DefaultGPUResource
		}
		if !p.HasDevices() {
			// A DRA pool's GPUs are devices in its ResourceSlices
			// (ResourceSlices), not an extended resource: a cluster
			// running NVIDIA's DRA driver instead of the device plugin has
			// no nvidia.com/gpu to allocate.
			allocatable[corev1.ResourceName(resourceName)] = *resource.NewQuantity(int64(perNode), resource.DecimalSI)
		}
		if v := gpus.ForResource(resourceName); gpus.IsWhole(resourceName) {
			// The vendor's node labeller (NVIDIA's GPU Feature Discovery
			// and GPU Operator) on nodes of whole GPUs, as package gpus
			// describes it.
			setLabel(labels, v.PresentLabel, "true")
			setLabel(labels, v.CountLabel, strconv.Itoa(int(perNode)))
			setLabel(labels, v.ProductLabel, g.Product)
			if g.MemoryMiB > 0 {
				setLabel(labels, v.MemoryLabel, strconv.FormatInt(g.MemoryMiB, 10))
			}
		}
	}
	if c := p.Capacity; c != nil {
		if c.CPU != "" {
			cpu = c.CPU
		}
		if c.Memory != "" {
			memory = c.Memory
		}
	}
	// Resolve validated the capacity.
	allocatable[corev1.ResourceCPU] = hub.MustParseQuantity(cpu)
	allocatable[corev1.ResourceMemory] = hub.MustParseQuantity(memory)
	// The pool's own selector last: it is what the renderer places by.
	maps.Copy(labels, p.Selector)

	var taints []corev1.Taint
	for _, t := range p.Taints {
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{KWOKAnnotation: "fake"},
		},
		Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    allocatable.DeepCopy(),
			Allocatable: allocatable,
			Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: NodeAddress}, {Type: corev1.NodeHostName, Address: name}},
		},
	}
}

// setLabel sets a label the vendor has, to a value that is known.
func setLabel(labels map[string]string, key, value string) {
	if key != "" && value != "" {
		labels[key] = value
	}
}
