package budget

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// The limits of one run's input (api/hub/limits.go says why these values).
const (
	// MaxBytes bounds the bytes one run reads.
	MaxBytes = hub.MaxInputBytes
	// MaxDocuments bounds the YAML documents (objects) one run reads.
	MaxDocuments = hub.MaxInputDocuments
	// MaxNodes bounds the YAML nodes of everything one run reads, counted
	// with aliases expanded, as the tools that read the output expand them.
	MaxNodes = hub.MaxInputNodes
	// MaxDocumentBytes bounds one YAML document: the parser builds a
	// document's whole tree before its nodes can be counted, and a document
	// holds at most about one node per byte, so this bounds the tree a
	// document can build before it is charged.
	MaxDocumentBytes = hub.MaxInputDocumentBytes
)

// The limits of one run's output: the objects a build or a render writes.
// They are the input's, because what one run writes the next must read:
// kpt runs the function over its own output, and a build's objects are
// the function's input.
const (
	// MaxOutputBytes bounds the bytes one run writes.
	MaxOutputBytes = MaxBytes
	// MaxOutputDocuments bounds the objects one run writes.
	MaxOutputDocuments = MaxDocuments
)

// The limits an Exceeded names.
const (
	LimitBytes         = "bytes"
	LimitDocuments     = "documents"
	LimitNodes         = "nodes"
	LimitDocumentBytes = "document bytes"
)

// Budget is what is left of one run's limits. It is not safe for
// concurrent use.
type Budget struct {
	bytes, documents, nodes int
}

// New is a full budget.
func New() *Budget {
	return &Budget{bytes: MaxBytes, documents: MaxDocuments, nodes: MaxNodes}
}

// Exceeded is the error of a charge past a limit. Its message completes
// a sentence that starts with what was read: "model.yaml: brings the
// input past ...".
type Exceeded struct {
	// Limit is what ran out: LimitBytes, LimitDocuments, LimitNodes or
	// LimitDocumentBytes.
	Limit string
}

func (e *Exceeded) Error() string {
	switch e.Limit {
	case LimitBytes:
		return fmt.Sprintf("brings the input past %s; one run must read at most %s (render fewer paths per run, or split the package)", hub.FormatBytes(MaxBytes), hub.FormatBytes(MaxBytes))
	case LimitDocuments:
		return fmt.Sprintf("brings the input past %d YAML documents; one run must read at most %d (render fewer paths per run, or split the package)", MaxDocuments, MaxDocuments)
	case LimitDocumentBytes:
		return fmt.Sprintf("holds a YAML document of more than %s; a document must be at most %s (the API server stores at most 1.5 MiB per object, so no Kubernetes object comes near it)", hub.FormatBytes(MaxDocumentBytes), hub.FormatBytes(MaxDocumentBytes))
	default:
		return fmt.Sprintf("brings the input past %d YAML nodes, counted with aliases expanded; one run must read at most %d (render fewer paths per run, split the package, or write out values that YAML aliases repeat)", MaxNodes, MaxNodes)
	}
}

// IsExceeded reports whether err is a charge past a limit.
func IsExceeded(err error) bool {
	var e *Exceeded
	return errors.As(err, &e)
}

// ReadAll reads r to its end, charging its bytes, and reads no more than
// one byte past what is left: a hostile file cannot exhaust memory before
// the limit is checked. A reader that knows its size (an open file) is
// refused from it when it is larger than what is left, before it is read,
// and otherwise read into a buffer of that size, allocated once.
func (b *Budget) ReadAll(r io.Reader) ([]byte, error) {
	limit := int64(b.bytes) + 1
	var buf bytes.Buffer
	if s, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if info, err := s.Stat(); err == nil && info.Size() > int64(b.bytes) {
			b.bytes = 0
			return nil, &Exceeded{Limit: LimitBytes}
		} else if err == nil && info.Size() > 0 {
			// MinRead more, so that ReadFrom reaches the end of the file
			// without growing the buffer.
			buf.Grow(int(min(info.Size(), limit)) + bytes.MinRead)
		}
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, limit)); err != nil {
		return nil, err
	}
	if buf.Len() > b.bytes {
		b.bytes = 0
		return nil, &Exceeded{Limit: LimitBytes}
	}
	b.bytes -= buf.Len()
	return buf.Bytes(), nil
}

// Again charges data once more, as when it was read: what was read once
// and is handed over again (kustomize reads a file once for each
// reference to it, and holds each copy) costs as much again.
func (b *Budget) Again(data []byte) error {
	if len(data) > b.bytes {
		b.bytes = 0
		return &Exceeded{Limit: LimitBytes}
	}
	b.bytes -= len(data)
	return b.Stream(data)
}

// Expect refuses, charging nothing, when more documents are coming than
// are left: a reader that can count the documents ahead (the separators of
// a file, the items of a ResourceList) refuses before it parses or builds
// any of them. Each is charged when it is read (Document).
func (b *Budget) Expect(documents int) error {
	if documents > b.documents {
		return &Exceeded{Limit: LimitDocuments}
	}
	return nil
}

// Document charges one parsed YAML document: one document, and its nodes
// with aliases expanded (measured without expanding them). An object past
// yamlerr.MaxExpandedNodes (an alias bomb, or far more data than any real
// object) is refused whatever is left, with yamlerr.CheckNodes's error,
// not an Exceeded; its nodes as they are are charged all the same, since
// a reader may keep it until it is reported.
func (b *Budget) Document(n *yaml.Node) error {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0] // the object, as every reader charges it
	}
	if b.documents == 0 {
		return &Exceeded{Limit: LimitDocuments}
	}
	b.documents--
	raw, expanded := yamlerr.CountNodes(n)
	charge, refused := expanded, error(nil)
	if expanded > yamlerr.MaxExpandedNodes {
		charge, refused = raw, yamlerr.CheckNodes(n)
	}
	if charge > b.nodes {
		b.nodes = 0
		return &Exceeded{Limit: LimitNodes}
	}
	b.nodes -= charge
	return refused
}

// CheckDocumentBytes refuses a document of more than MaxDocumentBytes,
// before it is parsed.
func CheckDocumentBytes(size int) error {
	if size > MaxDocumentBytes {
		return &Exceeded{Limit: LimitDocumentBytes}
	}
	return nil
}

// Stream charges every document of a YAML stream, parsed with kyaml's
// parser, the one kustomize reads with, one document at a time: a stream
// past a limit stops at the document that crosses it. Bytes that are not
// YAML are not an error here: whoever reads them as YAML refuses them with
// its own error, and a file that is not YAML (a configMapGenerator's data
// file) costs only its bytes.
func (b *Budget) Stream(data []byte) error {
	if err := CheckDocumentBytes(LargestDocument(data)); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil //nolint:nilerr // not YAML: its reader refuses it
		}
		if err := b.Document(&doc); err != nil {
			return err
		}
	}
}

// LargestDocument is the size in bytes of the largest YAML document of
// data, found without parsing it: documents are cut at every line that is
// a document start marker (`---` then a blank or the end of the line). The
// parser starts a document at each such line, or fails there (inside a
// quoted scalar or a flow collection), so no document it parses is larger.
// It may be smaller: `...` also ends a document.
func LargestDocument(data []byte) int {
	largest, start := 0, 0
	for i := 0; i < len(data); {
		next := bytes.IndexByte(data[i:], '\n')
		if next < 0 {
			break
		}
		line := i + next + 1 // the start of the next line
		if isDocumentStart(data[line:]) {
			largest = max(largest, line-start)
			start = line
		}
		i = line
	}
	return max(largest, len(data)-start)
}

// isDocumentStart reports whether rest starts with a document start marker.
func isDocumentStart(rest []byte) bool {
	if !bytes.HasPrefix(rest, []byte("---")) {
		return false
	}
	return len(rest) == 3 || bytes.IndexByte([]byte(" \t\r\n"), rest[3]) >= 0
}

// NodesAtMost is an upper bound on the YAML nodes data parses to, found
// without parsing it. Every node but a document's root is a mapping key, a
// mapping value or a sequence entry, and each of those is introduced by
// one of `:` (a key and its value), `-`, `,`, `[`, `{` or `?`; a
// document's root starts the stream or follows a line break. Counting
// those bytes anywhere, inside scalars and comments too, can only count
// more.
func NodesAtMost(data []byte) int {
	n := 1
	for _, c := range data {
		switch c {
		case ':', '-', ',', '[', '{', '?':
			n += 2
		case '\n':
			n++
		}
	}
	return n
}
