package capsfile

import (
	"fmt"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
)

// checkReadable refuses a capability file the renderer would refuse to
// read, so that discover writes none: one larger than hub.MaxObjectBytes
// as text (the CLI reads no more of a capability file) or as JSON (the
// renderer's bound on every object), or nested deeper than
// hub.MaxObjectDepth. A cluster makes one when its nodes fall into
// thousands of pools: every distinct node-pool label value, GPU shape and
// set of taints is a pool of its own, and node labels and taints are
// written by kubelets, autoscalers and whoever may label Nodes.
func checkReadable(out []byte, pools, nodes int) error {
	var why string
	if len(out) > hub.MaxObjectBytes {
		why = fmt.Sprintf("would be %s (%d bytes); the renderer reads a capability file of at most %s", hub.FormatBytes(len(out)), len(out), hub.FormatBytes(hub.MaxObjectBytes))
	} else {
		js, err := sigsyaml.YAMLToJSON(out)
		if err != nil {
			return err
		}
		var msgs []string
		for _, p := range hub.CheckLimits(js, hub.KindClusterCapabilities) {
			msgs = append(msgs, strings.TrimSpace(p.Field+" "+p.Message))
		}
		if len(msgs) > 0 {
			why = "would be refused by the renderer: it " + strings.Join(msgs, "; ")
		}
	}
	if why == "" {
		return nil
	}
	return &TooLargeError{why: why, Pools: pools, Nodes: nodes}
}

// TooLargeError is a capability file discover refuses to write: the
// renderer would refuse to read it.
type TooLargeError struct {
	why string
	// Pools and Nodes are the cluster's discovered pools and its nodes.
	Pools, Nodes int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the capability file %s: the cluster's %d node(s) make %d node pools, one per distinct node-pool label value, GPU shape and set of taints; nothing was written. "+
		"Give the nodes of each pool one node-pool label value (%s, or the cloud's) and the same taints, or write the capability file by hand (docs/capability-file.md)",
		e.why, e.Nodes, e.Pools, hub.LabelNodePool)
}
