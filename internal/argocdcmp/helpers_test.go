package argocdcmp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const testRevision = "0123456789abcdef0123456789abcdef01234567"

// file describes one repository entry for writeRepo.
type file struct {
	content string
	mode    os.FileMode // 0 means 0644
	link    string      // non-empty: a symlink with this target
	dir     bool
}

// writeRepo creates a repository directory from a map of relative paths.
func writeRepo(t *testing.T, files map[string]file) string {
	t.Helper()
	root := t.TempDir()
	for name, f := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		switch {
		case f.link != "":
			require.NoError(t, os.Symlink(f.link, p))
		case f.dir:
			mode := f.mode
			if mode == 0 {
				mode = 0o755
			}
			require.NoError(t, os.MkdirAll(p, mode))
			require.NoError(t, os.Chmod(p, mode))
		default:
			mode := f.mode
			if mode == 0 {
				mode = 0o644
			}
			require.NoError(t, os.WriteFile(p, []byte(f.content), mode))
			require.NoError(t, os.Chmod(p, mode))
		}
	}
	return root
}

// shPlugin is a plugin whose generate command is `sh -c <script>`.
func shPlugin(script string) *Plugin {
	return &Plugin{
		TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: ConfigManagementPluginKind},
		Metadata: metav1.ObjectMeta{Name: "test-cmp"},
		Spec: PluginSpec{
			Generate: Command{Command: []string{"sh", "-c"}, Args: []string{script}},
		},
	}
}

func sh(script string) Command { return Command{Command: []string{"sh", "-c", script}} }

// testApp is an Application that names the test plugin explicitly.
func testApp() App {
	return App{
		Name:           "guestbook",
		Namespace:      "prod",
		Project:        "default",
		Revision:       testRevision,
		RepoURL:        "https://git.example.com/org/repo.git",
		Path:           "apps/web",
		TargetRevision: "main",
		KubeVersion:    "v1.30.2",
		APIVersions:    []string{"v1", "apps/v1", "apps/v1/Deployment"},
		Plugin:         &AppPlugin{Name: "test-cmp"},
	}
}

var testBaseEnv = []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/argocd", "SIDECAR_VAR=sidecar"}

func testOptions(t *testing.T) Options {
	return Options{WorkDir: t.TempDir(), BaseEnv: testBaseEnv, KillGrace: 200 * time.Millisecond}
}

// appRepo is a repository with an app directory at apps/web.
func appRepo(t *testing.T, extra map[string]file) string {
	files := map[string]file{
		"apps/web/README.md": {content: "web\n"},
		"README.md":          {content: "repo\n"},
	}
	for k, v := range extra {
		files[k] = v
	}
	return writeRepo(t, files)
}

func run(t *testing.T, p *Plugin, repo string, app App, opts Options) (*Result, error) {
	t.Helper()
	return Run(context.Background(), p, repo, app, opts)
}

// configMap renders a ConfigMap manifest with the given data (values are
// shell-expanded by the generate script).
func configMap(name string, data map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cat <<EOF\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n", name)
	for k, v := range data {
		fmt.Fprintf(&b, "  %s: \"%s\"\n", k, v)
	}
	b.WriteString("EOF\n")
	return b.String()
}

func cmData(t *testing.T, res *Result, i int) map[string]string {
	t.Helper()
	require.Greater(t, len(res.Manifests), i)
	raw, ok := res.Manifests[i].Object["data"].(map[string]any)
	require.True(t, ok, "manifest %d has no data: %v", i, res.Manifests[i].Object)
	out := map[string]string{}
	for k, v := range raw {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// processGone reports whether pid no longer runs (absent or a zombie; the
// test environment's PID 1 need not reap orphans).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	if i < 0 {
		return true
	}
	f := strings.Fields(s[i+1:])
	return len(f) == 0 || f[0] == "Z" || f[0] == "X"
}

func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if processGone(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return processGone(pid)
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		_, err = fmt.Sscanf(strings.TrimSpace(string(b)), "%d", &pid)
		return err == nil
	}, 2*time.Second, 10*time.Millisecond)
	return pid
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
