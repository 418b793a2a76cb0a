package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// ResourceList is a ResourceList as a KRM function reads it.
type ResourceList struct {
	Items []*yaml.RNode // the item mappings, as parsed
	// FunctionConfig is the `functionConfig` mapping, nil when there is
	// none; an empty mapping is kpt's placeholder.
	FunctionConfig *yaml.Node
	Results        []*Result // the results of earlier functions
}

// Result is one entry of a ResourceList's `results`, with the YAML and
// JSON field names of kpt's function result (the SDK's fn.Result), so
// results read from the input are written back as the SDK would write
// them.
type Result struct {
	Message     string            `yaml:"message,omitempty" json:"message,omitempty"`
	Severity    string            `yaml:"severity,omitempty" json:"severity,omitempty"`
	ResourceRef *ResultRef        `yaml:"resourceRef,omitempty" json:"resourceRef,omitempty"`
	Field       *ResultField      `yaml:"field,omitempty" json:"field,omitempty"`
	File        *ResultFile       `yaml:"file,omitempty" json:"file,omitempty"`
	Tags        map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// ResultRef names the object a result is about.
type ResultRef struct {
	APIVersion string `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
	Kind       string `yaml:"kind,omitempty" json:"kind,omitempty"`
	Name       string `yaml:"name,omitempty" json:"name,omitempty"`
	Namespace  string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
}

// ResultField is the field of the object a result is about.
type ResultField struct {
	Path          string `yaml:"path,omitempty" json:"path,omitempty"`
	CurrentValue  any    `yaml:"currentValue,omitempty" json:"currentValue,omitempty"`
	ProposedValue any    `yaml:"proposedValue,omitempty" json:"proposedValue,omitempty"`
}

// ResultFile is the file holding the object a result is about.
type ResultFile struct {
	Path  string `yaml:"path,omitempty" json:"path,omitempty"`
	Index int    `yaml:"index,omitempty" json:"index,omitempty"`
}

// ReadResourceList reads a KRM function's input. It accepts exactly the
// inputs the SDK's ParseResourceList accepts, and reads them the same way
// (TestReadResourceListMatchesSDK, FuzzResourceListMatchesSDK):
//
//   - input of nothing but white space is an empty ResourceList;
//   - otherwise the input must hold exactly one object, a mapping whose
//     `kind` is the string "ResourceList" (`apiVersion` is not checked);
//   - `functionConfig`, when present, must be a mapping;
//   - `items`, when present, must be a sequence of mappings;
//   - `results` is read when it is a sequence, or a mapping whose `items`
//     is one (older kyaml wrote results that way); any other scalar is
//     ignored. The results must decode as results.
//
// Keys match only when they are string scalars, and `kind` counts only
// when it is a string, as in the SDK. Where the SDK panics (a YAML alias
// as the value of `items`, `functionConfig` or `results`, or of `group`,
// `version` or `kind` in the list, its function config or an item), the
// input is refused.
//
// kyaml's own reader (kio.ByteReader, which fn/framework uses too) is
// already linked, but it is not a replacement: it reads any YAML stream,
// so input that is not a ResourceList becomes items, and an `items`,
// `functionConfig` or `results` of the wrong shape passes. Run over the
// parity cases and the fuzz corpus (issue 20), it accepted or read
// differently 61 of 101 inputs; closing that gap would re-implement the
// checks this reader is.
//
// A budget of its own (package budget; the caller charged the bytes when
// it read them) is charged as the list is read: its documents as they are
// parsed, its items counted before anything is built for any of them, and
// each item and the function config charged as documents.
func ReadResourceList(in []byte) (*ResourceList, error) {
	rl := &ResourceList{}
	if len(bytes.TrimSpace(in)) == 0 {
		return rl, nil
	}
	b := budget.New()
	top, err := readOneObject(in, b)
	if err != nil {
		return nil, err
	}
	if err := noAliasedType(top, ""); err != nil {
		return nil, err
	}
	if k := Field(top, "kind"); StringScalar(k) != "ResourceList" {
		return nil, fmt.Errorf("`kind` must be %q, got %s; the input must be a ResourceList", "ResourceList", describeValue(k))
	}

	if fc := Field(top, "functionConfig"); fc != nil {
		if fc.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("`functionConfig` must be a mapping (an object), got %s", describeValue(fc))
		}
		if err := noAliasedType(fc, "functionConfig."); err != nil {
			return nil, err
		}
		if err := chargeObject(b, fc, "functionConfig"); err != nil {
			return nil, err
		}
		rl.FunctionConfig = fc
	}

	if items := Field(top, "items"); items != nil {
		if items.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("`items` must be a sequence, got %s", describeValue(items))
		}
		if err := b.Expect(len(items.Content)); err != nil {
			return nil, err
		}
		rl.Items = make([]*yaml.RNode, 0, len(items.Content))
		for i, item := range items.Content {
			at := fmt.Sprintf("items[%d]", i)
			if item.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("`%s` must be a mapping (an object), got %s", at, describeValue(item))
			}
			if err := noAliasedType(item, at+"."); err != nil {
				return nil, err
			}
			if err := chargeObject(b, item, at); err != nil {
				return nil, err
			}
			rl.Items = append(rl.Items, yaml.NewRNode(item))
		}
	}

	results, at := Field(top, "results"), "results"
	switch {
	case results == nil:
	case results.Kind == yaml.AliasNode:
		return nil, errors.New("`results` must not be a YAML alias; write the value out")
	case results.Kind == yaml.MappingNode: // as older kyaml wrote them
		results, at = Field(results, "items"), "results.items"
		if results != nil && results.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("`results.items` must be a sequence, got %s", describeValue(results))
		}
	case results.Kind != yaml.SequenceNode:
		results = nil // the SDK ignores a scalar
	}
	if results != nil {
		if err := results.Decode(&rl.Results); err != nil {
			var te *yaml.TypeError
			if errors.As(err, &te) {
				return nil, fmt.Errorf("`%s` must be a list of results (message, severity, resourceRef, field, file, tags): %s", at, strings.Join(te.Errors, "; "))
			}
			return nil, fmt.Errorf("`%s` must be a list of results: %w", at, err)
		}
	}
	return rl, nil
}

// readOneObject parses in as YAML and returns its one object: the input
// must be one document holding a mapping. (The SDK refuses a document
// that is not a mapping, and counts the mappings: the same inputs.) The
// documents after the first are counted, not kept, and no more of them
// than the budget's documents are parsed.
func readOneObject(in []byte, b *budget.Budget) (*yaml.Node, error) {
	var first *yaml.Node
	documents, objects := 0, 0
	dec := yaml.NewDecoder(bytes.NewReader(in))
	for {
		doc := &yaml.Node{}
		if err := dec.Decode(doc); err != nil {
			if err == io.EOF {
				break
			}
			return nil, err
		}
		documents++
		if err := b.Expect(documents); err != nil {
			return nil, err
		}
		if len(doc.Content) > 0 && first == nil {
			first = doc.Content[0]
		}
		objects += len(doc.Content) // a document of only comments has none
	}
	switch {
	case objects == 0:
		return nil, errors.New("the input holds no object; it must be one ResourceList, or empty")
	case objects > 1:
		return nil, fmt.Errorf("the input holds %d YAML documents; it must be one ResourceList, in one document", objects)
	case first.Kind != yaml.MappingNode:
		return nil, fmt.Errorf("the input is %s; a ResourceList must be a YAML mapping", describeValue(first))
	}
	return first, nil
}

// chargeObject charges one object of the list, at `at`, to the budget as
// a document. A charge past a limit is an error. An object refused on its
// own (yamlerr.CheckNodes) is left to whoever reads it (render.Render
// names it) when it is small as written, an alias bomb: a failed run
// writes its items back as they came, and writing out an object costs
// about 700 bytes per node. One of more nodes than an object may have as
// written is refused here, and nothing is written.
func chargeObject(b *budget.Budget, obj *yaml.Node, at string) error {
	err := b.Document(obj)
	if err == nil || budget.IsExceeded(err) {
		return err
	}
	if raw, _ := yamlerr.CountNodes(obj); raw > yamlerr.MaxExpandedNodes {
		return fmt.Errorf("`%s`: %w", at, err)
	}
	return nil
}

// noAliasedType refuses an object whose `group`, `version` or `kind` is a
// YAML alias: the SDK reads those three of every object it parses, and
// panics on an alias.
func noAliasedType(obj *yaml.Node, at string) error {
	for _, key := range []string{"group", "version", "kind"} {
		if v := Field(obj, key); v != nil && v.Kind == yaml.AliasNode {
			return fmt.Errorf("`%s%s` must not be a YAML alias; write the value out", at, key)
		}
	}
	return nil
}

// describeValue names what a node holds, for messages: a scalar's value
// in quotes (cut short), with its tag unless it is a string, else the
// node's kind.
func describeValue(n *yaml.Node) string {
	switch {
	case n == nil:
		return "none"
	case n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagNull:
		return "null"
	case n.Kind == yaml.ScalarNode:
		v, runes := n.Value, 0
		for i := range v {
			if runes++; runes > 40 {
				v = v[:i] + "..."
				break
			}
		}
		if n.Tag == yaml.NodeTagString {
			return fmt.Sprintf("%q", v)
		}
		return fmt.Sprintf("%q (%s)", v, n.Tag)
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a sequence"
	case n.Kind == yaml.AliasNode:
		return "a YAML alias"
	}
	return "a YAML document"
}
