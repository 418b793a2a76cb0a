// Package gpus is the one table of the GPU vendors the renderer knows:
// how each one's GPUs show on a node (the device plugin's extended
// resources and the node labeller's labels) and as Dynamic Resource
// Allocation devices (the DRA driver, the attribute that marks a whole
// GPU, the DeviceClasses whose devices are not whole GPUs).
//
// Discovery reads nodes and ResourceSlices through it, drift compares
// them through it, and the capability file's check refuses a DeviceClass
// through it. Adding a vendor is one row here (docs/architecture.md,
// "Adding a GPU vendor"); TestEveryVendorIsRead in discover holds every
// row to what discovery makes of a node that carries it.
package gpus
