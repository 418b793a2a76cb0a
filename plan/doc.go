// Package plan is the GPU capacity plan: what the rendered models ask of
// each node pool, against what the capability file says the pool has.
//
// It reads the rendered objects, not the ModelDeployments: the pods that
// run are the ones the provider objects make once their controllers and
// operators act on them, and only each provider knows how its objects turn
// into pods (providers.PodCounter: a Dynamo service's replicas times its
// multinode nodes, a Ray cluster's head and worker groups, a KAITO
// Workspace's nodes); Kubernetes' own workload kinds are read the same way
// for every provider (providers.WorkloadPodGroups). A pod group belongs to
// the pool whose selector its required node labels contain, as the
// scheduler would see it, and is reported unplaced when it does not
// tolerate the pool's taints. A group whose labels select no pool (a Ray
// head without a CPU pool has none) goes where the scheduler may put it:
// the first pool, in a fixed order of preference, whose taints it
// tolerates and whose nodes have room (floating.go); unplaced when there
// is none.
//
// A pod's GPUs are its requests of the pool's extended resource, and on a
// pool whose GPUs are Dynamic Resource Allocation devices
// (`gpu.deviceClassName`) the devices its resource claims ask of that
// DeviceClass, read from the ResourceClaimTemplates among the items
// (claims.go). Claims the plan cannot count (a template that is not among
// them, a shared ResourceClaim, a DeviceClass the pool does not offer)
// leave the pods unplaced, with the reason: a pod that claims GPUs is
// never counted as one that takes none. So does a GPU extended resource
// requested on a DRA pool, whose nodes have none.
//
// Per pool the pods are packed onto nodes of the pool's size, largest
// first, each on the fullest node that holds it, never split across nodes
// (best fit decreasing): the number of nodes a scheduler that packs GPUs
// (NodeResourcesFit scored MostAllocated) uses, and the pods left pending
// when the pool has fewer. Rolling updates are counted apart (the extra
// pods at a rollout's peak), and so is cost: nodes × price × 730 hours,
// in integer micro-units so that every machine prints the same figures.
//
// The objects' quantities come from overrides too (an emptyDir's
// sizeLimit, a pod's overhead): each is checked before the pod spec is
// parsed (providers.TemplateGroup calls hub.CheckQuantities), and a pod
// whose requests add up beyond int64 milli-units is an error, so the
// packing's integers are exact.
//
// Compute is pure: items and a resolved capability file in, a Plan out.
// The CLI (`airunway-render plan`) renders, plans and prints.
package plan
