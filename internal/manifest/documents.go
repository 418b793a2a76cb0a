package manifest

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// documentSeparator is where kyaml's reader (kio.ByteReader) cuts a file
// into documents: any line that starts with `---`.
var documentSeparator = regexp.MustCompile(`\n---.*\n`)

// ReadDocuments reads the objects of one file as kio.ByteReader reads the
// whole file, with the path annotation set to file: the same objects,
// byte for byte, and the same error texts, except that the reader's index
// annotations are left out (no caller wants them). A file of one List or
// ResourceList stands for its items.
//
// Unlike kio.ByteReader it reads one document at a time, each charged to
// b as soon as it is parsed and before anything is added to it, so a file
// past the budget stops at the document that crosses it; before any
// document is parsed, their number and the size of each are checked.
// kyaml's reader would parse the whole file first, and keep three copies
// of its text. A document refused on its own (an alias bomb,
// yamlerr.CheckNodes) is not an error here: it is kept, unexpanded, for
// render.Render, which refuses it by the object's name. The nodes and
// errors count the lines of the whole file.
func ReadDocuments(data []byte, file string, b *budget.Budget) ([]*yaml.RNode, error) {
	var items []*yaml.RNode
	err := EachDocument(data, file, b, func(nodes []*yaml.RNode, _ Document) {
		items = append(items, nodes...)
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// Document is one document of a file as ReadDocuments cuts it, kept as
// text to be parsed again: a caller that holds thousands of objects
// (`render` of 10,000 models) lets go of a document's tree until it needs
// it, and holds its text instead, a twentieth of the memory.
type Document struct {
	text   string
	i      int
	only   bool
	file   string
	before int
}

// Parse parses the document again: the nodes EachDocument gave for it,
// as new trees. It charges a budget of its own; the document was charged
// to the run's when it was first read.
func (d Document) Parse() ([]*yaml.RNode, error) { return d.read(budget.New()) }

// read parses the document as kio.ByteReader does, charging b
// (readDocument).
func (d Document) read(b *budget.Budget) ([]*yaml.RNode, error) {
	return readDocument(d.text, d.i, d.only, d.file, b, d.before)
}

// EachDocument is ReadDocuments handing each document's nodes to each as
// soon as they are parsed, with the document, to parse them again after
// each let go of them.
func EachDocument(data []byte, file string, b *budget.Budget, each func(nodes []*yaml.RNode, again Document)) error {
	chunks, err := splitDocuments(data)
	if err != nil {
		return err
	}
	if err := b.Expect(len(chunks)); err != nil {
		return err
	}
	for _, c := range chunks {
		if err := budget.CheckDocumentBytes(len(c)); err != nil {
			return err
		}
	}
	before, counted := 0, 0 // the file's lines before the chunk, counted up to a byte
	for i, c := range chunks {
		text := string(c)
		if i < len(chunks)-1 {
			text += "\n" // the line break the separator took, as kyaml keeps it
		}
		start := chunkStart(data, c)
		before += yamlerr.CountLines(data[counted:start])
		counted = start
		doc := Document{text: strings.ReplaceAll(text, "\r\n", "\n"), i: i, only: len(chunks) == 1, file: file, before: before}
		nodes, err := doc.read(b)
		if err != nil {
			return err
		}
		each(nodes, doc)
	}
	return nil
}

// chunkStart is where c, a chunk of data from splitDocuments, starts in
// data: both share one array.
func chunkStart(data, c []byte) int { return cap(data) - cap(c) }

// splitDocuments cuts data where kio.ByteReader cuts it, and refuses a
// separator line with more than a comment after `---` as it does. (kyaml
// turns CRLF line breaks into LF first; cutting first and turning them
// after, per document, gives the same documents.)
func splitDocuments(data []byte) ([][]byte, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var chunks [][]byte
	prev := 0
	for _, loc := range documentSeparator.FindAllIndex(data, -1) {
		separator := string(data[loc[0]:loc[1]])
		if after := strings.TrimSpace(separator[4:]); after != "" && after[0] != '#' {
			return nil, fmt.Errorf("invalid document separator: %s", strings.TrimSpace(strings.ReplaceAll(separator, "\r\n", "\n")))
		}
		chunks = append(chunks, data[prev:loc[0]])
		prev = loc[1]
	}
	return append(chunks, data[prev:]), nil
}

// readDocument parses document i of a file as kio.ByteReader does, with
// its error texts, and charges it to b as soon as it is parsed. only is
// true when the document is the file's only one; before lines of the file
// precede it, and its nodes and errors count the file's lines.
func readDocument(text string, i int, only bool, file string, b *budget.Budget, before int) ([]*yaml.RNode, error) {
	doc, err := parseDocument(text)
	if err != nil {
		return nil, yamlerr.InText(fmt.Errorf("MalformedYAMLError: %w", err), text, before)
	}
	if doc == nil {
		return nil, nil
	}
	yamlerr.ShiftLines(doc, before)
	if yaml.IsYNodeEmptyDoc(doc) {
		return nil, nil
	}
	n := yaml.NewRNode(doc)
	if err := chargeDocument(b, n, only); err != nil {
		return nil, err
	}
	if err := kioutil.CopyLegacyAnnotations(n); err != nil {
		return nil, err
	}
	if _, err := n.Pipe(yaml.SetAnnotation(kioutil.PathAnnotation, filepath.ToSlash(file))); err != nil {
		return nil, err
	}
	if yaml.IsMissingOrNull(n) {
		return nil, nil
	}
	meta, err := n.GetMeta()
	if err != nil && !errors.Is(err, yaml.ErrMissingMetadata) {
		return nil, fmt.Errorf("[%d]: %w", i, err)
	}
	if only && isList(meta, n) {
		// A file of one List stands for its items, unannotated, as kyaml
		// reads it.
		return listItems(n), nil
	}
	return []*yaml.RNode{n}, nil
}

// isList reports a List or ResourceList that kio.ByteReader unwraps when
// it is the file's one document.
func isList(meta yaml.ResourceMeta, n *yaml.RNode) bool {
	return (meta.Kind == kio.ResourceListKind || meta.Kind == "List") && (n.Field("items") != nil || n.Field("functionConfig") != nil)
}

func listItems(n *yaml.RNode) []*yaml.RNode {
	var items []*yaml.RNode
	if f := n.Field("items"); f != nil {
		for _, item := range f.Value.Content() {
			items = append(items, yaml.NewRNode(item))
		}
	}
	return items
}

// chargeDocument charges a parsed document to b, or the items it stands
// for when it is a file's one List: each item is a document of the run.
func chargeDocument(b *budget.Budget, n *yaml.RNode, only bool) error {
	objects := []*yaml.RNode{n}
	if only {
		if meta, err := n.GetMeta(); (err == nil || errors.Is(err, yaml.ErrMissingMetadata)) && isList(meta, n) {
			objects = listItems(n)
			if err := b.Expect(len(objects)); err != nil {
				return err
			}
		}
	}
	for _, o := range objects {
		if err := b.Document(o.YNode()); budget.IsExceeded(err) {
			return err
		}
	}
	return nil
}
