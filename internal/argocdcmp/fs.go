package argocdcmp

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// cmpWorkDirName is DefaultCMPWorkDirName (common/common.go).
const cmpWorkDirName = "_cmp_server"

// cmpWorkDir mirrors common.GetCMPWorkDir: $ARGOCD_CMP_WORKDIR/_cmp_server,
// or os.TempDir()/_cmp_server.
func cmpWorkDir(workDir string) string {
	if workDir != "" {
		return filepath.Join(workDir, cmpWorkDirName)
	}
	return filepath.Join(os.TempDir(), cmpWorkDirName)
}

// newUUID returns a random RFC 4122 version 4 UUID string, the name
// files.CreateTempDir (util/io/files/util.go) gives each request directory.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// createRequestDir mirrors getTempDirMustCleanup + files.CreateTempDir: a
// fresh <base>/<uuid> directory created with MkdirAll(0755). The cmp-server's
// Init creates <base> with 0700 at start-up (it also wipes it, which the
// harness does not do).
func createRequestDir(base string) (string, error) {
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("error creating temp dir: error creating tempDir: %w", err)
	}
	id, err := newUUID()
	if err != nil {
		return "", fmt.Errorf("error creating temp dir: error creating directory name: %w", err)
	}
	dir := path.Join(base, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("error creating temp dir: error creating tempDir: %w", err)
	}
	return dir, nil
}

// removeRequestDir is the deferred cleanup. Argo CD only logs a failed
// os.RemoveAll; the harness additionally makes directories writable and
// retries so that preserveFileMode trees with read-only directories do not
// litter the test's temp dir.
func removeRequestDir(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// relativePath mirrors files.RelativePath (util/io/files/util.go).
func relativePath(fullPath, basePath string) (string, error) {
	fp := filepath.Clean(fullPath)
	if !strings.HasPrefix(fp, filepath.Clean(basePath)) {
		return "", errors.New("full path does not contain base path")
	}
	return filepath.Rel(basePath, fp)
}

// resolveAppPath mirrors apppathutil.Path (util/app/path/path.go), which
// runRepoOperation applies to spec.source.path.
func resolveAppPath(root, appPath string) (string, error) {
	if filepath.IsAbs(appPath) {
		return "", fmt.Errorf("%s: app path is absolute", appPath)
	}
	p := filepath.Join(root, appPath)
	if !strings.HasPrefix(p, filepath.Clean(root)) {
		return "", fmt.Errorf("%s: app path outside root", appPath)
	}
	info, err := os.Stat(p)
	if os.IsNotExist(err) {
		return "", fmt.Errorf("%s: app path does not exist", appPath)
	}
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s: app path is not a directory", appPath)
	}
	return p, nil
}

// checkOutOfBoundsSymlinks mirrors apppathutil.CheckOutOfBoundsSymlinks
// (util/app/path/path.go) as runRepoOperation calls it for Git sources
// (skipping ".git"): absolute symlinks, and relative ones whose target
// walks out of the repository at any step, are rejected.
func checkOutOfBoundsSymlinks(basePath string, skipPaths ...string) error {
	absBase, err := filepath.Abs(basePath)
	if err != nil {
		return fmt.Errorf("failed to get absolute path: %w", err)
	}
	skip := map[string]bool{}
	for _, p := range skipPaths {
		skip[filepath.Join(absBase, p)] = true
	}
	var oob string
	err = filepath.Walk(absBase, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("failed to walk for symlinks in %s: %w", absBase, err)
		}
		if skip[p] {
			return filepath.SkipDir
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return fmt.Errorf("failed to read link %s: %w", p, err)
		}
		rel, err := filepath.Rel(absBase, p)
		if err != nil {
			return fmt.Errorf("failed to get relative path for symlink: %w", err)
		}
		if filepath.IsAbs(target) {
			oob = rel
			return errOutOfBounds
		}
		cur := filepath.Dir(p)
		for _, part := range strings.Split(target, string(os.PathSeparator)) {
			cur = filepath.Join(cur, part)
			r, err := filepath.Rel(absBase, cur)
			if err != nil {
				return fmt.Errorf("failed to get relative path for symlink target: %w", err)
			}
			if r == ".." || strings.HasPrefix(r, ".."+string(os.PathSeparator)) {
				oob = rel
				return errOutOfBounds
			}
		}
		return nil
	})
	if errors.Is(err, errOutOfBounds) {
		// runRepoOperation's message for Git sources.
		return fmt.Errorf("repository contains out-of-bounds symlinks. file: %s", oob)
	}
	return err
}

var errOutOfBounds = errors.New("out of bounds symlink found")

// repoArchive is what the repo-server streams to the cmp-server: a tar of
// rootPath (gzip is left out: it changes nothing on the receiving side).
type repoArchive struct {
	data         []byte
	filesWritten int
}

// packRepo mirrors files.Tgz / tgz.tgzFile (util/io/files/tar.go) as
// tgzstream.CompressFiles calls it (no inclusions): filepath.Walk of
// rootPath, exclusion globs applied to the slash-separated relative path,
// only regular files, directories and symlinks archived, headers from
// tar.FileInfoHeader (so the on-disk permission bits travel in the header),
// symlinks stored with their target unresolved. Only regular files count
// towards filesWritten.
func packRepo(rootPath string, excluded []string) (*repoArchive, error) {
	if _, err := os.Stat(rootPath); err != nil {
		return nil, fmt.Errorf("error inspecting srcPath %q: %w", rootPath, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	n := 0
	err := filepath.Walk(rootPath, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return fmt.Errorf("error walking in %q: %w", rootPath, err)
		}
		rel, err := relativePath(p, rootPath)
		if err != nil {
			return fmt.Errorf("relative path error: %w", err)
		}
		rel = filepath.ToSlash(rel)
		for _, pattern := range excluded {
			found, err := matchesExclusionPattern(pattern, rel)
			if err != nil {
				return fmt.Errorf("error verifying exclusion pattern %q: %w", pattern, err)
			}
			if found {
				if fi.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		mode := fi.Mode()
		isLink := mode&fs.ModeSymlink != 0
		if !mode.IsRegular() && !mode.IsDir() && !isLink {
			return nil
		}
		link := ""
		if isLink {
			if link, err = os.Readlink(p); err != nil {
				return fmt.Errorf("error getting link target: %w", err)
			}
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return fmt.Errorf("error creating a tar file header: %w", err)
		}
		hdr.Name = rel
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("error writing header: %w", err)
		}
		if mode.IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return fmt.Errorf("error opening file %q: %w", fi.Name(), err)
			}
			defer func() { _ = f.Close() }()
			if _, err := io.Copy(tw, f); err != nil {
				return fmt.Errorf("error copying tgz file to writers: %w", err)
			}
			n++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &repoArchive{data: buf.Bytes(), filesWritten: n}, nil
}

// matchesExclusionPattern mirrors matchesExclusionPattern
// (util/io/files/tar.go): patterns containing "/" are matched against the
// relative path with doublestar semantics, others with filepath.Match
// against the relative path (not the base name).
//
// Argo CD uses github.com/bmatcuk/doublestar/v4 for the "/" case; this
// re-implementation supports "**" as a whole path segment (zero or more
// segments) and path.Match syntax within segments, but not doublestar's
// {a,b} alternatives.
func matchesExclusionPattern(pattern, rel string) (bool, error) {
	pattern = filepath.ToSlash(pattern)
	if strings.Contains(pattern, "/") {
		return matchSegments(strings.Split(pattern, "/"), strings.Split(rel, "/"))
	}
	return filepath.Match(pattern, rel)
}

func matchSegments(pat, name []string) (bool, error) {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				ok, err := matchSegments(pat[1:], name[i:])
				if ok || err != nil {
					return ok, err
				}
			}
			return false, nil
		}
		if len(name) == 0 {
			return false, nil
		}
		ok, err := path.Match(pat[0], name[0])
		if !ok || err != nil {
			return false, err
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0, nil
}

// unpackRepo mirrors files.Untgz/untar (util/io/files/tar.go) as
// cmp.ReceiveRepoStream calls it:
//
//   - directories are created 0755 and regular files 0644 unless
//     preserveFileMode, in which case the header's mode is used (in both
//     cases subject to the process umask, and through os.Root, which rejects
//     directory modes with bits beyond 0777);
//   - symlink targets are cleaned and re-expressed relative to the link's
//     directory, links whose parent is itself a symlink are refused, and
//     targets that would leave dstPath are refused;
//   - every other entry type is skipped.
func unpackRepo(dstPath string, r io.Reader, preserveFileMode bool) error {
	if !filepath.IsAbs(dstPath) {
		return fmt.Errorf("dstPath points to a relative path: %s", dstPath)
	}
	tr := tar.NewReader(r)
	if err := os.MkdirAll(dstPath, 0o755); err != nil {
		return fmt.Errorf("error creating destination path %s: %w", dstPath, err)
	}
	root, err := os.OpenRoot(dstPath)
	if err != nil {
		return fmt.Errorf("error opening root directory %s: %w", dstPath, err)
	}
	defer func() { _ = root.Close() }()

	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("error while iterating on tar reader: %w", err)
		}
		name := strings.TrimPrefix(filepath.Clean(hdr.Name), string(filepath.Separator))
		if name == "" || name == "." || name == "./" {
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			mode := os.FileMode(0o755)
			if preserveFileMode {
				mode = os.FileMode(hdr.Mode)
			}
			if err := root.MkdirAll(name, mode); err != nil {
				return fmt.Errorf("error creating nested folders: %w", err)
			}
		case tar.TypeSymlink:
			link := filepath.Clean(hdr.Linkname)
			if err := rejectSymlinkAncestors(root, name); err != nil {
				return err
			}
			baseDir := filepath.Dir(name)
			if err := root.MkdirAll(baseDir, 0o755); err != nil {
				return fmt.Errorf("error creating nested folders: %w", err)
			}
			fromRoot := filepath.Join(baseDir, link)
			if _, err := root.Stat(fromRoot); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("error checking symlink %q target: %w", fromRoot, err)
			}
			fromBase, err := filepath.Rel(baseDir, fromRoot)
			if err != nil {
				return fmt.Errorf("error relativizing link target: %w", err)
			}
			if err := root.Symlink(fromBase, name); err != nil {
				return fmt.Errorf("error creating symlink: %w", err)
			}
		case tar.TypeReg:
			mode := os.FileMode(0o644)
			if preserveFileMode {
				mode = os.FileMode(hdr.Mode)
			}
			if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return fmt.Errorf("error creating nested folders: %w", err)
			}
			f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, mode)
			if err != nil {
				return fmt.Errorf("error creating file %q: %w", name, err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				_ = f.Close()
				return fmt.Errorf("error writing tgz file: %w", err)
			}
			_ = f.Close()
		}
	}
}

// rejectSymlinkAncestors mirrors rejectSymlinkAncestors (util/io/files/tar.go).
func rejectSymlinkAncestors(root *os.Root, name string) error {
	dir := filepath.Dir(name)
	if dir == "." || dir == string(filepath.Separator) {
		return nil
	}
	cur := ""
	for _, part := range strings.Split(dir, string(filepath.Separator)) {
		if part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		info, err := root.Lstat(cur)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("error checking symlink parent %q: %w", cur, err)
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("illegal symlink parent directory %q for %q", cur, name)
		}
	}
	return nil
}
