package render

import (
	"slices"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
)

// The emit stage's first part: the ModelDeployment carries the decisions
// made for it, as annotations a later run, plan and the status reporter read.

// annotateModel returns a copy of the ModelDeployment with the decisions
// recorded, and paused for an upstream AI Runway controller that may run
// in the same cluster: GitOps owns it now. The copy is of the path to the
// annotations (copyToAnnotations); the rest it shares with node, which
// stays as it was (its lines name the fields of problems).
func annotateModel(node *yaml.RNode, d Decision) (*yaml.RNode, error) {
	out := copyToAnnotations(node)
	// One look-up for the fourteen annotations: kyaml's path getter was
	// most of their cost. The first is never empty, so the mapping is
	// created where kyaml's setter would create it.
	annotations, err := out.Pipe(yaml.LookupCreate(yaml.MappingNode, yaml.MetadataField, yaml.AnnotationsField))
	if err != nil {
		return nil, err
	}
	for _, kv := range [][2]string{
		{hub.AnnotationReconcilePause, "true"},
		{hub.AnnotationEngine, d.Engine},
		{hub.AnnotationEngineReason, d.EngineReason},
		{hub.AnnotationProvider, d.Provider},
		{hub.AnnotationProviderReason, d.ProviderReason},
		{hub.AnnotationProviderVersion, d.ProviderVersion},
		{hub.AnnotationWorkload, d.Workload},
		{hub.AnnotationNodePool, d.NodePool},
		{hub.AnnotationNodePoolReason, d.NodePoolReason},
		{hub.AnnotationServedName, d.ServedName},
		{hub.AnnotationEndpoint, d.Endpoint},
		{hub.AnnotationAPIFormats, d.APIFormats},
		{hub.AnnotationHardwareFit, d.HardwareFit},
		{hub.AnnotationHardwareFitReason, d.HardwareFitReason},
	} {
		if kv[1] == "" {
			// Drop a decision an earlier render recorded and this one
			// lacks, as kyaml's ClearAnnotation does.
			if err := annotations.PipeE(yaml.FieldClearer{Name: kv[0]}); err != nil {
				return nil, err
			}
			continue
		}
		setIn(annotations.YNode(), kv[0], kv[1])
	}
	return out, nil
}

// copyToAnnotations copies the nodes on the path from node to its
// `metadata.annotations` (the document, the object, its metadata and its
// annotations, as far as they are there), each with its own list of
// children, and shares every other node with node. Annotating the copy
// leaves node as it was; copying the whole tree was a twentieth of the
// function's allocations. Nothing in a rendering changes a shared node:
// the output is encoded, and a caller that keeps Items owns them.
func copyToAnnotations(node *yaml.RNode) *yaml.RNode {
	shallow := func(n *yaml.Node) *yaml.Node {
		c := *n
		c.Content = slices.Clone(n.Content)
		return &c
	}
	doc := node.Document()
	if doc == nil {
		return node.Copy()
	}
	out := shallow(doc)
	n := out
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) != 1 {
			return node.Copy()
		}
		n.Content[0] = shallow(n.Content[0])
		n = n.Content[0]
	}
	for _, key := range []string{yaml.MetadataField, yaml.AnnotationsField} {
		i := valueIndex(n, key)
		if i < 0 {
			break
		}
		n.Content[i] = shallow(n.Content[i])
		n = n.Content[i]
	}
	return yaml.NewRNode(out)
}

// valueIndex is the index among m's children of the value of key, where
// kyaml's field lookup finds it (the first such key); -1 when m is no
// mapping or has no such key.
func valueIndex(m *yaml.Node, key string) int {
	if m.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i + 1
		}
	}
	return -1
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
	setIn(annotations.YNode(), key, value)
	return nil
}

// setIn sets key to value in the annotations mapping m, as setAnnotation.
func setIn(m *yaml.Node, key, value string) {
	v := annotationValue(value)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			// A new node in the old one's place, not the old one
			// overwritten: a copy of a model (copyToAnnotations) shares
			// it with the model.
			v.Style = m.Content[i+1].Style
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, annotationKey(key), v)
}

// annotationKey and annotationValue are the nodes setIn adds for a new
// annotation.
func annotationKey(key string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: key}
}

func annotationValue(value string) *yaml.Node {
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: value}
	if yaml11NonString(value) {
		v.Style = yaml.DoubleQuotedStyle
	}
	return v
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
