package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOutputDirStaysInside: objects that pass through name the files
// --output-dir writes, so a name or namespace that is not one path segment
// is refused at its field, and nothing is written anywhere; a symbolic
// link in the directory does not lead a write out of it.
func TestOutputDirStaysInside(t *testing.T) {
	for _, tc := range []struct{ name, object, says string }{
		{"a name that climbs", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x/../../.github/workflows/pwned, namespace: ml}\n", "v1/ConfigMap/ml/x/../../.github/workflows/pwned metadata.name: is \"x/../../.github/workflows/pwned\": a name must not contain `/`"},
		{"a namespace that climbs", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ..}\n", "metadata.namespace: is \"..\": a namespace must be a DNS-1123 label"},
		{"a kind with a separator", "apiVersion: v1\nkind: ../ConfigMap\nmetadata: {name: x, namespace: ml}\n", "kind: is \"../ConfigMap\": a kind must not contain `/`"},
		{"a backslash", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 'x\\..\\..\\pwned', namespace: ml}\n", "a name must not contain `/`, `\\`"},
		{"a name that is ..", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: .., namespace: ml}\n", "a name must not be `.` or `..`"},
		{"a control character", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"x\\ny\", namespace: ml}\n", "control characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
			writeFile(t, filepath.Join(in, "qwen.yaml"), goodMD)
			writeFile(t, filepath.Join(in, "hostile.yaml"), tc.object)
			stdout, stderr, code := run(t, "", "render", "--output-dir", out, in)
			require.Equal(t, 1, code)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.says)
			require.Equal(t, []string{"in/hostile.yaml", "in/qwen.yaml"}, listFiles(t, dir), "nothing is written, inside or outside the directory")
		})
	}

	// A link in the output directory to a directory outside it.
	dir := t.TempDir()
	in, out, outside := filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "outside")
	writeFile(t, filepath.Join(in, "qwen.yaml"), goodMD)
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	writeFile(t, filepath.Join(outside, "service_qwen.yaml"), GeneratedHeader+"stale: true\n")
	require.NoError(t, os.Symlink(outside, filepath.Join(out, "ml")))
	_, stderr, code := run(t, "", "render", "--output-dir", out, in)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "a symbolic link in the directory leads outside it; --output-dir writes only inside")
	require.Equal(t, []string{"service_qwen.yaml"}, listFiles(t, outside), "nothing is written or removed through the link")
	require.Equal(t, GeneratedHeader+"stale: true\n", readAll(t, outside)["service_qwen.yaml"])
}

// TestRenderReadsOnlyNamedPaths: a file found in a named directory is a
// repository's, so a symbolic link there must lead inside a named path:
// one to a file elsewhere (a kubeconfig, a token) is refused, and nothing
// is written; a link inside the directory, or a file named on the command
// line, is read.
func TestRenderReadsOnlyNamedPaths(t *testing.T) {
	dir := t.TempDir()
	in, out, outside := filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "outside")
	writeFile(t, filepath.Join(in, "qwen.yaml"), goodMD)
	writeFile(t, filepath.Join(outside, "config.yaml"), "apiVersion: v1\nkind: Config\nmetadata: {name: kubeconfig}\nusers: [{name: admin, user: {token: secret}}]\n")
	require.NoError(t, os.Symlink(filepath.Join(outside, "config.yaml"), filepath.Join(in, "leak.yaml")))
	for _, args := range [][]string{{"render", "--output-dir", out, in}, {"render", in}, {"plan", "--capabilities", filepath.Join(in, "qwen.yaml"), in}} {
		stdout, stderr, code := run(t, "", args...)
		require.Equal(t, 1, code, "%v", args)
		require.Empty(t, stdout)
		require.Contains(t, stderr, "is a symbolic link to \""+filepath.Join(outside, "config.yaml")+"\", outside the paths named on the command line")
		require.NotContains(t, stderr+stdout, "secret")
	}
	require.NoDirExists(t, out)

	// Named, the same file is read; a link inside the directory is too.
	require.NoError(t, os.Remove(filepath.Join(in, "leak.yaml")))
	require.NoError(t, os.Symlink("qwen.yaml", filepath.Join(in, "alias.yaml")))
	stdout, stderr, code := run(t, "", "render", filepath.Join(in, "qwen.yaml"), filepath.Join(outside, "config.yaml"))
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "kind: Config")
	_, stderr, code = run(t, "", "render", filepath.Join(in, "alias.yaml"))
	require.Equal(t, 0, code, stderr)
}
