package render

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
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

// annotateModel returns a copy of the ModelDeployment with the decisions
// recorded, and paused for an upstream AI Runway controller that may run
// in the same cluster: GitOps owns it now.
func annotateModel(node *yaml.RNode, d Decision) (*yaml.RNode, error) {
	out := node.Copy()
	for _, kv := range [][2]string{
		{hub.AnnotationReconcilePause, "true"},
		{hub.AnnotationEngine, d.Engine},
		{hub.AnnotationEngineReason, d.EngineReason},
		{hub.AnnotationProvider, d.Provider},
		{hub.AnnotationProviderReason, d.ProviderReason},
		{hub.AnnotationProviderVersion, d.ProviderVersion},
		{hub.AnnotationNodePool, d.NodePool},
		{hub.AnnotationNodePoolReason, d.NodePoolReason},
		{hub.AnnotationServedName, d.ServedName},
		{hub.AnnotationEndpoint, d.Endpoint},
	} {
		if kv[1] == "" {
			// Drop a decision an earlier render recorded and this one lacks.
			if err := out.PipeE(yaml.ClearAnnotation(kv[0])); err != nil {
				return nil, err
			}
			continue
		}
		if err := setAnnotation(out, kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SetAnnotation is setAnnotation, for the CLI's edits of models in place
// (`plan --fleet --write`).
func SetAnnotation(n *yaml.RNode, key, value string) error { return setAnnotation(n, key, value) }

// setAnnotation sets a string annotation as kyaml's SetField would, so
// the bytes written do not change: a new annotation whose value YAML 1.1
// would read as another type ("yes", "1.5", "a: b") is double-quoted; an
// existing one keeps the style its value had, even plain. SetField asks a YAML 1.1
// parser about every value, which was a fifth of the cost of emitting;
// the answer is kept per value here.
func setAnnotation(n *yaml.RNode, key, value string) error {
	annotations, err := n.Pipe(yaml.LookupCreate(yaml.MappingNode, yaml.MetadataField, yaml.AnnotationsField))
	if err != nil {
		return err
	}
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: value}
	if yaml11NonString(value) {
		v.Style = yaml.DoubleQuotedStyle
	}
	m := annotations.YNode()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v.Style = m.Content[i+1].Style
			*m.Content[i+1] = *v
			return nil
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return nil
}

// yaml11Answers caches yaml.IsValueNonString per value: annotation values
// repeat (engines, providers, pools, reasons), except the kpt path of each
// generated object, which pathLike answers without a parser.
var yaml11Answers sync.Map

func yaml11NonString(value string) bool {
	if pathLike(value) {
		return false
	}
	if v, ok := yaml11Answers.Load(value); ok {
		return v.(bool)
	}
	nonString := yaml.IsValueNonString(value)
	yaml11Answers.Store(value, nonString)
	return nonString
}

// pathLike reports a value of lower-case letters, digits and ".-_/" with
// at least one "/": no YAML 1.1 boolean, number, null or timestamp has a
// slash, so such a value is always read as a string.
func pathLike(value string) bool {
	slash := false
	for _, c := range value {
		switch {
		case c == '/':
			slash = true
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
		default:
			return false
		}
	}
	return slash
}

// ObjectFileName is the stable file name of an object in a rendered
// directory: [<namespace>/]<kind>_<name>.yaml, kind in lower case. The
// parts come from objects that pass through, which a repository controls,
// so each must be what the API server accepts and one path segment: a
// namespace a DNS-1123 label; a kind and a name neither `.` nor `..`, and
// without `/`, `\`, `%` or control characters. Anything else is a
// *FieldError: the name would lead out of the directory.
func ObjectFileName(namespace, kind, name string) (string, error) {
	if namespace != "" {
		if errs := utilvalidation.IsDNS1123Label(namespace); len(errs) > 0 {
			return "", &FieldError{Field: "metadata.namespace", Message: fmt.Sprintf("is %q: a namespace must be a DNS-1123 label (%s)", namespace, errs[0])}
		}
	}
	if err := pathSegment(kind); err != "" {
		return "", &FieldError{Field: "kind", Message: fmt.Sprintf("is %q: a kind %s", kind, err)}
	}
	if name != "" {
		if err := pathSegment(name); err != "" {
			return "", &FieldError{Field: "metadata.name", Message: fmt.Sprintf("is %q: a name %s", name, err)}
		}
	}
	return path.Join(namespace, strings.ToLower(kind)+"_"+name+".yaml"), nil
}

// pathSegment says what is wrong with s as one segment of an API path
// (apimachinery's path segment rules, the API server's test of every
// name) and of a file name on any system; "" when nothing is.
func pathSegment(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > utilvalidation.DNS1123SubdomainMaxLength:
		return fmt.Sprintf("must be at most %d characters", utilvalidation.DNS1123SubdomainMaxLength)
	case s == "." || s == "..":
		return "must not be `.` or `..`"
	case !utf8.ValidString(s):
		return "must be UTF-8 text"
	case strings.ContainsFunc(s, func(r rune) bool { return r == '/' || r == '\\' || r == '%' || unicode.IsControl(r) }):
		return "must not contain `/`, `\\`, `%` or control characters"
	}
	return ""
}

// FieldError is a problem with one field of an object, for
// Options.Encode to report: Render reports it at the field.
type FieldError struct {
	Field, Message string
}

func (e *FieldError) Error() string { return "`" + e.Field + "` " + e.Message }

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
	for _, kv := range [][2]string{{kioutil.PathAnnotation, file}, {kioutil.IndexAnnotation, "0"}} {
		if err := setAnnotation(n, kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
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
}

// overBudget reports the output past its budget, once.
func (o *output) overBudget(id outputID, what string) diag.List {
	if o.over {
		return nil
	}
	o.over = true
	return diag.List{{Severity: diag.Error, Resource: id.resource, File: id.file,
		Message: fmt.Sprintf("brings the output past %s; one run may write at most what one run can read again (kpt runs the function over its own output): render fewer models per run, or split the package", what)}}
}

// outputID is what collisions needs of an output object.
type outputID struct {
	resource      diag.Resource
	generatedFrom string
	file          string
}

func (o *output) add(n *yaml.RNode) diag.List {
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
	b, key, err := o.encode(n)
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
	sortBy(items, sortKey)
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

func sortKey(n *yaml.RNode) string {
	return n.GetApiVersion() + " " + n.GetKind() + " " + n.GetNamespace() + " " + n.GetName()
}
