package fit

// KAITO sizes a preset's replica itself: its Workspace controller's node
// estimator decides how many GPU nodes one replica spans, from the
// preset's checkpoint size (TotalSafeTensorFileSize), its KV cache bytes
// per token (BytesPerToken: 2 × layers × KV heads × head size × 2) and
// the GPUs of the selected nodes, and fails the Workspace when a GPU is
// too small for even the fixed reserve. KAITOSizing repeats that
// arithmetic, so that the render fails where KAITO would, and says how
// many nodes KAITO will take.
//
// Source: kaito-project/kaito, pkg/workspace/estimator/
// advancednodesestimator/estimator.go (v0.8.0, v0.9.x) and
// nodesestimator/estimator.go (v0.10.0 to v0.12.0), EstimateNodeCount:
// a model of weights × 1.02, 0.84 of each GPU (vLLM's
// --gpu-memory-utilization as KAITO launches it), a reserve per GPU of
// 2.3 GiB plus the KV cache of one sequence of max-model-len (2048
// unless the inference config says otherwise) divided by the node's
// GPUs; from v0.11.0 the room left for weights is divided by 1.05 (an
// overhead that grows with the weight share of a GPU).
const (
	kaitoUtilization    = 0.84
	kaitoWeightFactor   = 1.02
	kaitoBaseReserve    = 2.3 * (1 << 30)
	kaitoScaledFactor   = 0.05
	KAITODefaultContext = 2048
)

// KAITOSizing is what KAITO's node estimator decides for one replica.
type KAITOSizing struct {
	// Nodes is the number of nodes one replica spans (the estimator's
	// nodeCountPerReplica); 0 when the GPUs are too small.
	Nodes int
	// GPUs is the fewest GPUs the weights need (the estimator's minGPUs).
	GPUs int
	// WeightsMiB is the model as vLLM holds it (× 1.02), ReserveMiB what
	// each GPU keeps besides weights, UsableMiB the 0.84 share of one GPU,
	// RoomMiB the weights one GPU holds.
	WeightsMiB, ReserveMiB, UsableMiB, RoomMiB int64
	// Context is the sequence length the KV cache is counted for.
	Context int
}

// TooSmall reports whether one GPU cannot even hold the reserve: KAITO
// fails the Workspace ("GPU memory … is too small").
func (k KAITOSizing) TooSmall() bool { return k.Nodes == 0 }

// KAITO runs the estimator for a model on nodes of gpusPerNode GPUs of
// gpuMiB each. scaledOverhead is true from KAITO 0.11.0.
func KAITO(m Model, context int, gpuMiB int64, gpusPerNode int, scaledOverhead bool) KAITOSizing {
	if context <= 0 {
		context = KAITODefaultContext
	}
	perGPU := float64(gpuMiB) * mib
	usable := perGPU * kaitoUtilization
	weights := float64(m.Weights()) * kaitoWeightFactor
	reserve := kaitoBaseReserve + float64(int64(context)*m.KVPerToken(2))/float64(gpusPerNode)
	k := KAITOSizing{WeightsMiB: int64(weights / mib), ReserveMiB: int64(reserve / mib), UsableMiB: int64(usable / mib), Context: context}
	if usable <= reserve {
		return k
	}
	room := usable - reserve
	if scaledOverhead {
		room /= 1 + kaitoScaledFactor
	}
	k.RoomMiB = int64(room / mib)
	k.GPUs = int(weights/room) + 1
	k.Nodes = (k.GPUs + gpusPerNode - 1) / gpusPerNode
	return k
}
