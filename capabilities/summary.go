package capabilities

import (
	"fmt"
	"sort"
	"strings"
)

// Assumptions sums up, in one sentence, what the capabilities declare
// about a cluster: the providers and their releases, the node pools and
// what selects them, the gateway. The CLI prints it when it renders with
// the embedded default, so that a user who forgot --capabilities sees what
// the output assumes about their cluster.
func (r *Resolved) Assumptions() string {
	var providers []string
	for _, p := range r.Providers {
		s := p.Name
		if p.Version != "" {
			s += " " + p.Version
		}
		providers = append(providers, s)
	}
	var pools []string
	for _, p := range r.NodePools {
		var sel []string
		for k, v := range p.Selector {
			sel = append(sel, k+"="+v)
		}
		sort.Strings(sel)
		s := fmt.Sprintf("%q (%s", p.Name, strings.Join(sel, ", "))
		if p.GPU != nil {
			s += "; " + p.GPU.ResourceName
		} else {
			s += "; no GPUs"
		}
		pools = append(pools, s+")")
	}
	gateway := "no gateway"
	if r.Gateway != nil {
		gateway = "the Gateway API Inference Extension " + r.Gateway.InferencePoolVersion
	}
	return fmt.Sprintf("every one of %s installed and ready; node pools %s; %s",
		strings.Join(providers, ", "), strings.Join(pools, " and "), gateway)
}
