package manifest

import (
	"bytes"
	"io"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readerAnnotations are the annotations kio.ByteReader adds and
// kio.ByteWriter removes before it writes an object.
var readerAnnotations = []string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation} //nolint:staticcheck // kyaml still writes the legacy index

// EncodeDocument encodes an object as one document of a YAML stream,
// byte for byte as kio.ByteWriter writes it: without the annotations its
// reader adds, without empty annotations or metadata, its sequences
// indented as the reader recorded them (compact unless it recorded
// "wide"). It changes n in place, as the writer changes its copy: the
// callers hand each object over once. Joined by WriteStream, the
// documents are the writer's stream; where the writer would write JSON
// (one object alone, filed under a .json path) or unwrap a sequence its
// reader wrapped (WrapBareSeqNode), no caller writes such objects.
//
// The CLI encodes each object as soon as the engine renders it
// (render.Options.Encode) instead of handing the writer them all at the
// end, so a run holds text, not node trees.
func EncodeDocument(n *yaml.RNode) ([]byte, error) {
	var seqIndent string
	if !cleanAnnotations(n.Document()) {
		// As the writer does it, with kyaml's accessors.
		annotations := n.GetAnnotations()
		seqIndent = annotations[kioutil.SeqIndentAnnotation]
		for _, key := range readerAnnotations {
			if _, set := annotations[key]; set {
				if err := n.PipeE(yaml.ClearAnnotation(key)); err != nil {
					return nil, err
				}
			}
		}
		if err := yaml.ClearEmptyAnnotations(n); err != nil {
			return nil, err
		}
	}
	wide := yaml.SequenceIndentStyle(seqIndent) == yaml.WideSequenceStyle
	if b, ok := writeBlocks(func(w *blockWriter) bool { w.wide = wide; return w.document(n.Document()) }); ok {
		return b, nil
	}
	var b bytes.Buffer
	e := yaml.NewEncoderWithOptions(&b, &yaml.EncoderOptions{SeqIndent: yaml.SequenceIndentStyle(seqIndent)})
	if err := e.Encode(n.Document()); err != nil {
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	// A copy of the length written: callers keep thousands of these, and
	// the buffer's spare room would be a third of what they hold.
	return bytes.Clone(b.Bytes()), nil
}

// cleanAnnotations reports an object the writer would write unchanged:
// no annotation its reader adds, no empty annotations or metadata
// (yaml.ClearEmptyAnnotations removes both). It looks
// without kyaml's accessors, which build a map of the annotations (11
// allocations an object, on the CLI's largest inputs the most of any
// step), and says false whenever it is not sure.
func cleanAnnotations(obj *yaml.Node) bool {
	if obj.Kind == yaml.DocumentNode && len(obj.Content) == 1 {
		obj = obj.Content[0]
	}
	meta, sure := onlyMapping(obj, yaml.MetadataField)
	if !sure || meta == nil {
		return sure
	}
	if len(meta.Content) == 0 {
		return false
	}
	annotations, sure := onlyMapping(meta, yaml.AnnotationsField)
	if !sure || annotations == nil {
		return sure
	}
	if len(annotations.Content) == 0 {
		return false
	}
	for i := 0; i < len(annotations.Content); i += 2 {
		for _, key := range readerAnnotations {
			if annotations.Content[i].Value == key {
				return false
			}
		}
	}
	return true
}

// onlyMapping returns the mapping under key in m, nil when there is none,
// and false when that is not certain: a key of that text given twice, or
// whose value is no mapping (kyaml's accessors match keys by their text,
// whatever their tag).
func onlyMapping(m *yaml.Node, key string) (*yaml.Node, bool) {
	if m.Kind != yaml.MappingNode {
		return nil, true // no field at all
	}
	var found *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		if found != nil || m.Content[i+1].Kind != yaml.MappingNode {
			return nil, false
		}
		found = m.Content[i+1]
	}
	return found, true
}

// WriteStream writes documents (each from EncodeDocument, or any YAML
// document ending in a line break) as one YAML stream, as kio.ByteWriter
// writes its objects: a `---` line between two documents. It writes once.
func WriteStream(w io.Writer, documents [][]byte) error {
	size := 0
	for _, d := range documents {
		size += len(d) + len("---\n")
	}
	out := make([]byte, 0, size)
	for i, d := range documents {
		if i > 0 {
			out = append(out, "---\n"...)
		}
		out = append(out, d...)
	}
	_, err := w.Write(out)
	return err
}
