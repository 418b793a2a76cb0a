// Package discover reads what a live cluster says about itself and sets it
// beside a capability file: the cluster-facing half of the capability
// file, kept out of the pure renderer.
//
// The pipeline has three steps, each usable alone:
//
//   - Read lists what discovery needs — Nodes, the metadata of
//     CustomResourceDefinitions and Gateways, Deployments, and Dynamic
//     Resource Allocation's DeviceClasses and ResourceSlices where
//     resource.k8s.io/v1 is served — into a Cluster, a plain snapshot.
//     Nothing else is read: no Secret, no Pod, no ConfigMap. What the
//     cluster's users write is bounded: each list is read in pages and
//     refused past MaxListItems, and every quantity (a Node's allocatable
//     is its kubelet's to write) is checked before it is parsed. A
//     ResourceSlice is kept compacted as it is read (dra.go): devices of
//     one content once, with a count, their identity attributes (uuid,
//     PCI address) dropped, past the API server's limits refused, and the
//     distinct contents kept bounded by DeviceBudget.
//   - Discover turns a Cluster into a ClusterCapabilities: node pools
//     grouped by the cloud's node-pool label (or GPU shape), their GPU
//     Feature Discovery facts, taints and allocatable GPUs; the providers
//     whose CRDs are installed, with the operator release their Deployment
//     shows; the Gateway API bundle and the Inference Extension. Nodes
//     whose GPUs are DRA devices (classified by evaluating each
//     DeviceClass's CEL selectors as the scheduler does) make pools with
//     gpu.deviceClassName, the attributes their devices share and a
//     productName selector. Every guess
//     is returned as a Note, which package capsfile writes as a YAML
//     comment beside the field it explains.
//   - Compare holds a declared capability file against a Cluster and
//     returns the declared facts the cluster contradicts; a DRA pool's
//     class, device count, memory and attributes are read from its nodes'
//     ResourceSlices, and each declared selector is evaluated on them. The status
//     reporter runs it on its informer caches to write the
//     CapabilitiesCurrent condition.
//
// Writing capability files — a discovered one, or a hand-written one
// merged with a Cluster's facts (`capabilities discover --merge`) — is
// package capsfile's, so that the reporter links no YAML library.
//
// The same Cluster gives the same output, byte for byte: every list is
// sorted before it is read.
package discover
