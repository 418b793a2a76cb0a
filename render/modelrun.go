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
	objects    []emittedObject
}

// emittedObject is an object of the output: its node, its encoding when
// a worker encoded it (Options.EncodeConcurrently), or only its encoding
// and identity when it was encoded from the provider's object itself
// (Options.EncodeObject) and has no node.
type emittedObject struct {
	node    *yaml.RNode
	encoded *encoding
	id      outputID
}

// encoding is what Options.Encode returned for an object.
type encoding struct {
	yaml []byte
	key  string
	err  error
}

func encodeNode(encode func(*yaml.RNode) ([]byte, string, error), n *yaml.RNode) *encoding {
	e := &encoding{}
	e.yaml, e.key, e.err = encode(n)
	return e
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
		annotated, rendered, fits, l := renderDecided(node, md, d, caps, r.registry, r.models, m.problems)
		m.fits, m.problems = fits, l
		if annotated != nil {
			m.objects, m.problems = r.emit(annotated, rendered, m.file, m.problems)
		}
	}
	if m.skip != "" && r.opts.KeepSkipped {
		m.objects = []emittedObject{{node: node}}
	}
	if r.opts.EncodeConcurrently && r.opts.Encode != nil {
		for i := range m.objects {
			if r.out.over.Load() {
				break // past the output's budget: nothing more is encoded
			}
			if o := &m.objects[i]; o.encoded == nil {
				o.encoded = encodeNode(r.opts.Encode, o.node)
			}
		}
	}
	return m
}

// emit is the annotated model and the objects rendered for it, ready for
// the output: each encoded from the provider's object when the caller can
// (Options.EncodeObject), else as its node (toNode). Nil when one cannot
// be emitted.
func (r *modelRun) emit(annotated *yaml.RNode, rendered []providers.Object, modelFile string, l diag.List) ([]emittedObject, diag.List) {
	out := []emittedObject{{node: annotated}}
	for _, obj := range rendered {
		if r.opts.EncodeObject != nil && !r.out.over.Load() {
			if o, ok := encodeObject(obj, modelFile, r.opts.EncodeObject); ok {
				out = append(out, o)
				continue
			}
		}
		n, err := toNode(obj, modelFile)
		if err != nil {
			l.Errorf("", "internal error emitting %v: %v", obj["kind"], err)
			return nil, l
		}
		out = append(out, emittedObject{node: n})
	}
	return out, l
}
