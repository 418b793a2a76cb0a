package cli

import (
	"errors"
	"fmt"
	"io"
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

// readDocuments reads the documents of one file as kio.ByteReader, which
// the CLI used before, reads the whole file (the path annotation on each,
// a file of one List unwrapped into its items; TestReadDocumentsMatchesKyaml
// holds the two equal), but one document at a time, each charged to b as
// soon as it is parsed and before anything is added to it: a file past the
// budget stops at the document that crosses it. Before any document is
// parsed, their number and the size of each are checked. kyaml's reader
// would parse the whole file first, and keep three copies of its text.
func readDocuments(data []byte, file string, b *budget.Budget) ([]*yaml.RNode, error) {
	chunks, err := splitDocuments(data)
	if err != nil {
		return nil, err
	}
	if err := b.Expect(len(chunks)); err != nil {
		return nil, err
	}
	for _, c := range chunks {
		if err := budget.CheckDocumentBytes(len(c)); err != nil {
			return nil, err
		}
	}
	var items []*yaml.RNode
	before, counted := 0, 0 // the file's lines before the chunk, counted up to a byte
	for i, c := range chunks {
		text := string(c)
		if i < len(chunks)-1 {
			text += "\n" // the line break the separator took, as kyaml keeps it
		}
		start := chunkStart(data, c)
		before += yamlerr.CountLines(data[counted:start])
		counted = start
		nodes, err := readDocument(strings.ReplaceAll(text, "\r\n", "\n"), i, len(chunks) == 1, file, b, before)
		if err != nil {
			return nil, err
		}
		items = append(items, nodes...)
	}
	return items, nil
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
// its error texts, and charges it to b as soon as it is parsed. An alias
// bomb is not an Exceeded: it is kept, unexpanded, for render.Render,
// which refuses it by the object's name. only is true when the document
// is the file's only one; before lines of the file precede it, and its
// nodes and errors count the file's lines.
func readDocument(text string, i int, only bool, file string, b *budget.Budget, before int) ([]*yaml.RNode, error) {
	doc := &yaml.Node{}
	err := yaml.NewDecoder(strings.NewReader(text)).Decode(doc)
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, yamlerr.InText(fmt.Errorf("MalformedYAMLError: %w", err), text, before)
	}
	yamlerr.ShiftLines(doc, before)
	if yaml.IsYNodeEmptyDoc(doc) {
		return nil, nil
	}
	n := yaml.NewRNode(doc)
	if err := charge(b, n, only); err != nil {
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
	items := []*yaml.RNode{n}
	if only && isList(meta, n) {
		// A file of one List stands for its items, unannotated, as kyaml
		// reads it.
		items = listItems(n)
	}
	for _, item := range items {
		stripGeneratedHeader(item)
	}
	return items, nil
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

// charge charges a parsed document to b, or the items it stands for when
// it is a file's one List: each item is a document of the run.
func charge(b *budget.Budget, n *yaml.RNode, only bool) error {
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
