package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// configMaps is count ConfigMaps, each with more YAML appended, as one
// stream.
func configMaps(count int, more string) string {
	docs := make([]string, count)
	for i := range docs {
		docs[i] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n%s", i, more)
	}
	return strings.Join(docs, "---\n")
}

// nearAliasLimit is ConfigMap data of a few hundred bytes that stands for
// about 245,000 nodes once its aliases are expanded: just under an
// object's limit.
func nearAliasLimit() string {
	s := "data:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i <= 3; i++ {
		p := fmt.Sprintf("*l%d", i-1)
		s += fmt.Sprintf("  l%d: &l%d [%s]\n", i, i, strings.Repeat(p+", ", 9)+p)
	}
	return s + "  top: [" + strings.Repeat("*l3, ", 18) + "*l3]\n"
}

const nothingRendered = "airunway-render: 1 error(s), 0 warning(s); nothing was rendered\n"

// budgetCases are inputs past each of the run's limits; the function
// writes nothing to stdout for them.
func budgetCases() []hostileCase {
	documents := fmt.Sprintf("brings the input past %d YAML documents; one run must read at most %d (render fewer paths per run, or split the package)", budget.MaxDocuments, budget.MaxDocuments)
	nodes := fmt.Sprintf("brings the input past %d YAML nodes, counted with aliases expanded; one run must read at most %d (render fewer paths per run, split the package, or write out values that YAML aliases repeat)", budget.MaxNodes, budget.MaxNodes)
	objectNodes := fmt.Sprintf("has more than %d YAML nodes, the most an object may have; the largest real objects, CRDs of more than 1 MB, have about 36000: move data out of it, or split it", yamlerr.MaxExpandedNodes)
	return []hostileCase{
		{
			name:  "documents",
			input: configMaps(budget.MaxDocuments+1, ""),
			cli:   "[error]: " + documents + " (file model.yaml)\n" + nothingRendered,
			fn:    "[error] stdin: " + documents + "\n",
		},
		{
			// a few hundred bytes each: the nodes are the aliases'
			name:  "nodes, counted with aliases expanded",
			input: configMaps(budget.MaxNodes/245_000+1, nearAliasLimit()),
			cli:   "[error]: " + nodes + " (file model.yaml)\n" + nothingRendered,
			fn:    "[error] stdin: " + nodes + "\n",
		},
		{
			name:  "nodes of one object",
			input: configMaps(1, "data: {v: ["+strings.Repeat("1,", yamlerr.MaxExpandedNodes)+"1]}\n"),
			cli:   "[error] v1/ConfigMap/c0: " + objectNodes + " (file model.yaml)\n" + nothingRendered,
			// a failed run writes its items back: not this one
			fn: "[error] stdin: cannot read the ResourceList: `items[0]`: " + objectNodes + "\n",
		},
	}
}

// TestInputBudget runs inputs past each limit of the run's budget through
// `render` and the function: each fails with exactly the expected error,
// writes nothing to stdout, and leaves an output directory as it was.
func TestInputBudget(t *testing.T) {
	for _, tc := range budgetCases() {
		t.Run(tc.name, func(t *testing.T) {
			requireRefused(t, tc, func(t *testing.T, stdout string) {
				require.Empty(t, stdout, "refused before anything was built: nothing is written")
			})
		})
	}
}

// TestInputBudgetIsPerRun: the files of one run share one budget, so
// documents spread over files are refused at the file that crosses the
// limit, named; each file alone is within it.
func TestInputBudgetIsPerRun(t *testing.T) {
	dir := t.TempDir()
	half := configMaps(budget.MaxDocuments/2+1, "")
	writeFile(t, filepath.Join(dir, "models", "a.yaml"), half)
	writeFile(t, filepath.Join(dir, "models", "b.yaml"), strings.ReplaceAll(half, "name: c", "name: b"))
	t.Chdir(dir)
	stdout, stderr, code := run(t, "", "render", "models")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, fmt.Sprintf("[error]: brings the input past %d YAML documents; one run must read at most %d (render fewer paths per run, or split the package) (file models/b.yaml)\n", budget.MaxDocuments, budget.MaxDocuments)+nothingRendered,
		withoutDefaultWarning(stderr))

	_, stderr, code = run(t, "", "render", "models/a.yaml")
	require.Equal(t, 0, code, "one file alone is within the limits: %s", stderr)
}

// TestDocumentSize: a document past budget.MaxDocumentBytes is refused
// before it is parsed, however few nodes it has.
func TestDocumentSize(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "big.yaml"), configMaps(1, "data: {a: b}\n")+"---\n"+configMaps(1, "# "+strings.Repeat("x", budget.MaxDocumentBytes)+"\n"))
	stdout, stderr, code := run(t, "", "render", filepath.Join(dir, "big.yaml"))
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, "[error]: holds a YAML document of more than 4 MiB; a document must be at most 4 MiB (the API server stores at most 1.5 MiB per object, so no Kubernetes object comes near it) (file "+filepath.Join(dir, "big.yaml")+")\n"+nothingRendered,
		withoutDefaultWarning(stderr))
}

// TestCapabilityFileNodes: a capability file is one object, refused past
// an object's nodes before it is decoded.
func TestCapabilityFileNodes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "caps.yaml"), capsPinned+"  x: ["+strings.Repeat("1,", yamlerr.MaxExpandedNodes)+"1]\n")
	writeFile(t, filepath.Join(dir, "qwen.yaml"), goodMD)
	t.Chdir(dir)
	stdout, stderr, code := run(t, "", "render", "--capabilities", "caps.yaml", "-f", "qwen.yaml")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, fmt.Sprintf("[error]: has more than %d YAML nodes, the most an object may have; the largest real objects, CRDs of more than 1 MB, have about 36000: move data out of it, or split it (file caps.yaml)\n", yamlerr.MaxExpandedNodes)+nothingRendered, stderr)
}

// TestStdinBudget: `-` is charged like a file, and preview reads stdin
// once within the same limit.
func TestStdinBudget(t *testing.T) {
	documents := fmt.Sprintf("[error]: brings the input past %d YAML documents; one run must read at most %d (render fewer paths per run, or split the package) (file <stdin>)\n", budget.MaxDocuments, budget.MaxDocuments)
	stdout, stderr, code := run(t, configMaps(budget.MaxDocuments+1, ""), "render", "-f", "-")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, documents+nothingRendered, withoutDefaultWarning(stderr))

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "caps.yaml"), capsPinned)
	caps := filepath.Join(dir, "caps.yaml")
	stdout, stderr, code = run(t, strings.Repeat("#", budget.MaxBytes+1), "preview", "--from", caps, "--to", caps, "-f", "-")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, "[error]: brings the input past 64 MiB; the files given to one run must hold at most 64 MiB together (render fewer paths per run) (file <stdin>)\n"+nothingRendered, stderr)
}

// withDeadline fails the test when f has not returned within a few
// seconds: a read that blocks on a pipe never would.
func withDeadline(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run blocked")
	}
}

const fifoRefused = "must be a regular file, but it is a named pipe (FIFO); only regular files are read (a named pipe or a device could block the run, or never end)"

// TestNamedPipes: a named pipe among the inputs (in a directory, named on
// the command line, or behind a symbolic link) or as the capability file
// ends the run at once with an error naming it; nothing waits for a
// writer.
func TestNamedPipes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "models", "qwen.yaml"), goodMD)
	writeFile(t, filepath.Join(dir, "caps.yaml"), capsPinned)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "models", "pipe.yaml"), 0o644))
	require.NoError(t, os.Symlink("models/pipe.yaml", filepath.Join(dir, "link.yaml")))
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "--capabilities", "caps.yaml", "-f", "models"}, "[error]: " + fifoRefused + " (file models/pipe.yaml)\n" + nothingRendered},
		{[]string{"render", "--capabilities", "caps.yaml", "-f", "models/pipe.yaml"}, "[error]: " + fifoRefused + " (file models/pipe.yaml)\n" + nothingRendered},
		{[]string{"render", "--capabilities", "caps.yaml", "-f", "link.yaml"}, "[error]: " + fifoRefused + " (file link.yaml)\n" + nothingRendered},
		{[]string{"render", "--capabilities", "models/pipe.yaml", "-f", "models/qwen.yaml"}, "[error]: " + fifoRefused + " (file models/pipe.yaml)\n" + nothingRendered},
	} {
		withDeadline(t, func() {
			stdout, stderr, code := run(t, "", tc.args...)
			require.Equal(t, 1, code, "%v", tc.args)
			require.Empty(t, stdout)
			require.Equal(t, tc.want, stderr, "%v", tc.args)
		})
	}
}

// TestNamedPipeInTheRepository: the Argo CD plugin reads the repository
// through an os.Root; a named pipe there is refused as on the command
// line.
func TestNamedPipeInTheRepository(t *testing.T) {
	root := argoRepo(t, map[string]string{
		"apps/models/qwen.yaml":          goodMD,
		"clusters/dev/capabilities.yaml": capsPinned,
	})
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "apps", "models", "pipe.yaml"), 0o644))
	t.Setenv(envCapabilities, "clusters/dev/capabilities.yaml")
	withDeadline(t, func() {
		out, stderr, code := argo(t, "generate")
		require.Equal(t, 1, code)
		require.Empty(t, out)
		require.Equal(t, "[error]: "+fifoRefused+" (file pipe.yaml)\n"+nothingRendered, stderr)
	})
}

// TestDevices: a device is not read, not even opened.
func TestDevices(t *testing.T) {
	withDeadline(t, func() {
		stdout, stderr, code := run(t, "", "render", "-f", "/dev/zero")
		require.Equal(t, 1, code)
		require.Empty(t, stdout)
		require.Equal(t, "[error]: must be a regular file, but it is a device; only regular files are read (a named pipe or a device could block the run, or never end) (file /dev/zero)\n"+nothingRendered,
			withoutDefaultWarning(stderr))
	})
}
