package budget

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// The limits of one run's input.
const (
	// MaxBytes bounds the bytes one run reads.
	MaxBytes = hub.MaxInputBytes
	// MaxDocuments bounds the YAML documents (objects) one run reads.
	MaxDocuments = hub.MaxInputDocuments
	// MaxNodes bounds the YAML nodes of everything one run reads, counted
	// with aliases expanded, as the tools that read the output expand them.
	MaxNodes = hub.MaxInputNodes
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

// Exceeded is the error of a charge past a limit.
type Exceeded struct {
	// Limit is what ran out: "bytes", "documents" or "nodes".
	Limit string
}

func (e *Exceeded) Error() string {
	switch e.Limit {
	case "bytes":
		return fmt.Sprintf("brings the input past %s; one run reads at most %s (render fewer paths per run, or split the package)", hub.FormatBytes(MaxBytes), hub.FormatBytes(MaxBytes))
	case "documents":
		return fmt.Sprintf("brings the input past %d YAML documents; one run reads at most %d (render fewer paths per run, or split the package)", MaxDocuments, MaxDocuments)
	default:
		return fmt.Sprintf("brings the input past %d YAML nodes, counted with aliases expanded; one run reads at most %d (an alias bomb, or far more data than a repository of models holds)", MaxNodes, MaxNodes)
	}
}

// IsExceeded reports whether err is a charge past a limit.
func IsExceeded(err error) bool {
	var e *Exceeded
	return errors.As(err, &e)
}

// ReadAll reads r to its end, charging its bytes, and reads no more than
// one byte past what is left: a hostile file cannot exhaust memory before
// the limit is checked.
func (b *Budget) ReadAll(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(b.bytes)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > b.bytes {
		b.bytes = 0
		return nil, &Exceeded{Limit: "bytes"}
	}
	b.bytes -= len(data)
	return data, nil
}

// Document charges one parsed YAML document: one document, and its nodes
// with aliases expanded (measured without expanding them). A single
// document past yamlerr.MaxExpandedNodes is an alias bomb whatever is left.
func (b *Budget) Document(n *yaml.Node) error {
	if b.documents == 0 {
		return &Exceeded{Limit: "documents"}
	}
	b.documents--
	if err := yamlerr.CheckAliases(n); err != nil {
		return err
	}
	size := yamlerr.ExpandedNodes(n)
	if size > b.nodes {
		b.nodes = 0
		return &Exceeded{Limit: "nodes"}
	}
	b.nodes -= size
	return nil
}

// Stream charges every document of a YAML stream, parsed with kyaml's
// parser, the one kustomize reads with. Bytes that are not YAML are not an
// error here: whoever reads them as YAML refuses them with its own error,
// and a file that is not YAML (a configMapGenerator's data file) costs only
// its bytes.
func (b *Budget) Stream(data []byte) error {
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
