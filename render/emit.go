package render

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"sync/atomic"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/providers"
)

// GeneratedDir is the directory, next to a ModelDeployment's file, where
// kpt writes the objects generated from it.
const GeneratedDir = "generated"

// toNode turns a rendered object into a YAML node with sorted keys and
// the kpt path annotation that files it next to its ModelDeployment.
func toNode(obj providers.Object, modelFile string) (*yaml.RNode, error) {
	node, err := objectNode(obj)
	if err != nil {
		return nil, err
	}
	n := yaml.NewRNode(node)
	name, err := ObjectFileName(n.GetNamespace(), n.GetKind(), n.GetName())
	if err != nil {
		return nil, err
	}
	file := path.Join(path.Dir(modelFile), GeneratedDir, name)
	if modelFile == "" {
		file = path.Join(GeneratedDir, name)
	}
	annotations, err := n.Pipe(yaml.LookupCreate(yaml.MappingNode, yaml.MetadataField, yaml.AnnotationsField))
	if err != nil {
		return nil, err
	}
	setIn(annotations.YNode(), kioutil.PathAnnotation, file)
	setIn(annotations.YNode(), kioutil.IndexAnnotation, "0")
	return n, nil
}

// output collects what Render emits: nodes, or their encoding when
// Options.Encode is set, plus what the collision check needs of each.
type output struct {
	encode  func(*yaml.RNode) ([]byte, string, error)
	ids     []outputID
	nodes   []*yaml.RNode
	encoded []Encoded
	// written is the encoded output's bytes so far; over is set once the
	// output passed its budget (budget.MaxOutputBytes and
	// MaxOutputDocuments), after which nothing more is encoded.
	written int
	over    bool
	// stopped is over, for the workers that encode ahead of the merge.
	stopped atomic.Bool
}

// overBudget reports the output past its budget, once.
func (o *output) overBudget(id outputID, what string) diag.List {
	if o.over {
		return nil
	}
	o.over = true
	o.stopped.Store(true)
	return diag.List{{Severity: diag.Error, Resource: id.resource, File: id.file,
		Message: fmt.Sprintf("brings the output past %s; one run may write at most what one run can read again (kpt runs the function over its own output): render fewer models per run, or split the package", what)}}
}

// outputID is what collisions needs of an output object.
type outputID struct {
	resource      diag.Resource
	generatedFrom string
	file          string
}

// add adds an object to the output; encoded is its encoding when a worker
// found it already (nil: add encodes it).
func (o *output) add(n *yaml.RNode, encoded *encoding) diag.List {
	annotations := n.GetAnnotations()
	id := outputID{resource: identity(n), generatedFrom: annotations[hub.AnnotationGeneratedFrom], file: fileIn(annotations)}
	o.ids = append(o.ids, id)
	if len(o.ids) > budget.MaxOutputDocuments {
		return o.overBudget(id, fmt.Sprintf("%d objects", budget.MaxOutputDocuments))
	}
	if o.encode == nil || o.over {
		o.nodes = append(o.nodes, n)
		return nil
	}
	if encoded == nil {
		encoded = &encoding{}
		encoded.yaml, encoded.key, encoded.err = o.encode(n)
	}
	b, key, err := encoded.yaml, encoded.key, encoded.err
	var fieldErr *FieldError
	switch {
	case errors.As(err, &fieldErr):
		return diag.List{{Severity: diag.Error, Resource: id.resource, File: id.file, Field: fieldErr.Field, Message: fieldErr.Message}}
	case err != nil:
		return diag.List{{Severity: diag.Error, Resource: id.resource, File: id.file, Message: fmt.Sprintf("cannot be encoded: %v", err)}}
	}
	if b == nil {
		return nil // left out of the output by Encode; it still counts for collisions
	}
	if o.written += len(b); o.written > budget.MaxOutputBytes {
		return o.overBudget(id, hub.FormatBytes(budget.MaxOutputBytes))
	}
	r := id.resource
	o.encoded = append(o.encoded, Encoded{SortKey: r.APIVersion + " " + r.Kind + " " + r.Namespace + " " + r.Name, CallerKey: key, YAML: b})
	return nil
}

// result sorts the output as SortItems does.
func (o *output) result(problems diag.List) Result {
	if o.encode == nil {
		SortItems(o.nodes)
		return Result{Items: o.nodes, Problems: problems}
	}
	sort.SliceStable(o.encoded, func(i, j int) bool { return o.encoded[i].SortKey < o.encoded[j].SortKey })
	return Result{Encoded: o.encoded, Problems: problems}
}

// collisions reports output objects with the same identity: a generated
// object may not silently replace an object the user keeps in the input.
func collisions(ids []outputID) diag.List {
	var l diag.List
	seen := map[diag.Resource]outputID{}
	for _, id := range ids {
		if id.resource.Kind == "" || id.resource.Name == "" {
			continue
		}
		prev, dup := seen[id.resource]
		if !dup {
			seen[id.resource] = id
			continue
		}
		gen, other := id, prev
		if prev.generatedFrom != "" {
			gen, other = prev, id
		}
		if gen.generatedFrom == "" {
			// Two objects of the user's own: not the renderer's business.
			continue
		}
		msg := "is rendered from ModelDeployment " + fmt.Sprintf("%q", gen.generatedFrom) + " but an object with the same apiVersion, kind, namespace and name is already in the input"
		if other.generatedFrom != "" {
			msg = fmt.Sprintf("is rendered from both ModelDeployment %q and %q; rename one of them", gen.generatedFrom, other.generatedFrom)
		} else if other.file != "" {
			msg += " (file " + other.file + "); rename one of them"
		}
		l = append(l, diag.Problem{Severity: diag.Error, Resource: gen.resource, Message: msg})
	}
	return l
}

// SortItems orders items by apiVersion, kind, namespace and name, the order
// the KRM function SDK writes them in, so every entry point emits the same
// sequence.
func SortItems(items []*yaml.RNode) {
	sortBy(items, SortKey)
}

// sortBy sorts nodes stably by a key computed once per node: reading a
// node's fields walks its YAML, too slow to repeat in every comparison.
func sortBy(items []*yaml.RNode, key func(*yaml.RNode) string) {
	keys := make(map[*yaml.RNode]string, len(items))
	for _, n := range items {
		keys[n] = key(n)
	}
	sort.SliceStable(items, func(i, j int) bool { return keys[items[i]] < keys[items[j]] })
}

// SortKey is what the output is ordered by: apiVersion, kind, namespace
// and name, separated by spaces (Encoded.SortKey).
func SortKey(n *yaml.RNode) string {
	return n.GetApiVersion() + " " + n.GetKind() + " " + n.GetNamespace() + " " + n.GetName()
}
