package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/airunway-render/airunway-render/internal/safefile"
)

// namedScope is what a command given paths on its command line may read
// (and `migrate` write): the directories named and the files named
// explicitly, each resolved through its symbolic links. A file found in a
// named directory is a repository's, so a symbolic link there must lead
// inside a named directory or to a file named explicitly: a repository
// cannot make `render --output-dir` copy ~/.kube/config into the rendered
// manifests, nor `migrate` rewrite a file elsewhere. Every open goes
// through an os.Root at one of them, so a link that leads out is refused
// at the open itself, not only by the check before it.
type namedScope struct {
	dirs  []scopeDir
	files map[string]bool     // real paths of the files named explicitly
	roots map[string]*os.Root // the directories of those files, by real path
}

type scopeDir struct {
	path string // real and absolute
	root *os.Root
}

// namedFile is a file of the scope: the name it was listed under, which is
// what messages show, and where its content lives (the end of its symbolic
// links) as a name in a root of the scope.
type namedFile struct {
	name string
	root *os.Root
	rel  string
}

const outsideScope = "a symbolic link must lead inside a directory named on the command line or to a file named there; it is neither read nor written"

// newNamedScope resolves the paths the user named. A path that does not
// exist (or stdin, `-`, or an unset flag's "") adds nothing: reading it
// fails with its own error.
func newNamedScope(paths []string) (*namedScope, error) {
	s := &namedScope{files: map[string]bool{}, roots: map[string]*os.Root{}}
	for _, p := range paths {
		if p == stdinName || p == "" {
			continue
		}
		real, err := realPath(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			s.close()
			return nil, err
		}
		info, err := os.Stat(real)
		if err != nil {
			s.close()
			return nil, err
		}
		if !info.IsDir() {
			s.files[real] = true
			continue
		}
		root, err := os.OpenRoot(real)
		if err != nil {
			s.close()
			return nil, err
		}
		s.dirs = append(s.dirs, scopeDir{path: real, root: root})
	}
	return s, nil
}

func (s *namedScope) close() {
	for _, d := range s.dirs {
		d.root.Close()
	}
	for _, r := range s.roots {
		r.Close()
	}
}

// locate finds where name's content lives and refuses it when that is
// outside the scope.
func (s *namedScope) locate(name string) (namedFile, error) {
	real, err := realPath(name)
	if err != nil {
		return namedFile{}, err
	}
	for _, d := range s.dirs {
		if rel, ok := inside(d.path, real); ok {
			return namedFile{name: name, root: d.root, rel: rel}, nil
		}
	}
	if !s.files[real] {
		return namedFile{}, refusef("is a symbolic link to %q, outside the paths named on the command line; %s", real, outsideScope)
	}
	dir := filepath.Dir(real)
	root := s.roots[dir]
	if root == nil {
		if root, err = os.OpenRoot(dir); err != nil {
			return namedFile{}, err
		}
		s.roots[dir] = root
	}
	return namedFile{name: name, root: root, rel: filepath.Base(real)}, nil
}

// realPath is p absolute, without symbolic links.
func realPath(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(real)
}

// inside returns p relative to dir when p is under dir.
func inside(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// open opens t, and only a regular file (safefile).
func (t namedFile) open(flag int) (*os.File, fs.FileInfo, error) {
	f, info, err := safefile.OpenIn(t.root, t.rel, flag)
	if safefile.Escapes(err) {
		return nil, nil, refusef("leads outside the paths named on the command line; %s", outsideScope)
	}
	return f, info, err
}
