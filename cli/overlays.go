package cli

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"time"

	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/gitsnap"
)

// `plan`, `diff` and `preview` answer about what Argo CD and Flux apply: a
// PATH that holds a kustomization (an overlay per cluster) is built first,
// with build's guarded in-process kustomize and this binary as its
// function, and its output stands in for the directory. Read as files, an
// overlay's patches would be invisible and its models (in a base
// elsewhere) missing.

// builtFiles serves each built kustomization directory as one file of
// YAML, its build output; every other path reads through files.
type builtFiles struct {
	files
	built map[string][]byte // by the path as the user named it
}

func (b builtFiles) open(name string) (io.ReadCloser, error) {
	if data, ok := b.built[name]; ok {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	return b.files.open(name)
}

func (b builtFiles) stat(name string) (fs.FileInfo, error) {
	if data, ok := b.built[name]; ok {
		return builtInfo{name: path.Base(filepath.ToSlash(name)), size: int64(len(data))}, nil
	}
	return b.files.stat(name)
}

// builtInfo describes a build's output as a regular file.
type builtInfo struct {
	name string
	size int64
}

func (i builtInfo) Name() string     { return i.name }
func (i builtInfo) Size() int64      { return i.size }
func (builtInfo) Mode() fs.FileMode  { return 0o444 }
func (builtInfo) ModTime() time.Time { return time.Time{} }
func (builtInfo) IsDir() bool        { return false }
func (builtInfo) Sys() any           { return nil }

// isKustomization reports whether the directory p of src holds a
// kustomization, by the file names kustomize itself looks for.
func isKustomization(src files, p string) bool {
	if info, err := src.stat(p); err != nil || !info.IsDir() {
		return false
	}
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if info, err := src.stat(filepath.Join(p, name)); err == nil && !info.IsDir() {
			return true
		}
	}
	return false
}

// onDisk gives a PATH's directory on disk and the root the build of a
// kustomization there may not read outside of.
type onDisk func(p string) (dir, root string)

// hostDirs: paths as the user named them, each confined to the Git
// working tree that holds it, as `build` confines its directory.
func hostDirs(p string) (string, string) { return p, repositoryRoot(p) }

// snapshotDirs: paths of a snapshot of a revision (or the working tree),
// confined to it.
func snapshotDirs(snap *gitsnap.Snapshot) onDisk {
	top := snap.Root.Name()
	return func(p string) (string, string) { return filepath.Join(top, filepath.FromSlash(p)), top }
}

// withOverlaysBuilt builds every PATH that holds a kustomization and
// returns src with each such directory read as its build's output. A
// failed build is an error naming the PATH, and nothing is built after it.
func withOverlaysBuilt(src files, paths []string, where onDisk, stderr io.Writer) (files, diag.List) {
	built, l := buildOverlays(src, paths, where, stderr)
	return withBuilt(src, built), l
}

// withBuilt reads the built directories as their outputs, the rest of
// the paths through src.
func withBuilt(src files, built map[string][]byte) files {
	if len(built) == 0 {
		return src
	}
	return builtFiles{files: src, built: built}
}

// buildOverlays builds every PATH that holds a kustomization, by path.
func buildOverlays(src files, paths []string, where onDisk, stderr io.Writer) (map[string][]byte, diag.List) {
	built := map[string][]byte{}
	for _, p := range paths {
		if p == stdinName || !isKustomization(src, p) {
			continue
		}
		dir, root := where(p)
		stop := stopAfter(defaultBuildTimeout, stderr, "the build of "+p)
		res, err := buildKustomization(dir, root)
		stop()
		if err != nil {
			return nil, diag.List{{Severity: diag.Error, File: p, Message: fmt.Sprintf("holds a kustomization, which is built as Argo CD and Flux build it, and the build failed: %v", err)}}
		}
		built[p] = res.YAML
	}
	return built, nil
}

// anyKustomization reports whether some path holds a kustomization at the
// side, so that its snapshot must be the whole tree.
func anyKustomization(repo *gitsnap.Repo, side gitsnap.Side, paths []string) (bool, error) {
	var query []string
	for _, p := range paths {
		for _, name := range konfig.RecognizedKustomizationFileNames() {
			query = append(query, path.Join(p, name))
		}
	}
	has, err := repo.Exists(side, query)
	if err != nil {
		return false, err
	}
	for _, h := range has {
		if h {
			return true, nil
		}
	}
	return false, nil
}

// takeSide opens a side's files for paths: the whole tree when one of
// them is a kustomization (it reads what it names, anywhere), else just
// the paths.
func takeSide(repo *gitsnap.Repo, side gitsnap.Side, paths []string) (*gitsnap.Snapshot, error) {
	whole, err := anyKustomization(repo, side, paths)
	if err != nil {
		return nil, err
	}
	if whole {
		return repo.TakeTree(side)
	}
	return repo.Take(side, paths)
}
