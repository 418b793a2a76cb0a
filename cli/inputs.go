package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"weak"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/internal/safefile"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
	"github.com/airunway-render/airunway-render/render"
)

// files is where a command reads its YAML: the machine's file system for
// `render` and `migrate` (the user names the paths), or a directory it must
// not leave, through an os.Root, for `diff` (a snapshot of a revision) and
// the Argo CD plugin (the repository), whose files a pull request controls.
type files interface {
	open(name string) (io.ReadCloser, error)
	stat(name string) (fs.FileInfo, error)
	walk(name string, fn fs.WalkDirFunc) error
}

// hostFiles reads paths as the user wrote them, and `-` from stdin when
// stdin is set. With a scope (namedHostFiles), a file found in a named
// directory must not lead outside the paths named, symbolic links
// followed: the directory is a repository's.
type hostFiles struct {
	stdin io.Reader
	scope *namedScope
}

// namedHostFiles is hostFiles confined to the paths named (the inputs and
// the capability file); close releases the scope.
func namedHostFiles(stdin io.Reader, paths ...string) (h hostFiles, close func(), err error) {
	scope, err := newNamedScope(paths)
	if err != nil {
		return hostFiles{}, nil, err
	}
	return hostFiles{stdin: stdin, scope: scope}, scope.close, nil
}

func (h hostFiles) open(name string) (io.ReadCloser, error) {
	if name == stdinName && h.stdin != nil {
		return io.NopCloser(h.stdin), nil
	}
	if h.scope != nil {
		file, err := h.scope.locate(name)
		if err != nil {
			return nil, err
		}
		f, _, err := file.open(os.O_RDONLY)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	return opened(safefile.Open(name, os.O_RDONLY))
}

func (h hostFiles) stat(name string) (fs.FileInfo, error) {
	if name == stdinName && h.stdin != nil {
		return stdinInfo{}, nil
	}
	return os.Stat(name)
}

func (hostFiles) walk(name string, fn fs.WalkDirFunc) error {
	return filepath.WalkDir(name, fn)
}

// rootFiles reads paths relative to dir, a directory of the root, and only
// inside the root: a symbolic link may lead elsewhere in the root, never
// out. os.Root refuses an escape at every open, not at a check before.
type rootFiles struct {
	root *os.Root
	dir  string // slash path in the root; "." for the root itself
}

// in is the path of name in the root.
func (r rootFiles) in(name string) string { return path.Join(r.dir, filepath.ToSlash(name)) }

func (r rootFiles) open(name string) (io.ReadCloser, error) {
	return opened(safefile.OpenIn(r.root, r.in(name), os.O_RDONLY))
}

func (r rootFiles) stat(name string) (fs.FileInfo, error) { return r.root.Stat(r.in(name)) }

// walk walks name, handing fn the paths relative to dir, as the caller
// named them.
func (r rootFiles) walk(name string, fn fs.WalkDirFunc) error {
	start := r.in(name)
	return fs.WalkDir(r.root.FS(), start, func(p string, d fs.DirEntry, err error) error {
		rel := name
		if p != start {
			rel = path.Join(filepath.ToSlash(name), strings.TrimPrefix(p, start+"/"))
		}
		return fn(rel, d, err)
	})
}

func (r rootFiles) readDir(name string) ([]fs.DirEntry, error) {
	return fs.ReadDir(r.root.FS(), r.in(name))
}

// opened is safefile's file as a reader (a nil *os.File is no reader).
func opened(f *os.File, _ fs.FileInfo, err error) (io.ReadCloser, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}

// renderFiles renders the YAML under paths with the capability file (or,
// when capsFile is empty, a ClusterCapabilities among the inputs, else the
// embedded default) and returns the objects bound for a cluster, or none
// when a problem is an error. Problems come sorted.
func renderFiles(src files, capsFile string, paths []string) ([]*yaml.RNode, diag.List) {
	res, problems := renderFilesWith(src, capsFile, paths, encoder{}, diag.Policy{}, nil)
	return clusterObjects(res.Items), problems
}

// renderPaths renders like renderFiles and prints the problems to stderr;
// ok is false when any of them is an error. The objects come encoded, one
// YAML document each, named by the file --output-dir writes them to: a run
// over thousands of models holds text, not node trees.
func renderPaths(src files, capsFile string, paths []string, policy diag.Policy, models map[string]fit.Model, stderr io.Writer) (objects []render.Encoded, ok bool) {
	res, problems := renderFilesWith(src, capsFile, paths, encoder{encode: encodeClusterObject, concurrent: true}, policy, models)
	problems.Report(stderr, "nothing was rendered")
	return res.Encoded, !problems.HasErrors()
}

// encoder is a render's Options.Encode (nil: none), and whether it may
// encode on several goroutines at once (Options.EncodeConcurrently).
type encoder struct {
	encode     func(*yaml.RNode) ([]byte, string, error)
	concurrent bool
}

// renderFilesWith is renderFiles with render.Options.Encode set by
// encode, and the model facts read from --model-dir.
func renderFilesWith(src files, capsFile string, paths []string, encode encoder, policy diag.Policy, models map[string]fit.Model) (render.Result, diag.List) {
	var caps *capabilities.Resolved
	var problems diag.List
	if capsFile != "" {
		caps, problems = readCapabilities(src, capsFile)
	}
	return renderInputs(src, caps, problems, paths, encode, policy, models)
}

// renderInputs renders paths for a capability file already read (nil: a
// ClusterCapabilities among the inputs, else the embedded default);
// problems are the reading's, reported with the rendering's; models are
// the facts read from --model-dir (nil: none).
func renderInputs(src files, caps *capabilities.Resolved, problems diag.List, paths []string, encode encoder, policy diag.Policy, models map[string]fit.Model) (render.Result, diag.List) {
	items, deferred, source, l := readModelsDeferred(src, paths, true)
	opts := render.Options{Capabilities: caps, Encode: encode.encode, EncodeConcurrently: encode.concurrent, Warnings: policy,
		SourceFile: source, Models: models, ReleaseItems: true, Deferred: deferred}
	problems = append(problems, l...)
	if problems.HasErrors() {
		return render.Result{}, problems.Sorted()
	}
	if caps == nil && !hasCapabilities(items) {
		problems.Warnf(diag.DefaultCapabilities, "", "%s", defaultCapabilitiesWarning())
	}
	res := render.Render(items, opts)
	// The run's own warnings (no capability file) get the flags' policy
	// too; Render has applied it to its problems.
	problems = append(problems.Apply(policy), res.Problems...).Sorted()
	if problems.HasErrors() {
		return render.Result{Fits: res.Fits}, problems
	}
	return res, problems
}

// readCapabilities reads and checks a capability file.
func readCapabilities(src files, file string) (*capabilities.Resolved, diag.List) {
	data, l := readCapabilitiesText(src, file)
	if l.HasErrors() {
		return nil, l
	}
	node, err := yaml.Parse(string(data))
	if err != nil {
		l.Errorf("", "is not a single YAML object: %s", yamlerr.Describe(yamlerr.InText(err, string(data), 0)))
		return nil, l.Attach(diag.Resource{}, file)
	}
	if err := yamlerr.CheckNodes(node.YNode()); err != nil {
		// before it is decoded, which costs far more per node
		l.Errorf("", "%v", err)
		return nil, l.Attach(diag.Resource{}, file)
	}
	caps, l := capabilities.ResolveNode(node)
	ref := diag.Resource{APIVersion: node.GetApiVersion(), Kind: node.GetKind(), Name: node.GetName()}
	return caps, yamlerr.AddLines(l.Attach(ref, file), node.YNode())
}

// readCapabilitiesText reads a capability file, at most
// hub.MaxObjectBytes of it.
func readCapabilitiesText(src files, file string) ([]byte, diag.List) {
	var l diag.List
	data, err := readObjectFile(src, file)
	var nr safefile.NotRegular
	switch {
	case errors.As(err, &nr):
		l.Errorf("", "%v", err)
		return nil, l.Attach(diag.Resource{}, file)
	case errors.Is(err, errTooLarge):
		l.Errorf("", "is larger than %s; a capability file must be at most %s", hub.FormatBytes(hub.MaxObjectBytes), hub.FormatBytes(hub.MaxObjectBytes))
		return nil, l.Attach(diag.Resource{}, file)
	case safefile.Escapes(err):
		l.Errorf("", "%s", escapeMessage)
		return nil, l.Attach(diag.Resource{}, file)
	case err != nil:
		l.Errorf("", "cannot read the capability file: %v", err)
		return nil, l.Attach(diag.Resource{}, file)
	}
	return data, nil
}

// defaultCapabilitiesWarning is the warning of a run without a capability
// file: its output assumes the embedded default's cluster.
func defaultCapabilitiesWarning() string {
	d := capabilities.Default()
	return fmt.Sprintf("no capability file (`--capabilities`) and no ClusterCapabilities among the inputs: rendering for %s, which assume %s; describe your cluster in a ClusterCapabilities file and pass it with `--capabilities FILE`", d.Source, d.Assumptions())
}

// hasCapabilities reports whether a ClusterCapabilities is among items.
func hasCapabilities(items []*yaml.RNode) bool {
	for _, n := range items {
		if n.GetKind() == hub.KindClusterCapabilities && strings.HasPrefix(n.GetApiVersion(), hub.Group+"/") {
			return true
		}
	}
	return false
}

// readInputs reads files and directories (recursively, *.yaml and *.yml in
// name order, hidden directories and kustomization files skipped). Each
// item remembers its file for problem reports; source names the file
// each item was parsed from, whose lines its nodes count
// (render.Options.SourceFile). Everything is read within one
// budget.Budget, charged before the work it bounds: a file's bytes before
// it is parsed, its documents as they are parsed. The first charge past a
// limit ends the run.
func readInputs(src files, paths []string) (items []*yaml.RNode, source func(*yaml.RNode) string, l diag.List) {
	items, _, source, l = readModelsDeferred(src, paths, false)
	return items, source, l
}

// readModelsDeferred is readInputs that, when deferModels is set, keeps
// each ModelDeployment of a document of its own as the document's text
// (render.Defer), parsed again when it is rendered: 10,000 models then
// cost their 4 MB of text until they are rendered, not 90 MB of trees.
func readModelsDeferred(src files, paths []string, deferModels bool) (items []*yaml.RNode, deferred []render.Deferred, source func(*yaml.RNode) string, l diag.List) {
	// Weak keys: a render lets go of each model once it is rendered
	// (render.Options.ReleaseItems), and this map must not keep it.
	// The render reads deferred models again on several goroutines
	// (render.Options.Workers): the map has a lock.
	parsedFrom := map[weak.Pointer[yaml.Node]]string{}
	var parsedLock sync.Mutex
	source = func(n *yaml.RNode) string {
		parsedLock.Lock()
		defer parsedLock.Unlock()
		return parsedFrom[weak.Make(n.YNode())]
	}
	var names []string
	for _, p := range paths {
		found, err := yamlFiles(src, p)
		switch {
		case safefile.Escapes(err):
			l = append(l, diag.Problem{Severity: diag.Error, File: p, Message: escapeMessage})
		case err != nil:
			l = append(l, diag.Problem{Severity: diag.Error, File: p, Message: err.Error()})
		}
		names = append(names, found...)
	}
	b := budget.New()
	for _, name := range names {
		f := name
		if f == stdinName {
			f = stdinLabel
		}
		data, err := readLimited(src, name, b)
		if err == nil {
			file := filepath.ToSlash(f) // as the path annotation
			read := func(nodes []*yaml.RNode) {
				parsedLock.Lock()
				defer parsedLock.Unlock()
				for _, n := range nodes {
					stripGeneratedHeader(n)
					parsedFrom[weak.Make(n.YNode())] = file
				}
			}
			err = manifest.EachDocument(data, f, b, func(nodes []*yaml.RNode, again manifest.Document) {
				read(nodes)
				if deferModels && len(nodes) == 1 {
					if d, ok := render.Defer(nodes[0], source, parseAgain(again, read)); ok {
						deferred = append(deferred, d)
						return
					}
				}
				items = append(items, nodes...)
			})
		}
		var exceeded *budget.Exceeded
		var nr safefile.NotRegular
		switch {
		case errors.As(err, &exceeded):
			l = append(l, diag.Problem{Severity: diag.Error, File: f, Message: exceededMessage(exceeded)})
			return nil, nil, source, l // the budget is spent: nothing after it is read
		case errors.As(err, &nr):
			l = append(l, diag.Problem{Severity: diag.Error, File: f, Message: nr.Error()})
		case safefile.Escapes(err):
			l = append(l, diag.Problem{Severity: diag.Error, File: f, Message: escapeMessage})
		case err != nil:
			l = append(l, diag.Problem{Severity: diag.Error, File: f, Message: "cannot read YAML: " + yamlerr.Describe(err)})
		}
	}
	return items, deferred, source, l
}

// parseAgain parses a deferred model's document again, as read saw it
// first (render.Defer).
func parseAgain(doc manifest.Document, read func([]*yaml.RNode)) func() (*yaml.RNode, error) {
	return func() (*yaml.RNode, error) {
		nodes, err := doc.Parse()
		if err == nil && len(nodes) != 1 {
			err = fmt.Errorf("the document holds %d objects where it held one", len(nodes))
		}
		if err != nil {
			return nil, err
		}
		read(nodes)
		return nodes[0], nil
	}
}

// exceededMessage words a charge past the budget for the files of a run.
func exceededMessage(e *budget.Exceeded) string {
	if e.Limit == budget.LimitBytes {
		return fmt.Sprintf("brings the input past %s; the files given to one run must hold at most %s together (render fewer paths per run)", hub.FormatBytes(hub.MaxInputBytes), hub.FormatBytes(hub.MaxInputBytes))
	}
	return e.Error()
}

// escapeMessage says why a file read through an os.Root was refused.
const escapeMessage = "must stay inside the repository, but it leads outside the repository (a symbolic link out of it, or `..`); only files of the repository are read"

// errTooLarge reports an input past its byte limit.
var errTooLarge = errors.New("input too large")

// readLimited reads a file, charging its bytes to b, and fails with a
// budget.Exceeded rather than reading past what is left: a hostile file
// must not be able to exhaust memory before any check runs.
func readLimited(src files, name string, b *budget.Budget) ([]byte, error) {
	f, err := src.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return b.ReadAll(f)
}

// readObjectFile reads a file that holds one object, and fails with
// errTooLarge past hub.MaxObjectBytes, before reading further.
func readObjectFile(src files, name string) ([]byte, error) {
	f, err := src.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := safefile.ReadAtMost(f, hub.MaxObjectBytes)
	if tooLarge := (*safefile.TooLarge)(nil); errors.As(err, &tooLarge) {
		return nil, errTooLarge
	}
	return data, err
}

// stripGeneratedHeader removes the header an earlier --output-dir run put
// on a file, so rendering a rendered directory again is a fixed point.
func stripGeneratedHeader(n *yaml.RNode) {
	header := strings.TrimSuffix(GeneratedHeader, "\n")
	// The parser hangs a document's first comment on the mapping or on its
	// first key, depending on the blank lines around it.
	targets := []*yaml.Node{n.YNode()}
	if c := n.YNode().Content; len(c) > 0 {
		targets = append(targets, c[0])
	}
	for _, t := range targets {
		if t.HeadComment == header {
			t.HeadComment = ""
		} else if strings.HasPrefix(t.HeadComment, header+"\n") {
			t.HeadComment = strings.TrimPrefix(t.HeadComment, header+"\n")
		}
	}
}

// yamlFiles lists the YAML files at root: root itself when it is a file,
// else the *.yaml and *.yml files under it in name order, without hidden
// directories and kustomization files.
func yamlFiles(src files, root string) ([]string, error) {
	info, err := src.stat(root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{root}, nil
	}
	var names []string
	err = src.walk(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && strings.HasPrefix(name, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := path.Ext(name)
		if (ext == ".yaml" || ext == ".yml") && !strings.HasPrefix(strings.ToLower(name), "kustomization.") {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	return names, err
}
