package kbuild

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/safefile"
)

// repoFS is the repository as kustomize sees it during a build: read-only,
// every read through an os.Root of the repository (a symbolic link may lead
// elsewhere in it, never out), every file read once and remembered, so that
// the check and kustomize read the same bytes, and every read charged to the
// run's budget before kustomize parses it.
//
// Each file kustomize reads is scanned for function declarations with
// kustomize's own decoding: airunway-render's are served rewritten to run
// the given executable, any other is refused. Kustomization files are served
// as the check decoded them, and one the check did not read is refused: if
// the check and kustomize ever disagree about which kustomizations a build
// reads, the build fails rather than run what was not checked.
type repoFS struct {
	root *os.Root
	// top is the root's absolute path, symbolic links resolved: every path
	// kustomize hands over is absolute, and inside top.
	top    string
	budget *budget.Budget
	decl   *declarations
	// files is every file read so far, by its absolute path.
	files map[string]fileRead
	// kustomizations are the kustomization files the check read, by
	// absolute path, as kustomize is to read them.
	kustomizations map[string][]byte
	// refused is the first read refused, reported instead of kustomize's
	// wording of the failure (kustomize takes some read errors for "no
	// such file" and words them so).
	refused error
}

type fileRead struct {
	data []byte
	err  error
}

// errReadOnly is what kustomize gets for any write: a build writes nothing.
var errReadOnly = errors.New("a build writes nothing: the repository is read-only to it")

func newRepoFS(top string, b *budget.Budget, decl *declarations) (*repoFS, error) {
	root, err := os.OpenRoot(top)
	if err != nil {
		return nil, err
	}
	return &repoFS{root: root, top: top, budget: b, decl: decl, files: map[string]fileRead{}, kustomizations: map[string][]byte{}}, nil
}

func (f *repoFS) Close() error { return f.root.Close() }

// OutsideError is a path outside the repository.
type OutsideError struct{ path, top string }

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%q is outside the repository %q; a kustomization built here may only read files in it", e.path, e.top)
}

// rel is p's name in the root. The names are lexical; os.Root refuses
// whatever a symbolic link would make of them outside the root.
func (f *repoFS) rel(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if abs == f.top {
		return ".", nil
	}
	prefix := f.top
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator) // the root directory ends in one
	}
	rel, ok := strings.CutPrefix(abs, prefix)
	if !ok {
		return "", &OutsideError{path: p, top: f.top}
	}
	return rel, nil
}

// ReadFile is kustomize's read: a kustomization as the check decoded it,
// any other file as it is on disk, and either with airunway-render's
// declarations rewritten and any other refused. kustomize reads a file for
// what it is listed as, which the file system cannot tell, and may read a
// kustomization's file as objects too (listed under `transformers`), so
// every byte it gets passes the same decision.
func (f *repoFS) ReadFile(p string) ([]byte, error) {
	data, err := f.readForKustomize(p)
	if err != nil && f.refused == nil && !errors.Is(err, fs.ErrNotExist) {
		f.refused = err
	}
	return data, err
}

func (f *repoFS) readForKustomize(p string) ([]byte, error) {
	abs, err := f.resolveFile(p)
	if err != nil {
		return nil, err
	}
	data, err := f.served(p, abs)
	if err != nil {
		return nil, err
	}
	return f.decl.rewriteFile(abs, data)
}

// served is what kustomize gets for p (abs, resolved): the check's
// kustomization when the check read one there, whatever the file is
// named; any other file as it is, but never a kustomization (by the name
// kustomize asked for or the one it resolves to) the check did not read.
// Every read is charged to the budget: kustomize reads a file once for
// each reference to it, and holds what it reads each time.
func (f *repoFS) served(p, abs string) ([]byte, error) {
	data, checked := f.kustomizations[abs]
	if !checked {
		var err error
		_, readBefore := f.files[abs]
		if data, err = f.read(abs); err != nil {
			return nil, err
		}
		if isKustomizationFile(p) || isKustomizationFile(abs) {
			return nil, fmt.Errorf("%s: kustomize read this kustomization, which the check of what the build may run did not read; refusing to build what was not checked", abs)
		}
		if !readBefore {
			return data, nil // charged as it was read
		}
	}
	if err := f.budget.Again(data); err != nil {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	return data, nil
}

// read reads a file once, charging it to the budget: only a regular file
// (safefile), no larger than what is left, whose YAML documents fit what is
// left.
func (f *repoFS) read(abs string) ([]byte, error) {
	if r, ok := f.files[abs]; ok {
		return r.data, r.err
	}
	data, err := f.load(abs)
	f.files[abs] = fileRead{data: data, err: err}
	return data, err
}

func (f *repoFS) load(abs string) ([]byte, error) {
	rel, err := f.rel(abs)
	if err != nil {
		return nil, err
	}
	file, _, err := safefile.OpenIn(f.root, rel, os.O_RDONLY)
	var notRegular safefile.NotRegular
	if errors.As(err, &notRegular) {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	if err != nil {
		return nil, f.describe(abs, err)
	}
	defer file.Close()
	data, err := f.budget.ReadAll(file)
	if err == nil {
		err = f.budget.Stream(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	return data, nil
}

// describe words an os.Root error: an escape names the repository.
func (f *repoFS) describe(p string, err error) error {
	if safefile.Escapes(err) {
		return &OutsideError{path: p, top: f.top}
	}
	return err
}

// resolveFile is p's absolute path with symbolic links resolved, inside
// the repository.
func (f *repoFS) resolveFile(p string) (string, error) {
	d, name, err := f.CleanedAbs(p)
	if err != nil {
		return "", err
	}
	return d.Join(name), nil
}

// CleanedAbs is kustomize's path resolution: the directory part with
// symbolic links resolved, and the file name when p is not a directory.
// The resolution must stay inside the repository.
func (f *repoFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	if _, err := f.rel(p); err != nil {
		return "", "", err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", "", err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", err
	}
	rel, err := f.rel(resolved)
	if err != nil {
		return "", "", &OutsideError{path: p, top: f.top}
	}
	info, err := f.root.Stat(rel)
	if err != nil {
		return "", "", f.describe(p, err)
	}
	if info.IsDir() {
		return filesys.ConfirmedDir(resolved), "", nil
	}
	return filesys.ConfirmedDir(filepath.Dir(resolved)), filepath.Base(resolved), nil
}

func (f *repoFS) stat(p string) (fs.FileInfo, error) {
	rel, err := f.rel(p)
	if err != nil {
		return nil, err
	}
	info, err := f.root.Stat(rel)
	return info, f.describe(p, err)
}

func (f *repoFS) IsDir(p string) bool {
	info, err := f.stat(p)
	return err == nil && info.IsDir()
}

func (f *repoFS) Exists(p string) bool {
	_, err := f.stat(p)
	return err == nil
}

func (f *repoFS) ReadDir(p string) ([]string, error) {
	rel, err := f.rel(p)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(f.root.FS(), filepath.ToSlash(rel))
	if err != nil {
		return nil, f.describe(p, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, nil
}

func (f *repoFS) Glob(pattern string) ([]string, error) {
	rel, err := f.rel(pattern)
	if err != nil {
		return nil, err
	}
	matches, err := fs.Glob(f.root.FS(), filepath.ToSlash(rel))
	if err != nil {
		return nil, err
	}
	for i, m := range matches {
		matches[i] = filepath.Join(f.top, filepath.FromSlash(m))
	}
	sort.Strings(matches)
	return matches, nil
}

func (f *repoFS) Walk(p string, walkFn filepath.WalkFunc) error {
	rel, err := f.rel(p)
	if err != nil {
		return err
	}
	return fs.WalkDir(f.root.FS(), filepath.ToSlash(rel), func(name string, d fs.DirEntry, err error) error {
		full := filepath.Join(f.top, filepath.FromSlash(name))
		if err != nil {
			return walkFn(full, nil, err)
		}
		info, err := d.Info()
		return walkFn(full, info, err)
	})
}

// Open serves a file's bytes as ReadFile does.
func (f *repoFS) Open(p string) (filesys.File, error) {
	data, err := f.ReadFile(p)
	if err != nil {
		return nil, err
	}
	info, err := f.stat(p)
	if err != nil {
		return nil, err
	}
	return &readOnlyFile{Reader: bytes.NewReader(data), info: info}, nil
}

func (f *repoFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (f *repoFS) Mkdir(string) error                  { return errReadOnly }
func (f *repoFS) MkdirAll(string) error               { return errReadOnly }
func (f *repoFS) RemoveAll(string) error              { return errReadOnly }
func (f *repoFS) WriteFile(string, []byte) error      { return errReadOnly }

// readOnlyFile is an opened file's bytes.
type readOnlyFile struct {
	*bytes.Reader
	info fs.FileInfo
}

func (r *readOnlyFile) Write([]byte) (int, error)  { return 0, errReadOnly }
func (r *readOnlyFile) Close() error               { return nil }
func (r *readOnlyFile) Stat() (os.FileInfo, error) { return r.info, nil }

func isKustomizationFile(p string) bool {
	return slices.Contains(konfig.RecognizedKustomizationFileNames(), path.Base(filepath.ToSlash(p)))
}
