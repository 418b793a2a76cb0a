// Package gitsnap materialises paths of a git repository as they are at a
// revision, for a command that renders the same paths at two revisions
// (`airunway-render diff`). A revision's paths are written into a fresh
// temporary directory with `git archive`: nothing is written into the
// repository, and no checkout or worktree is needed. The working tree is
// read where it is.
//
// Either way the caller gets an *os.Root, and reads through it: whatever
// the files of a pull request contain, no read leaves the repository (or
// the snapshot of it). A symbolic link to another path of the repository is
// followed, as the working tree would resolve it; a link that leads out is
// an error naming it.
package gitsnap

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/airunway-render/airunway-render/internal/safefile"
)

// Repo is the git work tree a command runs in.
type Repo struct {
	// Top is the work tree's top-level directory.
	Top string
	cwd string // where relative paths start, symlinks resolved
}

// Open finds the work tree that dir is in.
func Open(dir string) (*Repo, error) {
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
	return &Repo{Top: strings.TrimSuffix(top, "\n"), cwd: abs}, nil
}

// RelPath turns a path given relative to the directory the repository was
// opened from (or absolute) into a slash path relative to the top level,
// "." for the top level itself. The error completes a sentence that starts
// with the path.
func (r *Repo) RelPath(p string) (string, error) {
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
	rel, err := filepath.Rel(r.Top, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("must be inside the repository %q", r.Top)
	}
	return filepath.ToSlash(rel), nil
}

// Side is one revision of the repository, or the working tree.
type Side struct {
	// Ref is as the user wrote it; "" for the working tree.
	Ref string
	// Tree is the revision's tree object id; "" for the working tree.
	Tree string
	// Desc names the side in messages.
	Desc string
}

// WorkingTree is the side of the files as they are on disk.
func WorkingTree(desc string) Side { return Side{Desc: desc} }

// Label names the side in diff headers.
func (s Side) Label() string {
	if s.Ref == "" {
		return "working tree"
	}
	return s.Ref
}

// Resolve checks a ref and pins it to a tree, so existence checks and the
// snapshot read the same content even if the ref moves meanwhile. role
// names the argument in messages (OLD_REF).
func (r *Repo) Resolve(role, ref string) (Side, error) {
	s := Side{Ref: ref, Desc: fmt.Sprintf("%s %q", role, ref)}
	if strings.HasPrefix(ref, "-") {
		return s, fmt.Errorf("%s must not start with %q", s.Desc, "-")
	}
	tree, err := gitOutput(r.Top, "", "rev-parse", "--verify", "--quiet", ref+"^{tree}")
	if err != nil {
		return s, fmt.Errorf("%s must name a commit or tree of the repository %q", s.Desc, r.Top)
	}
	s.Tree = strings.TrimSpace(tree)
	return s, nil
}

// Exists reports for each repository path whether it exists at the side;
// "" is never there.
func (r *Repo) Exists(s Side, paths []string) ([]bool, error) {
	has := make([]bool, len(paths))
	if s.Tree == "" {
		for i, p := range paths {
			if p != "" {
				_, err := os.Stat(filepath.Join(r.Top, filepath.FromSlash(p)))
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
		fmt.Fprintf(&in, "%s:%s\n", s.Tree, p)
	}
	out, err := gitOutput(r.Top, in.String(), "cat-file", "--batch-check=%(objecttype)")
	if err != nil {
		return nil, fmt.Errorf("cannot look up paths at %s: %v", s.Desc, err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(paths) {
		return nil, fmt.Errorf("cannot look up paths at %s: git cat-file answered %d lines for %d paths", s.Desc, len(lines), len(paths))
	}
	for i, l := range lines {
		has[i] = paths[i] != "" && (l == "blob" || l == "tree") // a submodule ("commit") has no files here
	}
	return has, nil
}

// Snapshot is a side's files, open for reading through Root.
type Snapshot struct {
	Root *os.Root
	dir  string // the temporary directory of a revision, "" for the working tree
}

// Close releases the root and removes a revision's temporary directory.
func (s *Snapshot) Close() error {
	err := s.Root.Close()
	if s.dir != "" {
		err = errors.Join(err, os.RemoveAll(s.dir))
	}
	return err
}

// Take opens the side's files: the working tree in place, or the given
// repository paths of a revision, written into a temporary directory. Every
// symbolic link among them must lead to a path of the repository.
func (r *Repo) Take(s Side, paths []string) (*Snapshot, error) {
	if s.Tree == "" {
		root, err := os.OpenRoot(r.Top)
		if err != nil {
			return nil, err
		}
		return &Snapshot{Root: root}, nil
	}
	dir, err := os.MkdirTemp("", "airunway-render-diff-")
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{dir: dir}
	if snap.Root, err = os.OpenRoot(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := r.extract(s, snap.Root, paths); err != nil {
		_ = snap.Close()
		return nil, err
	}
	return snap, nil
}

// MaxTreeBytes bounds what TakeTree writes: the blobs of a revision's
// whole tree, together.
const MaxTreeBytes = 1 << 30

// treeLimit is MaxTreeBytes; tests lower it.
var treeLimit int64 = MaxTreeBytes

// TakeTree opens the side's whole tree: the working tree in place, or
// every blob of a revision, written into a temporary directory. A
// kustomization needs it: it reads whatever its resources, patches and
// generators name, anywhere in the repository. A revision whose blobs hold
// more than MaxTreeBytes together is refused before anything is written.
func (r *Repo) TakeTree(s Side) (*Snapshot, error) {
	if s.Tree == "" {
		return r.Take(s, nil)
	}
	entries, err := r.listTree(s, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s from git's objects: %v", s.Desc, err)
	}
	var total int64
	for _, e := range entries {
		total += e.size
	}
	if total > treeLimit {
		return nil, fmt.Errorf("%s holds %d bytes of files; a kustomization among the paths is built from the whole tree, which may hold at most %d bytes (%d MiB)", s.Desc, total, treeLimit, treeLimit>>20)
	}
	return r.Take(s, []string{"."})
}

// maxLinkRounds bounds how many times extract follows symbolic links to
// paths not extracted yet (a link to a link to a directory is two).
const maxLinkRounds = 8

// extract writes the paths of a revision into root. A symbolic link to
// another path of the repository brings that path along, as the working
// tree would resolve it; a link that ends up outside root is an error, so a
// link in a pull request cannot make the renderer read, and a PR comment
// show, a file of the machine the diff runs on.
func (r *Repo) extract(s Side, root *os.Root, paths []string) error {
	var links []string
	for round := 0; len(paths) > 0 && round < maxLinkRounds; round++ {
		added, err := r.archive(s, root, paths)
		if err != nil {
			return fmt.Errorf("cannot read %s from git's objects: %v", s.Desc, err)
		}
		links = append(links, added...)
		if paths, err = r.linkTargets(s, root, added); err != nil {
			return err
		}
	}
	for _, l := range links {
		// Stat through the root follows the link only while it stays
		// inside; every later read goes through the root as well.
		if _, err := root.Stat(filepath.FromSlash(l)); err != nil {
			to, _ := root.Readlink(filepath.FromSlash(l))
			return fmt.Errorf("cannot read %s: symbolic link %q must point to a file or directory of the repository, not to %q", s.Desc, l, to)
		}
	}
	return nil
}

// archive writes the blobs under paths into root and returns the symbolic
// links it made. It reads git's objects, never a checkout or an archive:
// `git archive` and checkouts obey the revision's own .gitattributes, so a
// pull request could hide a file from the diff (export-ignore), rewrite it
// (export-subst) or make the diff run a program (filter=, e.g. git-lfs,
// which reaches the network). ls-tree and cat-file --batch (without
// --filters) read the objects as stored.
func (r *Repo) archive(s Side, root *os.Root, paths []string) ([]string, error) {
	entries, err := r.listTree(s, paths)
	if err != nil {
		return nil, err
	}
	var blobs []treeEntry
	targets := map[string]string{}
	for _, e := range entries {
		name := filepath.FromSlash(e.path)
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("tree entry %q must stay inside the repository", e.path)
		}
		switch e.kind {
		case "tree":
			if err := root.MkdirAll(name, 0o755); err != nil {
				return nil, err
			}
		case "blob":
			blobs = append(blobs, e)
		}
	}
	err = r.readBlobs(blobs, func(e treeEntry, content io.Reader) error {
		if e.mode == "120000" { // a symbolic link's blob is its target
			to, err := safefile.ReadAtMost(content, maxLinkTarget)
			if tooLarge := (*safefile.TooLarge)(nil); errors.As(err, &tooLarge) {
				return fmt.Errorf("symbolic link %q has a target longer than %d bytes", e.path, maxLinkTarget)
			}
			if err != nil {
				return err
			}
			targets[e.path] = string(to)
			return nil
		}
		return writeFile(root, filepath.FromSlash(e.path), content)
	})
	if err != nil {
		return nil, err
	}
	return makeLinks(root, targets)
}

// maxLinkTarget is the longest symbolic link target extract accepts; Linux
// allows 4,095 bytes.
const maxLinkTarget = 4096

// treeEntry is one line of git ls-tree -l.
type treeEntry struct {
	mode, kind, oid, path string
	size                  int64 // a blob's; 0 for a tree or a submodule
}

// listTree lists the trees and blobs under paths at the side, recursively;
// no paths: the whole tree. A submodule ("commit") is listed and skipped:
// it has no files here.
func (r *Repo) listTree(s Side, paths []string) ([]treeEntry, error) {
	// Literal pathspecs: a path is a name, never a glob.
	args := append([]string{"--literal-pathspecs", "ls-tree", "-r", "-t", "-l", "-z", "--full-tree", s.Tree, "--"}, paths...)
	out, err := gitOutput(r.Top, "", args...)
	if err != nil {
		return nil, err
	}
	var entries []treeEntry
	for _, rec := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		meta, p, ok := strings.Cut(rec, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 4 {
			return nil, fmt.Errorf("git ls-tree printed %q, not \"<mode> <type> <object> <size>\\t<path>\"", rec)
		}
		e := treeEntry{mode: fields[0], kind: fields[1], oid: fields[2], path: p}
		if e.kind == "blob" {
			size, err := strconv.ParseInt(fields[3], 10, 64)
			if err != nil || size < 0 {
				return nil, fmt.Errorf("git ls-tree printed size %q for %q", fields[3], p)
			}
			e.size = size
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// readBlobs streams the blobs' contents from one git cat-file --batch to
// each, in order; a file is never held whole in memory.
func (r *Repo) readBlobs(blobs []treeEntry, each func(treeEntry, io.Reader) error) error {
	if len(blobs) == 0 {
		return nil
	}
	var in strings.Builder
	for _, b := range blobs {
		in.WriteString(b.oid + "\n")
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = r.Top
	cmd.Stdin = strings.NewReader(in.String())
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return gitFailure(err, &errBuf)
	}
	readErr := readBatch(bufio.NewReader(pipe), blobs, each)
	_, _ = io.Copy(io.Discard, pipe) // let git finish even if reading stopped early
	if err := cmd.Wait(); err != nil {
		return gitFailure(err, &errBuf)
	}
	return readErr
}

// readBatch parses cat-file --batch output: per object a line
// "<oid> <type> <size>", size bytes, a newline.
func readBatch(out *bufio.Reader, blobs []treeEntry, each func(treeEntry, io.Reader) error) error {
	for _, b := range blobs {
		header, err := out.ReadString('\n')
		if err != nil {
			return fmt.Errorf("git cat-file stopped before %q: %v", b.path, err)
		}
		fields := strings.Fields(header)
		if len(fields) != 3 || fields[0] != b.oid || fields[1] != "blob" {
			return fmt.Errorf("git cat-file answered %q for %q, not its blob", strings.TrimSpace(header), b.path)
		}
		size, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("git cat-file answered size %q for %q", fields[2], b.path)
		}
		content := io.LimitReader(out, size)
		if err := each(b, content); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, content); err != nil { // what each left unread
			return err
		}
		if nl, err := out.ReadByte(); err != nil || nl != '\n' {
			return fmt.Errorf("git cat-file's answer for %q does not end in a newline", b.path)
		}
	}
	return nil
}

// makeLinks creates the symbolic links after every file, so no file is
// written through a link, and returns their slash paths; one that exists
// already (extracted in an earlier round) is left alone.
func makeLinks(root *os.Root, targets map[string]string) ([]string, error) {
	var links []string
	for _, name := range slices.Sorted(maps.Keys(targets)) {
		local := filepath.FromSlash(name)
		if _, err := root.Lstat(local); err == nil {
			continue
		}
		if err := root.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			return nil, err
		}
		if err := root.Symlink(targets[name], local); err != nil {
			return nil, err
		}
		links = append(links, name)
	}
	return links, nil
}

func writeFile(root *os.Root, name string, r io.Reader) error {
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// linkTargets returns the repository paths that links point to and that
// are not extracted yet but exist in the tree.
func (r *Repo) linkTargets(s Side, root *os.Root, links []string) ([]string, error) {
	var want []string
	for _, l := range links {
		to, err := root.Readlink(filepath.FromSlash(l))
		if err != nil || path.IsAbs(to) {
			continue
		}
		p := path.Join(path.Dir(l), to)
		if !filepath.IsLocal(p) {
			continue
		}
		if _, err := root.Stat(filepath.FromSlash(p)); err == nil {
			continue
		}
		want = append(want, p)
	}
	if len(want) == 0 {
		return nil, nil
	}
	has, err := r.Exists(s, want)
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
