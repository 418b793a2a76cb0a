package render

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/providers"
)

// modelRun renders the models of one Render, each on whichever worker
// inOrder gives it (render), for Render to merge in the queue's order.
type modelRun struct {
	caps     *capabilities.Resolved
	registry map[string]providers.Provider
	models   map[string]fit.Model
	opts     Options
	out      *output
	// seen is the file of each model identity rendered so far, read and
	// written only in a model's turn, in the queue's order.
	seen map[string]string
}

// renderedModel is one model of the queue as a worker leaves it.
type renderedModel struct {
	node  *yaml.RNode // nil when a deferred model could not be read again
	taken diag.List   // why not
	id    diag.Resource
	file  string
	// firstIn is set for a model defined twice: the file of the first
	// ("" when not known). Nothing else is kept of it.
	firstIn *string
	// assignment refuses the model's cluster assignment; nothing else is
	// kept of it.
	assignment diag.List
	skip       string // why the model is not this cluster's
	problems   diag.List
	fits       []fit.Verdict
	objects    []*yaml.RNode
	// encodings are the objects' Options.Encode results, when the worker
	// encoded them (Options.EncodeConcurrently).
	encodings []encoding
}

// encoding is what Options.Encode returned for an object.
type encoding struct {
	yaml []byte
	key  string
	err  error
}

// encoding is the j-th object's encoding, nil when the worker left it to
// the merge.
func (m *renderedModel) encoding(j int) *encoding {
	if j < len(m.encodings) {
		return &m.encodings[j]
	}
	return nil
}

// render renders one model of the queue. Everything but the duplicate
// check and the selection of the engine and provider runs alongside the
// other workers; those two run in the model's turn, so that they see the
// models before it exactly as one goroutine rendering the queue in order
// would.
func (r *modelRun) render(q queued, t *turn) (m renderedModel) {
	m.node, m.taken = q.take()
	if m.node == nil {
		return m
	}
	node, caps := m.node, r.caps
	m.id, m.file = identity(node), fileOf(node)
	m.assignment = fleetAssignment(node, caps, r.opts.WeighUnassigned)
	var md *hub.ModelDeployment
	if len(m.assignment) == 0 {
		if m.skip = fleetSkip(node, caps); m.skip == "" {
			md, m.problems, m.skip = decodeForCluster(node, caps)
		}
	}

	t.enter()
	if first, dup := r.seen[m.id.String()]; dup {
		return renderedModel{node: node, id: m.id, file: m.file, firstIn: &first}
	}
	r.seen[m.id.String()] = m.file
	var d Decision
	decided := false
	if md != nil {
		d, decided = decide(md, caps, &m.problems)
	}
	t.leave()

	if decided {
		m.objects, m.fits, m.problems = renderDecided(node, md, d, caps, r.registry, r.models, m.problems)
	}
	if m.skip != "" && r.opts.KeepSkipped {
		m.objects = []*yaml.RNode{node}
	}
	if r.opts.EncodeConcurrently && r.opts.Encode != nil {
		m.encodings = make([]encoding, 0, len(m.objects))
		for _, n := range m.objects {
			if r.out.stopped.Load() {
				break // past the output's budget: nothing more is encoded
			}
			var e encoding
			e.yaml, e.key, e.err = r.opts.Encode(n)
			m.encodings = append(m.encodings, e)
		}
	}
	return m
}
