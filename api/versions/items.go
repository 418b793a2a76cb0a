package versions

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/nearest"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// CheckAPIVersion refuses an object that looks meant for the renderer but
// would pass through it unread: an unknown kind or an unserved version of
// the airunway.ai API; a ModelDeployment or ClusterCapabilities of another
// group (`airunway.io`); a kind like ours in a group a typo away from
// ours. Passed through, such a model is applied as it is and renders
// nothing, beside models that did render: a run that looks like a
// success. Objects of other APIs, whatever their kind, pass. CheckShape
// must have passed. migrate refuses the same objects.
func CheckAPIVersion(n *yaml.RNode) (diag.Problem, bool) {
	field, msg := apiVersionProblem(n.GetApiVersion(), n.GetKind())
	if msg == "" {
		return diag.Problem{}, false
	}
	return diag.Problem{Severity: diag.Error, Resource: ItemRef(n), File: itemFile(n), Field: field, Message: msg}, true
}

// ownKinds are the kinds taken for ours in any group: no other API the
// renderer meets has them. ModelCatalog is not one: another API may well
// name a kind so; in a group a typo away from ours it is still refused
// (below).
var ownKinds = []string{hub.KindModelDeployment, hub.KindClusterCapabilities}

// apiVersionProblem is CheckAPIVersion on the object's apiVersion and
// kind: the field at fault and the message, "" when there is none.
func apiVersionProblem(apiVersion, kind string) (field, msg string) {
	group, _, grouped := strings.Cut(apiVersion, "/")
	if !grouped {
		group = "" // the core group: "v1"
	}
	switch {
	case group == hub.Group && !slices.Contains(hub.Kinds, kind):
		return "kind", fmt.Sprintf("%q is not a kind of the %s API: must be one of %s%s", kind, hub.Group, hub.QuoteList(hub.Kinds), nearest.Suggestion(kind, hub.Kinds))
	case group == hub.Group && !Serves(apiVersion, kind):
		return "apiVersion", NotServed(apiVersion, kind)
	case group == hub.Group:
		return "", ""
	case slices.Contains(ownKinds, kind):
		return "apiVersion", wrongGroup(apiVersion, group, kind)
	}
	meant, nearKind := nearest.Name(kind, hub.Kinds)
	if _, nearGroup := nearest.Name(group, []string{hub.Group}); !nearKind || !nearGroup {
		return "", ""
	}
	msg = wrongGroup(apiVersion, group, meant)
	if kind != meant {
		msg += fmt.Sprintf(", and kind %q is not %q", kind, meant)
	}
	return "apiVersion", msg
}

// wrongGroup is the message for one of our kinds in another group.
func wrongGroup(apiVersion, group, kind string) string {
	named := fmt.Sprintf("the group is %q", group)
	if group == "" {
		named = "it is of the core group"
	}
	return fmt.Sprintf("%q is not supported: %s, not %q, so the renderer would pass this object through unread; %s must use apiVersion %s", apiVersion, named, hub.Group, kind, servedFor(kind))
}

// servedFor lists the apiVersions that serve kind, quoted, joined by "or".
func servedFor(kind string) string {
	var names []string
	for _, v := range Served {
		if Serves(v.APIVersion, kind) {
			names = append(names, fmt.Sprintf("%q", v.APIVersion))
		}
	}
	return strings.Join(names, " or ")
}

// CheckShape reports an item kyaml's metadata accessors cannot read: they
// assume that the item, its `metadata`, and the annotations and labels in
// it are mappings, and index past the end of anything else (a list of odd
// length panics, an even one is misread as a map). It must run before any
// of them.
func CheckShape(n *yaml.RNode) (diag.Problem, bool) {
	bad := func(ref diag.Resource, field, msg string) (diag.Problem, bool) {
		return diag.Problem{Severity: diag.Error, Resource: ref, Field: field, Message: msg}, true
	}
	if n.YNode().Kind != yaml.MappingNode {
		return bad(diag.Resource{}, "", "an item must be an object (a YAML mapping), got "+nodeKind(n.YNode()))
	}
	ref := diag.Resource{APIVersion: scalarField(n, "apiVersion"), Kind: scalarField(n, "kind")}
	meta := field(n.YNode(), "metadata")
	if meta == nil || isNull(meta) {
		return diag.Problem{}, false
	}
	if meta.Kind != yaml.MappingNode {
		return bad(ref, "metadata", "must be an object (a YAML mapping), got "+nodeKind(meta))
	}
	ref.Namespace, ref.Name = scalarValue(field(meta, "namespace")), scalarValue(field(meta, "name"))
	for _, key := range []string{"name", "namespace"} {
		if f := field(meta, key); f != nil && f.Kind != yaml.ScalarNode {
			return bad(ref, "metadata."+key, "must be a string, got "+nodeKind(f))
		}
	}
	for _, key := range []string{"annotations", "labels"} {
		f := field(meta, key)
		if f == nil || isNull(f) {
			continue
		}
		if f.Kind != yaml.MappingNode {
			return bad(ref, "metadata."+key, "must be an object mapping names to strings, got "+nodeKind(f))
		}
	}
	return diag.Problem{}, false
}

// field is the value of key in the mapping m, as kyaml's RNode.Field
// finds it (the first such key), without the three allocations of each
// of its calls: CheckShape runs for every item of a run.
func field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalarField(n *yaml.RNode, key string) string { return scalarValue(field(n.YNode(), key)) }

// scalarValue is a scalar's value, through an alias; "" for anything
// else.
func scalarValue(v *yaml.Node) string {
	if v == nil {
		return ""
	}
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagNull }

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar"
	case yaml.AliasNode:
		return "an alias (write the mapping out in place)"
	}
	return "something else"
}

// itemFile is the file an item came from, as kpt and the CLI record it
// (kyaml's path annotation, or the legacy key older kpt and kustomize
// releases still write).
func itemFile(n *yaml.RNode) string {
	a := n.GetAnnotations()
	if p := a[kioutil.PathAnnotation]; p != "" {
		return p
	}
	return a[kioutil.LegacyPathAnnotation] //nolint:staticcheck // read for compatibility, never written
}

// CheckDocument fails closed, as kustomize does, on a document that is no
// Kubernetes object (no `apiVersion` or `kind`: a stray YAML file among the
// inputs), on one whose aliases would expand it into an alias bomb in the
// tools that read the output, and on one with more nodes than any real
// object, which would cost far more to write out than to read. It applies
// to every item, not only the renderer's own: all of them are passed on.
// The readers have charged every item to the run's input budget (package
// budget) before; this is the check of each item on its own.
func CheckDocument(n *yaml.RNode) diag.List {
	var l diag.List
	for _, field := range []string{"apiVersion", "kind"} {
		if scalarField(n, field) == "" {
			l.Errorf(field, "is missing: every document must be a Kubernetes object with `apiVersion` and `kind` (kustomize refuses it too); move other YAML out of the rendered paths")
		}
	}
	if err := yamlerr.CheckNodes(n.YNode()); err != nil {
		l.Errorf("", "%v", err)
	}
	return l.Attach(ItemRef(n), itemFile(n))
}
