package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/ownci"
)

// These tests run migrate on real files in t.TempDir(): links, modes,
// owners, FIFOs. The owner test needs root (as CI runs them) to give a
// file to another user.

const conflictModel = "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: c, namespace: models}\nspec:\n  model: {id: Qwen/Qwen3-0.6B}\n  image: a:v1\n  engine: {type: vllm, image: b:v1}\n  resources: {gpu: {count: 1}}\n"

// setHook sets a test hook of migrate for the test's duration.
func setHook[T any](t *testing.T, hook *T, value T) {
	t.Helper()
	old := *hook
	*hook = value
	t.Cleanup(func() { *hook = old })
}

func writeMode(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	writeFile(t, path, content)
	require.NoError(t, os.Chmod(path, mode))
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
	require.NoError(t, os.Symlink(target, link))
}

func stat(t *testing.T, path string) *syscall.Stat_t {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Sys().(*syscall.Stat_t)
}

// requireProblem: stderr has an error about file whose message starts
// with msg.
func requireProblem(t *testing.T, stderr, file, msg string) {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "[error]") && strings.Contains(line, ": "+msg) && strings.HasSuffix(line, " (file "+file+")") {
			return
		}
	}
	t.Fatalf("no error about %s saying %q:\n%s", file, msg, stderr)
}

// requireNoTempFiles: no write left its temporary file behind.
func requireNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".airunway-render-migrate-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return err
	}))
}

// TestMigrateSymlinks: a link is followed to its target, which is
// migrated while the link stays a link, when the target is inside a
// directory given to migrate or is a file named on the command line; a
// link anywhere else is refused, and the run writes nothing. Negative
// controls: locating a file by the name listed, as main did, instead of by
// its link's target fails the first two cases (the link is replaced by a
// regular file, the target keeps `spec.image`); without locate's scope
// check, the four "out" cases fail (the target outside is migrated).
func TestMigrateSymlinks(t *testing.T) {
	cases := []struct {
		name string
		// link is the link's path under the run's directory, target the
		// target's under the test's directory, which holds both.
		link, target string
		linkTo       string   // what the link holds; the target's relative path when empty
		args         []string // under the test's directory; "run" when empty
		refused      bool
	}{
		{name: "to a file inside the directory", link: "models/m.yaml", target: "run/.shared/model"},
		{name: "through a relative path with ..", link: "a/b/m.yaml", target: "run/c/model.txt"},
		{name: "out of the directory", link: "m.yaml", target: "elsewhere/model.yaml", refused: true},
		{name: "out of the directory, absolute", link: "m.yaml", target: "elsewhere/model.yaml", linkTo: "ABS", refused: true},
		{name: "out through a second link", link: "m.yaml", target: "elsewhere/model.yaml", linkTo: "hop", refused: true},
		{name: "out of the directory, with --check", link: "m.yaml", target: "elsewhere/model.yaml", args: []string{"--check", "run"}, refused: true},
		{name: "to a file named on the command line", link: "m.yaml", target: "elsewhere/model.yaml", args: []string{"run", "elsewhere/model.yaml"}},
		{name: "into another directory given", link: "m.yaml", target: "elsewhere/model.yaml", args: []string{"run", "elsewhere"}},
		{name: "the link itself named", link: "m.yaml", target: "elsewhere/model.yaml", args: []string{"run/m.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			run := filepath.Join(top, "run")
			target := filepath.Join(top, tc.target)
			link := filepath.Join(run, tc.link)
			other := filepath.Join(run, "other.yaml")
			writeFile(t, target, legacyModel)
			writeFile(t, other, legacyModel)
			linkTo, err := filepath.Rel(filepath.Dir(link), target)
			require.NoError(t, err)
			switch tc.linkTo {
			case "ABS":
				linkTo = target
			case "hop": // run/m.yaml -> hop.link -> the target
				symlink(t, linkTo, filepath.Join(run, "hop.link"))
				linkTo = "hop.link"
			}
			symlink(t, linkTo, link)
			args := []string{"migrate"}
			for _, a := range append([]string{}, tc.args...) {
				if !strings.HasPrefix(a, "-") {
					a = filepath.Join(top, a)
				}
				args = append(args, a)
			}
			if len(tc.args) == 0 {
				args = append(args, run)
			}

			code, stdout, stderr := mainArgs(args...)
			if got, err := os.Readlink(link); err != nil || got != linkTo {
				t.Errorf("the link is no longer a link to %q: %q, %v", linkTo, got, err)
			}
			if tc.refused {
				realTarget, err := filepath.EvalSymlinks(target)
				require.NoError(t, err)
				require.Equal(t, 1, code, stderr)
				requireProblem(t, stderr, link, "is a symbolic link to "+`"`+realTarget+`"`+", outside the paths named on the command line; a symbolic link must lead inside")
				require.Contains(t, stderr, "no file was changed")
				require.Equal(t, legacyModel, readFile(t, target), "the target outside was written")
				require.Equal(t, legacyModel, readFile(t, other), "a run that refuses a file wrote another")
				require.NotContains(t, stdout, link)
				return
			}
			require.Equal(t, 0, code, stderr)
			require.Equal(t, migratedModel, readFile(t, target), "the target is not migrated")
			// One note for the target however many names lead to it, and
			// one for other.yaml when the run's directory is given.
			notes := strings.Count(stdout, "moved `spec.image`") - strings.Count(stdout, other+":")
			require.Equal(t, 1, notes, "the target is not migrated exactly once:\n%s", stdout)
			requireNoTempFiles(t, top)
		})
	}
}

// TestMigrateKeepsModeAndOwner: a rewritten file keeps its permission bits
// and its owner and group. Negative controls: without the Chmod in
// fillReplacement, the cases other than 0600 (the temporary file's own
// mode) fail; without the Chown, the other user's and group's cases fail.
func TestMigrateKeepsModeAndOwner(t *testing.T) {
	cases := []struct {
		name     string
		mode     fs.FileMode
		uid, gid int // -1: the test's own
	}{
		{name: "0600", mode: 0o600, uid: -1, gid: -1},
		{name: "0640", mode: 0o640, uid: -1, gid: -1},
		{name: "0664", mode: 0o664, uid: -1, gid: -1},
		{name: "0755", mode: 0o755, uid: -1, gid: -1},
		{name: "another user's 0600", mode: 0o600, uid: 4321, gid: 8765},
		{name: "another group's 0660", mode: 0o660, uid: -1, gid: 8765},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.uid != -1 || tc.gid != -1) && os.Geteuid() != 0 {
				ownci.Skip(t, "giving a file to another user needs root")
			}
			file := filepath.Join(t.TempDir(), "m.yaml")
			writeMode(t, file, legacyModel, tc.mode)
			require.NoError(t, os.Chown(file, tc.uid, tc.gid))
			before := stat(t, file)

			code, _, stderr := mainArgs("migrate", file)
			require.Equal(t, 0, code, stderr)
			require.Equal(t, migratedModel, readFile(t, file))
			after := stat(t, file)
			require.Equal(t, fs.FileMode(before.Mode), fs.FileMode(after.Mode), "mode")
			require.Equal(t, before.Uid, after.Uid, "owner")
			require.Equal(t, before.Gid, after.Gid, "group")
		})
	}
}

// TestMigrateRefusesReadOnly: a file that needs migrating and that no one
// may write is refused by name, even for root, and the run writes nothing;
// a read-only file that needs nothing, or a --check, is no error.
// Negative control: without the mode test in checkWritable, the first
// case fails (root may open any file for writing, and rewrites it).
func TestMigrateRefusesReadOnly(t *testing.T) {
	cases := []struct {
		name      string
		content   string
		check     bool
		wantCode  int
		wantError bool
	}{
		{name: "needs migrating", content: legacyModel, wantCode: 1, wantError: true},
		{name: "needs nothing", content: migratedModel, wantCode: 0},
		{name: "--check", content: legacyModel, check: true, wantCode: exitWouldChange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ro := filepath.Join(dir, "a-read-only.yaml")
			rw := filepath.Join(dir, "b-writable.yaml")
			writeMode(t, ro, tc.content, 0o444)
			writeFile(t, rw, migratedModel)
			args := []string{"migrate", dir}
			if tc.check {
				args = []string{"migrate", "--check", dir}
			}
			code, _, stderr := mainArgs(args...)
			require.Equal(t, tc.wantCode, code, stderr)
			require.Equal(t, tc.content, readFile(t, ro))
			if tc.wantError {
				requireProblem(t, stderr, ro, "is read-only (mode -r--r--r--); migrate must not rewrite a file without write permission")
				require.Contains(t, stderr, "no file was changed")
			} else {
				require.NotContains(t, stderr, "read-only")
			}
		})
	}
}

// TestMigrateKeepsHardLinks: a file with a second name keeps sharing its
// inode with it; both names show the migrated content. Negative controls:
// with write() always replacing (the `s.links > 1` test removed), both
// cases fail (a new inode; the other name keeps `spec.image`); without
// readForMigration's dedupe by inode, the second case fails (its second
// name is refused as changed meanwhile, by the first name's write).
func TestMigrateKeepsHardLinks(t *testing.T) {
	cases := []struct {
		name   string
		second string // the second name, under the test's directory
	}{
		{name: "second name outside the directory given", second: "elsewhere/m.yaml"},
		{name: "both names in the directory given", second: "run/z.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			first := filepath.Join(top, "run", "m.yaml")
			second := filepath.Join(top, tc.second)
			writeMode(t, first, legacyModel, 0o640)
			require.NoError(t, os.MkdirAll(filepath.Dir(second), 0o755))
			require.NoError(t, os.Link(first, second))
			before, err := os.Stat(first)
			require.NoError(t, err)

			code, stdout, stderr := mainArgs("migrate", filepath.Join(top, "run"))
			require.Equal(t, 0, code, stderr)
			require.Equal(t, 1, strings.Count(stdout, "moved `spec.image`"), "one inode, migrated once:\n%s", stdout)
			for _, name := range []string{first, second} {
				after, err := os.Stat(name)
				require.NoError(t, err)
				require.True(t, os.SameFile(before, after), "%s no longer shares the inode", name)
				require.Equal(t, migratedModel, readFile(t, name), name)
				require.Equal(t, fs.FileMode(0o640), after.Mode())
			}
			require.EqualValues(t, 2, stat(t, first).Nlink)
		})
	}
}

// TestMigrateRefusesConcurrentChange: a file another process writes
// between migrate's read and its write is refused and left as that
// process left it, whether migrate would replace it or write it in place.
// Negative controls: with sameAsRead returning nil, every case fails (the
// other process's edit is lost); with only its content check removed, the
// two "same size and time" cases fail.
func TestMigrateRefusesConcurrentChange(t *testing.T) {
	appendLine := func(t *testing.T, file string) string {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.WriteString("# written by another process\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
		return legacyModel + "# written by another process\n"
	}
	// sameSizeAndTime edits a byte and puts the modification time back,
	// as a second write within the file system's time resolution can.
	sameSizeAndTime := func(t *testing.T, file string) string {
		info, err := os.Stat(file)
		require.NoError(t, err)
		edited := strings.Replace(legacyModel, "name: legacy", "name: LEGACY", 1)
		require.NoError(t, os.WriteFile(file, []byte(edited), 0))
		require.NoError(t, os.Chtimes(file, info.ModTime(), info.ModTime()))
		return edited
	}
	cases := []struct {
		name      string
		hardLink  bool // written in place rather than replaced
		otherEdit func(t *testing.T, file string) string
	}{
		{name: "replaced, a line appended", otherEdit: appendLine},
		{name: "replaced, same size and time", otherEdit: sameSizeAndTime},
		{name: "in place, a line appended", hardLink: true, otherEdit: appendLine},
		{name: "in place, same size and time", hardLink: true, otherEdit: sameSizeAndTime},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "m.yaml")
			writeFile(t, file, legacyModel)
			if tc.hardLink {
				require.NoError(t, os.Link(file, filepath.Join(t.TempDir(), "second")))
			}
			var want string
			setHook(t, &testHookBeforeVerify, func(name string) {
				if want == "" && filepath.Base(name) == "m.yaml" {
					want = tc.otherEdit(t, file)
				}
			})
			code, stdout, stderr := mainArgs("migrate", dir)
			require.NotEmpty(t, want, "the hook did not run")
			require.Equal(t, 1, code, stderr)
			requireProblem(t, stderr, file, "changed while migrate ran (another process wrote it); it was left as that process left it")
			require.Contains(t, stderr, "no file was changed")
			require.Empty(t, stdout, "notes of a change that was not made")
			require.Equal(t, want, readFile(t, file))
			requireNoTempFiles(t, dir)
		})
	}
}

// TestMigrateSyncs: a replaced file is fsynced before the rename and its
// directory after it; a file written in place is fsynced. Negative
// control: without the fsync in fillReplacement, or in syncDir, or in
// writeInPlace, its case fails.
func TestMigrateSyncs(t *testing.T) {
	cases := []struct {
		name     string
		hardLink bool
		want     func(dir string) []string // the synced files, in order
	}{
		{name: "replaced", want: func(dir string) []string { return []string{"TEMP", dir + "/."} }},
		{name: "in place", hardLink: true, want: func(dir string) []string { return []string{filepath.Join(dir, "m.yaml")} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			file := filepath.Join(dir, "m.yaml")
			writeFile(t, file, legacyModel)
			if tc.hardLink {
				require.NoError(t, os.Link(file, filepath.Join(t.TempDir(), "second")))
			}
			var synced []string
			setHook(t, &syncFile, func(f *os.File) error {
				name := f.Name()
				if strings.HasPrefix(filepath.Base(name), ".airunway-render-migrate-") && filepath.Dir(name) == dir {
					name = "TEMP"
				}
				synced = append(synced, name)
				return f.Sync()
			})
			code, _, stderr := mainArgs("migrate", dir)
			require.Equal(t, 0, code, stderr)
			require.Equal(t, migratedModel, readFile(t, file))
			require.Equal(t, tc.want(dir), synced)
		})
	}
}

// TestMigrateReportsPartialWrite: when a write fails after others
// succeeded, the run fails and says exactly which files it changed and
// which not; the file that failed keeps its content and no temporary file
// is left. The failure is an fsync error, injected at the second file of
// three. Negative control: with writeSummary always saying main's "no
// file was changed", the test fails.
func TestMigrateReportsPartialWrite(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	a, b, c := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.yaml")
	for _, f := range []string{a, b, c} {
		writeFile(t, f, legacyModel)
	}
	writeFile(t, filepath.Join(dir, "current.yaml"), migratedModel)
	tempSyncs := 0
	setHook(t, &syncFile, func(f *os.File) error {
		if strings.HasPrefix(filepath.Base(f.Name()), ".airunway-render-migrate-") {
			tempSyncs++
			if tempSyncs == 2 {
				return &fs.PathError{Op: "fsync", Path: f.Name(), Err: syscall.EIO}
			}
		}
		return f.Sync()
	})
	code, stdout, stderr := mainArgs("migrate", dir)
	require.Equal(t, 1, code, stderr)
	requireProblem(t, stderr, b, "cannot write: fsync "+dir+"/.airunway-render-migrate-")
	require.Contains(t, stderr, "changed 2 of the 3 file(s) that needed migrating: "+a+", "+c+"; not changed: "+b+"\n")
	require.NotContains(t, stderr, "no file was changed")
	require.Equal(t, migratedModel, readFile(t, a))
	require.Equal(t, legacyModel, readFile(t, b))
	require.Equal(t, migratedModel, readFile(t, c))
	require.Contains(t, stdout, a+": ")
	require.Contains(t, stdout, c+": ")
	require.NotContains(t, stdout, b+": ", "notes of a change that was not made")
	requireNoTempFiles(t, dir)
}

// TestMigrateBadInputWritesNothing: a file migrate refuses (here a
// conflict) fails the run before any file is written, also the files
// before it. Negative control: writing the files that passed despite the
// errors, as main did, fails this test (a.yaml is migrated while the
// summary says "no file was changed"), and the refusal cases of
// TestMigrateSymlinks and TestMigrateRefusesNonRegularFiles.
func TestMigrateBadInputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	writeFile(t, a, legacyModel)
	writeFile(t, b, conflictModel)
	code, stdout, stderr := mainArgs("migrate", dir)
	require.Equal(t, 1, code, stderr)
	requireProblem(t, stderr, b, "`spec.image` \"a:v1\" and `spec.engine.image` \"b:v1\" differ")
	require.Contains(t, stderr, "no file was changed")
	require.Empty(t, stdout)
	require.Equal(t, legacyModel, readFile(t, a))
	require.Equal(t, conflictModel, readFile(t, b))
}

// TestMigrateRefusesNonRegularFiles: a FIFO, a device or a directory among
// the inputs is refused by name, without waiting on it, and the run writes
// nothing. Negative controls: without O_NONBLOCK in open, the FIFO cases
// hang until `go test -timeout` ends them; without the type check, the
// device and directory cases fail.
func TestMigrateRefusesNonRegularFiles(t *testing.T) {
	cases := []struct {
		name  string
		make  func(t *testing.T, dir string) string // returns the path to name on the command line
		named bool                                  // the path is named on the command line, not found under the directory
		what  string
	}{
		{name: "FIFO in the directory", what: "a named pipe (FIFO)", make: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo.yaml")
			require.NoError(t, syscall.Mkfifo(p, 0o644))
			return p
		}},
		{name: "FIFO named", named: true, what: "a named pipe (FIFO)", make: func(t *testing.T, dir string) string {
			p := filepath.Join(t.TempDir(), "fifo.yaml")
			require.NoError(t, syscall.Mkfifo(p, 0o644))
			return p
		}},
		{name: "device named", named: true, what: "a device", make: func(t *testing.T, dir string) string { return os.DevNull }},
		{name: "link to a directory", what: "a directory", make: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "dir.yaml")
			symlink(t, ".hidden", p)
			require.NoError(t, os.Mkdir(filepath.Join(dir, ".hidden"), 0o755))
			return p
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			other := filepath.Join(dir, "other.yaml")
			writeFile(t, other, legacyModel)
			special := tc.make(t, dir)
			args := []string{"migrate", dir}
			if tc.named {
				args = append(args, special)
			}
			code, _, stderr := mainArgs(args...)
			require.Equal(t, 1, code, stderr)
			requireProblem(t, stderr, special, "must be a regular file, but it is "+tc.what)
			require.Contains(t, stderr, "no file was changed")
			require.Equal(t, legacyModel, readFile(t, other))
		})
	}
}

// TestMigrateInputBudget: the files of one run are read within one input
// budget, as render reads them: their bytes together, a file past it
// refused from its size, before it is read; and their YAML documents.
func TestMigrateInputBudget(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), legacyModel)
	big := filepath.Join(dir, "b.yaml")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(int64(hub.MaxInputBytes))) // sparse: no disk used
	require.NoError(t, f.Close())
	code, _, stderr := mainArgs("migrate", dir)
	require.Equal(t, 1, code, stderr)
	requireProblem(t, stderr, big, "brings the input past 64 MiB; the files given to one run must hold at most 64 MiB together")
	require.Equal(t, legacyModel, readFile(t, filepath.Join(dir, "a.yaml")))

	require.NoError(t, os.Remove(big))
	many := filepath.Join(dir, "many.yaml")
	writeFile(t, many, strings.Repeat("---\na: b\n", hub.MaxInputDocuments))
	code, _, stderr = mainArgs("migrate", dir)
	require.Equal(t, 1, code, stderr)
	requireProblem(t, stderr, many, "brings the input past 50000 YAML documents")
	require.Equal(t, legacyModel, readFile(t, filepath.Join(dir, "a.yaml")))
}

// TestWriteSummary: the summary of a run with write errors names every
// file by what happened to it.
func TestWriteSummary(t *testing.T) {
	cases := []struct {
		changed, unchanged, torn []string
		want                     string
	}{
		{unchanged: []string{"a", "b"}, want: "no file was changed"},
		{changed: []string{"a"}, unchanged: []string{"b", "c"}, want: "changed 1 of the 3 file(s) that needed migrating: a; not changed: b, c"},
		{torn: []string{"a"}, unchanged: []string{"b"}, want: "changed none of the 2 file(s) that needed migrating; not changed: b; may be partly written (restore from version control, then run migrate again): a"},
	}
	for _, tc := range cases {
		needed := len(tc.changed) + len(tc.unchanged) + len(tc.torn)
		if got := writeSummary(needed, "needed migrating", tc.changed, tc.unchanged, tc.torn); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
