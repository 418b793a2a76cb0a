package discover

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
)

// Note explains one discovered fact: what was guessed, or what the cluster
// did not say. Field is the fact's path in the file, list items named by
// their name (spec.nodePools[l4].selector).
type Note struct {
	Field, Text string
}

// localConfig marks a capability file as configuration for the renderer
// that kustomize and kpt never apply.
const localConfig = "config.kubernetes.io/local-config"

// Discover describes the cluster as a capability file named name, with a
// note on every guess. The same Cluster gives the same file and notes.
func Discover(c *Cluster, name string) (*hub.ClusterCapabilities, []Note) {
	c.Sort()
	caps := &hub.ClusterCapabilities{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: hub.KindClusterCapabilities},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{localConfig: "true"},
		},
	}
	var notes, more []Note
	caps.Spec.Providers, notes = discoverProviders(c)
	caps.Spec.Gateway, more = discoverGateway(c)
	notes = append(notes, more...)
	caps.Spec.Autoscaling, more = discoverAutoscaling(c)
	notes = append(notes, more...)
	pools, more := Pools(c)
	for _, p := range pools {
		caps.Spec.NodePools = append(caps.Spec.NodePools, p.NodePool)
	}
	notes = append(notes, more...)
	return caps, notes
}
