package fn

import (
	"archive/tar"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/render"
)

// `airunway-render diff` renders the same paths at two git revisions (or a
// revision and the working tree) and shows what changed in the objects bound
// for the cluster: what a reviewer of a GitOps pull request needs to see,
// since the ModelDeployment diff alone hides the provider objects it implies.

// diffContext is the number of unchanged lines around each change, the
// default of git and GNU diff.
const diffContext = 3

// exitDifferent is the --exit-code status when the rendered objects differ,
// like `git diff --exit-code` uses 1; 1 is taken by errors here.
const exitDifferent = 2

type diffArgs struct {
	capabilities string
	format       string
	exitCode     bool
	dir          string
	oldRef       string
	newRef       string // "" is the working tree
	paths        []string
}

func runDiff(args []string, stdout, stderr io.Writer) int {
	a, err := parseDiffArgs(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "airunway-render diff: %v\n\n%s", err, usage)
		return 1
	}
	res, failed, err := diffRefs(a, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "airunway-render diff: %v\n", err)
		return 1
	}
	if failed {
		return 1
	}
	out := res.text()
	if a.format == "markdown" {
		out = res.markdown()
	}
	if _, err := io.WriteString(stdout, out); err != nil {
		fmt.Fprintf(stderr, "airunway-render diff: %v\n", err)
		return 1
	}
	if a.exitCode && res.differs() {
		return exitDifferent
	}
	return 0
}

func parseDiffArgs(args []string, stderr io.Writer) (diffArgs, error) {
	var a diffArgs
	flags := pflag.NewFlagSet("diff", pflag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&a.capabilities, "capabilities", "", "ClusterCapabilities file, read at each ref (repository path)")
	flags.StringVar(&a.format, "format", "text", `output format: "text" or "markdown" (a pull-request comment)`)
	flags.BoolVar(&a.exitCode, "exit-code", false, "exit 2 when the rendered objects differ")
	flags.StringVarP(&a.dir, "directory", "C", ".", "run as if started in this directory")
	if err := flags.Parse(args); err != nil {
		return a, err
	}
	if a.format != "text" && a.format != "markdown" {
		return a, fmt.Errorf(`--format must be "text" or "markdown", got %q`, a.format)
	}
	dash := flags.ArgsLenAtDash()
	if dash < 0 {
		return a, errors.New(`PATHs must follow "--", as in: diff OLD_REF [NEW_REF] -- PATH`)
	}
	refs, paths := flags.Args()[:dash], flags.Args()[dash:]
	switch len(refs) {
	case 0:
		return a, errors.New(`OLD_REF is required before "--"`)
	case 1, 2:
	default:
		return a, fmt.Errorf(`at most two refs (OLD_REF NEW_REF) must come before "--", got %d: %q`, len(refs), refs)
	}
	if len(paths) == 0 {
		return a, errors.New(`at least one PATH is required after "--"`)
	}
	a.oldRef, a.paths = refs[0], paths
	if len(refs) == 2 {
		a.newRef = refs[1]
	}
	return a, nil
}

// diffSide is one end of the comparison: a git tree or the working tree.
type diffSide struct {
	ref  string // as the user wrote it; "" for the working tree
	tree string // the tree's object id; "" for the working tree
	desc string // names the side in messages
}

// label names the side in diff headers.
func (s diffSide) label() string {
	if s.ref == "" {
		return "working tree"
	}
	return s.ref
}

// diffRefs renders both sides. failed means render problems were printed
// on stderr; err is any other failure.
func diffRefs(a diffArgs, stderr io.Writer) (result *diffResult, failed bool, err error) {
	r, err := openRepo(a.dir)
	if err != nil {
		return nil, false, err
	}
	caps := ""
	if a.capabilities != "" {
		if caps, err = r.relPath(a.capabilities); err != nil {
			return nil, false, fmt.Errorf("--capabilities %q %v", a.capabilities, err)
		}
	}
	paths := make([]string, len(a.paths))
	for i, p := range a.paths {
		if paths[i], err = r.relPath(p); err != nil {
			return nil, false, fmt.Errorf("PATH %q %v", p, err)
		}
	}
	oldSide, err := r.resolve("OLD_REF", a.oldRef)
	if err != nil {
		return nil, false, err
	}
	newSide := diffSide{desc: "NEW_REF (the working tree)"}
	if a.newRef != "" {
		if newSide, err = r.resolve("NEW_REF", a.newRef); err != nil {
			return nil, false, err
		}
	}
	oldPaths, newPaths, err := r.presentPaths(oldSide, newSide, caps, paths, a.paths)
	if err != nil {
		return nil, false, err
	}
	oldObjs, oldFailed, err := r.renderSide(oldSide, caps, oldPaths, stderr)
	if err != nil {
		return nil, false, err
	}
	newObjs, newFailed, err := r.renderSide(newSide, caps, newPaths, stderr)
	if err != nil || oldFailed || newFailed {
		return nil, oldFailed || newFailed, err
	}
	changes, err := compareObjects(oldObjs, newObjs)
	if err != nil {
		return nil, false, err
	}
	return &diffResult{old: oldSide, new: newSide, capabilities: caps, changes: changes}, false, nil
}

// diffRepo is the git repository the command runs in.
type diffRepo struct {
	top string // the work tree's top-level directory
	cwd string // where relative paths start (-C), symlinks resolved
}

func openRepo(dir string) (*diffRepo, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("-C %q must be an existing directory: %v", dir, err)
	}
	top, err := gitOutput(abs, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("-C %q must be inside a git work tree: %v", dir, err)
	}
	return &diffRepo{top: strings.TrimSuffix(top, "\n"), cwd: abs}, nil
}

// relPath turns a path given relative to -C (or absolute) into a slash
// path relative to the top level, "." for the top level itself. The error
// completes a sentence that starts with the path.
func (r *diffRepo) relPath(p string) (string, error) {
	if strings.ContainsAny(p, "\n\x00") {
		return "", errors.New("must not contain a newline or NUL")
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(r.cwd, p)
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		// Resolved like the top level git reports (/tmp -> /private/tmp);
		// the last element stays, as a link is what git stores.
		abs = filepath.Join(dir, filepath.Base(p))
	}
	rel, err := filepath.Rel(r.top, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("must be inside the repository %q", r.top)
	}
	return filepath.ToSlash(rel), nil
}

// resolve checks a ref and pins it to a tree, so both the existence checks
// and the archive read the same content even if the ref moves meanwhile.
func (r *diffRepo) resolve(role, ref string) (diffSide, error) {
	s := diffSide{ref: ref, desc: fmt.Sprintf("%s %q", role, ref)}
	if strings.HasPrefix(ref, "-") {
		return s, fmt.Errorf("%s must not start with %q", s.desc, "-")
	}
	tree, err := gitOutput(r.top, "", "rev-parse", "--verify", "--quiet", ref+"^{tree}")
	if err != nil {
		return s, fmt.Errorf("%s must name a commit or tree of the repository %q", s.desc, r.top)
	}
	s.tree = strings.TrimSpace(tree)
	return s, nil
}

// presentPaths returns the PATHs that exist at each side. A PATH at one side
// only is a model added or removed; at neither, a typo. The capability file
// must exist at both sides: without it a side would silently render with
// other capabilities.
func (r *diffRepo) presentPaths(oldSide, newSide diffSide, caps string, paths, given []string) (oldPaths, newPaths []string, err error) {
	query := append([]string{caps}, paths...)
	oldHas, err := r.exists(oldSide, query)
	if err != nil {
		return nil, nil, err
	}
	newHas, err := r.exists(newSide, query)
	if err != nil {
		return nil, nil, err
	}
	if caps != "" {
		for _, s := range []struct {
			side diffSide
			has  bool
		}{{oldSide, oldHas[0]}, {newSide, newHas[0]}} {
			if !s.has {
				return nil, nil, fmt.Errorf("--capabilities %q must exist at both sides; it is missing at %s", caps, s.side.desc)
			}
		}
	}
	for i, p := range paths {
		if !oldHas[i+1] && !newHas[i+1] {
			return nil, nil, fmt.Errorf("PATH %q must exist at %s or at %s; it exists at neither", given[i], oldSide.desc, newSide.desc)
		}
		if oldHas[i+1] {
			oldPaths = append(oldPaths, p)
		}
		if newHas[i+1] {
			newPaths = append(newPaths, p)
		}
	}
	return oldPaths, newPaths, nil
}

// exists reports for each path whether it exists at the side; "" is never
// there.
func (r *diffRepo) exists(s diffSide, paths []string) ([]bool, error) {
	has := make([]bool, len(paths))
	if s.tree == "" {
		for i, p := range paths {
			if p != "" {
				_, err := os.Stat(filepath.Join(r.top, filepath.FromSlash(p)))
				has[i] = err == nil
			}
		}
		return has, nil
	}
	// One cat-file for all paths; its format prints only the type, so a
	// line is either a type or "<query> missing".
	var in strings.Builder
	for _, p := range paths {
		if p == "." {
			p = "" // "<tree>:" is the tree itself
		}
		fmt.Fprintf(&in, "%s:%s\n", s.tree, p)
	}
	out, err := gitOutput(r.top, in.String(), "cat-file", "--batch-check=%(objecttype)")
	if err != nil {
		return nil, fmt.Errorf("cannot look up paths at %s: %v", s.desc, err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(paths) {
		return nil, fmt.Errorf("cannot look up paths at %s: git cat-file answered %d lines for %d paths", s.desc, len(lines), len(paths))
	}
	for i, l := range lines {
		has[i] = paths[i] != "" && (l == "blob" || l == "tree") // a submodule ("commit") has no files here
	}
	return has, nil
}

// renderSide renders one side the way `render` does. Problems are printed
// on stderr with the side in front of each line; failed reports errors
// among them.
func (r *diffRepo) renderSide(s diffSide, caps string, paths []string, stderr io.Writer) (objs []*yaml.RNode, failed bool, err error) {
	root := r.top
	if s.tree != "" {
		tmp, err := os.MkdirTemp("", "airunway-render-diff-")
		if err != nil {
			return nil, false, err
		}
		defer os.RemoveAll(tmp)
		if err := r.extract(s, tmp, caps, paths); err != nil {
			return nil, false, err
		}
		root = tmp
	}
	objs, problems := renderTree(root, caps, paths)
	var b strings.Builder
	report(&b, problems)
	for _, line := range splitLines(b.String()) {
		fmt.Fprintf(stderr, "%s: %s", s.desc, line)
	}
	return objs, problems.HasErrors(), nil
}

// maxLinkRounds bounds how many times extract follows symbolic links to
// paths not extracted yet (a link to a link to a directory is two).
const maxLinkRounds = 8

// extract writes the paths of a tree into dir with `git archive`: nothing is
// written into the repository, and no checkout or worktree is needed. A
// symbolic link to another path of the repository brings that path along,
// as the working tree would resolve it; a link that ends up outside dir is
// an error, so a link in a pull request cannot make the renderer read, and a
// PR comment show, a file of the machine the diff runs on.
func (r *diffRepo) extract(s diffSide, dir, caps string, paths []string) error {
	if caps != "" {
		paths = append([]string{caps}, paths...)
	}
	var links []string
	for round := 0; len(paths) > 0 && round < maxLinkRounds; round++ {
		added, err := r.archive(s, dir, paths)
		if err != nil {
			return fmt.Errorf("cannot read %s with git archive: %v", s.desc, err)
		}
		links = append(links, added...)
		if paths, err = r.linkTargets(s, dir, added); err != nil {
			return err
		}
	}
	if err := linksInside(dir, links); err != nil {
		return fmt.Errorf("cannot read %s: %v", s.desc, err)
	}
	return nil
}

// archive extracts paths into dir and returns the symbolic links it made.
func (r *diffRepo) archive(s diffSide, dir string, paths []string) ([]string, error) {
	// Literal pathspecs: a path is a name, never a glob. paths is never
	// empty: an empty pathspec would archive the whole tree.
	args := append([]string{"--literal-pathspecs", "archive", "--format=tar", s.tree, "--"}, paths...)
	cmd := exec.Command("git", args...)
	cmd.Dir = r.top
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, gitFailure(err, &errBuf)
	}
	links, untarErr := untarTree(pipe, dir)
	_, _ = io.Copy(io.Discard, pipe) // let git finish even if untarTree stopped early
	if err := cmd.Wait(); err != nil {
		return nil, gitFailure(err, &errBuf)
	}
	return links, untarErr
}

// untarTree writes the regular files and directories of a tar stream under
// dir, then its symbolic links, so no file is written through a link. It
// returns the links' slash paths; one that exists already is left alone.
func untarTree(in io.Reader, dir string) ([]string, error) {
	tr := tar.NewReader(in)
	targets := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(h.Name, "/")
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return nil, fmt.Errorf("archive entry %q must stay inside the archive", h.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			err = writeTarFile(target, tr)
		case tar.TypeSymlink:
			targets[name] = h.Linkname
		}
		if err != nil {
			return nil, err
		}
	}
	var links []string
	for _, name := range slices.Sorted(maps.Keys(targets)) {
		target := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := os.Lstat(target); err == nil {
			continue // extracted in an earlier round
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, err
		}
		if err := os.Symlink(targets[name], target); err != nil {
			return nil, err
		}
		links = append(links, name)
	}
	return links, nil
}

// linkTargets returns the repository paths that links point to and that
// are not extracted yet but exist in the tree.
func (r *diffRepo) linkTargets(s diffSide, dir string, links []string) ([]string, error) {
	var want []string
	for _, l := range links {
		to, err := os.Readlink(filepath.Join(dir, filepath.FromSlash(l)))
		if err != nil || path.IsAbs(to) {
			continue
		}
		p := path.Join(path.Dir(l), to)
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err == nil || !filepath.IsLocal(p) {
			continue
		}
		want = append(want, p)
	}
	if len(want) == 0 {
		return nil, nil
	}
	has, err := r.exists(s, want)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, p := range want {
		if has[i] {
			out = append(out, p)
		}
	}
	return out, nil
}

// linksInside checks that every link resolves to a path inside dir, after
// all are made: a chain of links can leave dir though each looks local.
func linksInside(dir string, links []string) error {
	for _, l := range links {
		target := filepath.Join(dir, filepath.FromSlash(l))
		if _, err := resolveInside(dir, target); err != nil {
			to, _ := os.Readlink(target)
			return fmt.Errorf("symbolic link %q must point to a file or directory of the repository, not to %q", l, to)
		}
	}
	return nil
}

// errOutside says a path resolves outside the directory it must stay in.
var errOutside = errors.New("outside the directory")

// resolveInside resolves target's symlinks and returns the real path, or
// errOutside (with the real path) when it lies outside root. Both diff and
// the Argo CD plugin read files a pull request controls, so neither may
// follow a link out of the repository.
func resolveInside(root, target string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || !filepath.IsLocal(rel) {
		return real, errOutside
	}
	return real, nil
}

func writeTarFile(target string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// renderTree is runRender's pipeline for files under root: read, render,
// keep what goes to a cluster. Problems name files relative to root, so
// both sides report the repository paths a reviewer knows.
func renderTree(root, caps string, paths []string) ([]*yaml.RNode, diag.List) {
	capsFile := ""
	if caps != "" {
		capsFile = filepath.Join(root, filepath.FromSlash(caps))
	}
	abs := make([]string, len(paths))
	for i, p := range paths {
		abs[i] = filepath.Join(root, filepath.FromSlash(p))
	}
	objects, problems := renderFiles(capsFile, abs)
	return objects, relativeTo(root, problems).Sorted()
}

// relativeTo strips root from the files and messages of problems; the
// temporary directory a ref was extracted to means nothing to a user.
func relativeTo(root string, l diag.List) diag.List {
	prefix := root + string(filepath.Separator)
	out := make(diag.List, len(l))
	for i, p := range l {
		p.File = filepath.ToSlash(strings.TrimPrefix(p.File, prefix))
		p.Message = strings.ReplaceAll(p.Message, prefix, "")
		out[i] = p
	}
	return out
}

func gitOutput(dir, stdin string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errBuf
	if err := cmd.Run(); err != nil {
		return "", gitFailure(err, &errBuf)
	}
	return out.String(), nil
}

// gitFailure prefers git's own message to a bare exit status.
func gitFailure(err error, stderr *bytes.Buffer) error {
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("git must be installed and on PATH: %v", err)
	}
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		return errors.New(msg)
	}
	return err
}

// objectChange is one object of either side.
type objectChange struct {
	op                         byte // '+' added, '-' removed, '~' changed, '=' unchanged
	apiVersion, kind, ns, name string
	oldYAML, newYAML           string
}

// id names an object in diff headers: kind/namespace/name, or kind/name
// for cluster-scoped objects.
func (c objectChange) id() string {
	if c.ns == "" {
		return c.kind + "/" + c.name
	}
	return c.kind + "/" + c.ns + "/" + c.name
}

// compareObjects pairs objects by apiVersion, kind, namespace and name and
// returns them in the renderer's order.
func compareObjects(oldObjs, newObjs []*yaml.RNode) ([]objectChange, error) {
	oldKeys, oldText, err := indexObjects(oldObjs)
	if err != nil {
		return nil, err
	}
	newKeys, newText, err := indexObjects(newObjs)
	if err != nil {
		return nil, err
	}
	// The union, sorted by render.SortItems: one node per identity, and
	// the sort is stable, so repeated identities keep their order.
	byNode := map[*yaml.RNode]string{}
	var union []*yaml.RNode
	for i, n := range newObjs {
		byNode[n] = newKeys[i]
		union = append(union, n)
	}
	for i, n := range oldObjs {
		if _, ok := newText[oldKeys[i]]; !ok {
			byNode[n] = oldKeys[i]
			union = append(union, n)
		}
	}
	render.SortItems(union)
	changes := make([]objectChange, 0, len(union))
	for _, n := range union {
		key := byNode[n]
		c := objectChange{apiVersion: n.GetApiVersion(), kind: n.GetKind(), ns: n.GetNamespace(), name: n.GetName(), oldYAML: oldText[key], newYAML: newText[key]}
		_, inOld := oldText[key]
		_, inNew := newText[key]
		switch {
		case !inOld:
			c.op = '+'
		case !inNew:
			c.op = '-'
		case c.oldYAML != c.newYAML:
			c.op = '~'
		default:
			c.op = '='
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// indexObjects returns each object's identity key and its YAML by key. An
// identity seen again gets its occurrence number: render keeps two objects
// of the user's with the same identity, and neither may hide the other.
func indexObjects(objs []*yaml.RNode) ([]string, map[string]string, error) {
	keys := make([]string, len(objs))
	text := map[string]string{}
	seen := map[string]int{}
	for i, n := range objs {
		id := strings.Join([]string{n.GetApiVersion(), n.GetKind(), n.GetNamespace(), n.GetName()}, "\x00")
		seen[id]++
		keys[i] = fmt.Sprintf("%s\x00%d", id, seen[id])
		s, err := n.String()
		if err != nil {
			return nil, nil, err
		}
		text[keys[i]] = s
	}
	return keys, text, nil
}

// diffResult is the comparison, ready to print.
type diffResult struct {
	old, new     diffSide
	capabilities string
	changes      []objectChange
	// command heads the Markdown comment; "" is "airunway-render diff".
	command string
}

func (r *diffResult) counts() (added, changed, removed, unchanged int) {
	for _, c := range r.changes {
		switch c.op {
		case '+':
			added++
		case '~':
			changed++
		case '-':
			removed++
		default:
			unchanged++
		}
	}
	return
}

func (r *diffResult) differs() bool {
	added, changed, removed, _ := r.counts()
	return added+changed+removed > 0
}

func (r *diffResult) countLine() string {
	added, changed, removed, unchanged := r.counts()
	noun := "objects"
	if len(r.changes) == 1 {
		noun = "object"
	}
	return fmt.Sprintf("%d %s: %d added, %d changed, %d removed, %d unchanged", len(r.changes), noun, added, changed, removed, unchanged)
}

// body is the unified diff of one object; an added or removed object is
// a diff against nothing, so it shows in full.
func (r *diffResult) body(c objectChange) string {
	from, to := r.old.label()+":"+c.id(), r.new.label()+":"+c.id()
	switch c.op {
	case '+':
		from = "/dev/null"
	case '-':
		to = "/dev/null"
	}
	return unifiedDiff(from, to, c.oldYAML, c.newYAML, diffContext)
}

// text is the terminal format: one line per differing object, their
// diffs, and the counts.
func (r *diffResult) text() string {
	var b strings.Builder
	var bodies strings.Builder
	for _, c := range r.changes {
		if c.op == '=' {
			continue
		}
		fmt.Fprintf(&b, "%c %s (%s)\n", c.op, c.id(), c.apiVersion)
		bodies.WriteString(r.body(c))
	}
	if b.Len() > 0 {
		b.WriteString("\n" + bodies.String() + "\n")
	}
	b.WriteString(r.countLine() + "\n")
	return b.String()
}

// word names the change in Markdown, where a bare +, - or ~ reads poorly.
func (c objectChange) word() string {
	return map[byte]string{'+': "added", '~': "changed", '-': "removed", '=': "unchanged"}[c.op]
}

// markdown is a pull-request comment: heading, a table of the differing
// objects, and one diff block per object, folded in <details> so a large
// PR stays readable; changed objects start unfolded.
func (r *diffResult) markdown() string {
	refs := mdCode(r.old.label()) + " → " + mdCode(r.new.label())
	title := cmp.Or(r.command, "airunway-render diff")
	if r.capabilities != "" {
		title += " for " + mdCode(r.capabilities)
	}
	if !r.differs() {
		return fmt.Sprintf("**%s**: the rendered output is unchanged, %s (%s).\n", title, refs, r.countLine())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n%s: %s\n\n", title, refs, r.countLine())
	b.WriteString("| Change | Kind | Namespace/Name | API version |\n| --- | --- | --- | --- |\n")
	for _, c := range r.changes {
		if c.op != '=' {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.word(), mdCell(c.kind), mdCell(mdCode(strings.TrimPrefix(c.ns+"/"+c.name, "/"))), mdCell(mdCode(c.apiVersion)))
		}
	}
	for _, c := range r.changes {
		if c.op == '=' {
			continue
		}
		open := ""
		if c.op == '~' {
			open = " open"
		}
		body := r.body(c)
		fence := strings.Repeat("`", max(3, longestRunOf(body, '`')+1))
		fmt.Fprintf(&b, "\n<details%s><summary>%s %s</summary>\n\n%sdiff\n%s%s\n\n</details>\n",
			open, c.word(), html.EscapeString(c.id()), fence, body, fence)
	}
	return b.String()
}

// mdCode quotes s as inline code, with a backtick run longer than any
// in s, so a ref name with backticks cannot end the span early.
func mdCode(s string) string {
	ticks := strings.Repeat("`", longestRunOf(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// mdCell escapes the one character that ends a table cell even inside
// a code span.
func mdCell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

func longestRunOf(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
