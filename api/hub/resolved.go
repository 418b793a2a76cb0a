package hub

import "github.com/airunway-render/airunway-render/diag"

// ResolvedCapabilities is one cluster as the renderer knows it: a checked
// capability file merged over the built-in provider descriptions (package
// capabilities resolves it). Every stage after selection reads it, the
// providers among them, so it holds data only; the compiled selection
// rules stay with the selection that runs them.
type ResolvedCapabilities struct {
	// Name is the capability file's metadata.name.
	Name string
	// Source says where the capabilities came from, for messages.
	Source    string
	Providers []*ResolvedProvider // sorted by name
	Gateway   *GatewayCapability
	NodePools []NodePool
	// Autoscaling is what can autoscale a model server; nil when nothing.
	Autoscaling *AutoscalingCapability
	// Warnings is the capability file's warning policy.
	Warnings diag.Policy
	// DownloadMiBPerSecond is the rate a model server downloads its
	// weights at (spec.modelDownload, else DefaultDownloadMiBPerSecond).
	DownloadMiBPerSecond int32
}

// Provider returns the installed provider with that name, nil when absent.
func (r *ResolvedCapabilities) Provider(name string) *ResolvedProvider {
	for _, p := range r.Providers {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// NodePool returns the node pool with that name, nil when absent.
func (r *ResolvedCapabilities) NodePool(name string) *NodePool {
	for i := range r.NodePools {
		if r.NodePools[i].Name == name {
			return &r.NodePools[i]
		}
	}
	return nil
}

// ResolvedProvider is one installed provider: the capability file's entry
// merged over the built-in description.
type ResolvedProvider struct {
	Name string
	// Version is the declared operator release, checked against the
	// supported range; "" for a provider without an operator.
	Version string
	Ready   bool
	Engines []EngineCapability
	Images  map[string]string
	// NodeAutoProvisioning is set when the operator provisions nodes itself.
	NodeAutoProvisioning *NodeAutoProvisioning
	// Workload is the capability file's choice of kind (KAITO), "" when
	// it makes none.
	Workload string
}

// Engine returns the provider's capability for an engine, nil when absent.
func (p *ResolvedProvider) Engine(name string) *EngineCapability {
	if p == nil {
		return nil
	}
	for i := range p.Engines {
		if p.Engines[i].Name == name {
			return &p.Engines[i]
		}
	}
	return nil
}
