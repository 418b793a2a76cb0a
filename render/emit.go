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
	file, err := generatedFile(n.GetNamespace(), n.GetKind(), n.GetName(), modelFile)
	if err != nil {
		return nil, err
	}
	annotations, err := n.Pipe(yaml.LookupCreate(yaml.MappingNode, yaml.MetadataField, yaml.AnnotationsField))
	if err != nil {
		return nil, err
	}
	setIn(annotations.YNode(), kioutil.PathAnnotation, file)
	setIn(annotations.YNode(), kioutil.IndexAnnotation, "0")
	return n, nil
}

// generatedFile is the file a generated object is written to: in the
// generated directory beside its model's file.
func generatedFile(namespace, kind, name, modelFile string) (string, error) {
	base, err := ObjectFileName(namespace, kind, name)
	if err != nil {
		return "", err
	}
	if modelFile == "" {
		return path.Join(GeneratedDir, base), nil
	}
	return path.Join(path.Dir(modelFile), GeneratedDir, base), nil
}

// encodeObject encodes a rendered object with Options.EncodeObject, with
// the annotations toNode gives it; ok is false when the object is left to
// toNode: a field of its identity that is no string, a file name it
// cannot have (toNode reports it), or encode declining.
func encodeObject(obj providers.Object, modelFile string, encode func(map[string]any, []*yaml.Node) ([]byte, string, bool)) (emittedObject, bool) {
	meta, _ := obj[yaml.MetadataField].(map[string]any)
	annotations, _ := meta[yaml.AnnotationsField].(map[string]any)
	var fields [5]string
	for i, v := range []any{obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"], annotations[hub.AnnotationGeneratedFrom]} {
		s, isString := v.(string)
		if v != nil && !isString {
			return emittedObject{}, false
		}
		fields[i] = s
	}
	file, err := generatedFile(fields[2], fields[1], fields[3], modelFile)
	if err != nil {
		return emittedObject{}, false
	}
	b, key, ok := encode(obj, []*yaml.Node{
		annotationKey(kioutil.PathAnnotation), annotationValue(file),
		annotationKey(kioutil.IndexAnnotation), annotationValue("0"),
	})
	if !ok {
		return emittedObject{}, false
	}
	id := outputID{resource: diag.Resource{APIVersion: fields[0], Kind: fields[1], Namespace: fields[2], Name: fields[3]}, generatedFrom: fields[4], file: file}
	return emittedObject{encoded: &encoding{yaml: b, key: key}, id: id}, true
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
	// MaxOutputDocuments), after which nothing more is encoded, by the
	// merge nor by the workers that encode ahead of it.
	written int
	over    atomic.Bool
}

// overBudget reports the output past its budget, once.
func (o *output) overBudget(id outputID, what string) diag.List {
	if o.over.Load() {
		return nil
	}
	o.over.Store(true)
	return diag.List{{Severity: diag.Error, Resource: id.resource, File: id.file,
		Message: fmt.Sprintf("brings the output past %s; one run may write at most what one run can read again (kpt runs the function over its own output): render fewer models per run, or split the package", what)}}
}

// outputID is what collisions needs of an output object.
type outputID struct {
	resource      diag.Resource
	generatedFrom string
	file          string
}

// emit adds an emitted object to the output.
func (o *output) emit(e emittedObject) diag.List {
	if e.node == nil {
		return o.put(e.id, nil, e.encoded)
	}
	return o.add(e.node, e.encoded)
}

// add adds an object to the output; encoded is its encoding when a worker
// found it already (nil: add encodes it).
func (o *output) add(n *yaml.RNode, encoded *encoding) diag.List {
	annotations := n.GetAnnotations()
	id := outputID{resource: identity(n), generatedFrom: annotations[hub.AnnotationGeneratedFrom], file: fileIn(annotations)}
	return o.put(id, n, encoded)
}

// put adds an object of identity id to the output: its node n, or only
// its encoding (n nil; encoded is then set).
func (o *output) put(id outputID, n *yaml.RNode, encoded *encoding) diag.List {
	o.ids = append(o.ids, id)
	if len(o.ids) > budget.MaxOutputDocuments {
		return o.overBudget(id, fmt.Sprintf("%d objects", budget.MaxOutputDocuments))
	}
	if o.encode == nil || o.over.Load() {
		o.nodes = append(o.nodes, n)
		return nil
	}
	if encoded == nil {
		encoded = encodeNode(o.encode, n)
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
