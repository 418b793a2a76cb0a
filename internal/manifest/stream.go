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
// reader adds, without an empty annotations mapping, its sequences
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
	annotations := n.GetAnnotations()
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
	var b bytes.Buffer
	e := yaml.NewEncoderWithOptions(&b, &yaml.EncoderOptions{SeqIndent: yaml.SequenceIndentStyle(annotations[kioutil.SeqIndentAnnotation])})
	if err := e.Encode(n.Document()); err != nil {
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
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
