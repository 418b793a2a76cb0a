package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// diffModel is a ModelDeployment in block style, so its diff lines read
// like the files users write.
func diffModel(name string, replicas, gpus int) string {
	return fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: %s
  namespace: ml
spec:
  model:
    id: Qwen/Qwen3-0.6B
  provider:
    name: vllm
  engine:
    type: vllm
  scaling:
    replicas: %d
  resources:
    gpu:
      count: %d
`, name, replicas, gpus)
}

// diffCaps is a capability file with one GPU pool selected by poolLabel.
func diffCaps(poolLabel string) string {
	return `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata:
  name: test
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  providers:
  - name: vllm
    images:
      vllm: vllm/vllm-openai:v0.11.0
  nodePools:
  - name: gpu
    selector:
      pool: ` + poolLabel + `
    gpu:
      resourceName: nvidia.com/gpu
      memoryMiB: 81920
      perNode: 8
`
}

// diffTestRepo is a throwaway repository driven by the real git binary, with
// the machine's git configuration shut out so commits work anywhere.
type diffTestRepo struct {
	t   *testing.T
	dir string
}

func newDiffTestRepo(t *testing.T) *diffTestRepo {
	t.Helper()
	r := &diffTestRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q")
	return r
}

func (r *diffTestRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=x", "-c", "user.email=x@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v:\n%s", args, out)
	return string(out)
}

// write sets files by repository path; "" deletes one.
func (r *diffTestRepo) write(files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if content == "" {
			require.NoError(r.t, os.Remove(p))
			continue
		}
		writeFile(r.t, p, content)
	}
}

// commit writes files and commits everything.
func (r *diffTestRepo) commit(msg string, files map[string]string) {
	r.t.Helper()
	r.write(files)
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
}

// diffBaseRepo has one commit: a capability file and the model qwen.
func diffBaseRepo(t *testing.T) *diffTestRepo {
	r := newDiffTestRepo(t)
	r.commit("base", map[string]string{
		"clusters/prod/capabilities.yaml": diffCaps("a100"),
		"models/qwen/model.yaml":          diffModel("qwen", 1, 1),
	})
	return r
}

const diffCapsFlag = "--capabilities=clusters/prod/capabilities.yaml"

// diffBackticks writes ' for ` in golden strings: Go raw strings cannot hold
// a backtick.
func diffBackticks(s string) string { return strings.ReplaceAll(s, "'", "`") }

const replicasGolden = `~ ModelDeployment/ml/qwen (airunway.ai/v1alpha1)
~ Deployment/ml/qwen (apps/v1)

--- HEAD~1:ModelDeployment/ml/qwen
+++ HEAD:ModelDeployment/ml/qwen
@@ -24,7 +24,7 @@
   engine:
     type: vllm
   scaling:
-    replicas: 1
+    replicas: 2
   resources:
     gpu:
       count: 1
--- HEAD~1:Deployment/ml/qwen
+++ HEAD:Deployment/ml/qwen
@@ -12,7 +12,7 @@
   name: qwen
   namespace: ml
 spec:
-  replicas: 1
+  replicas: 2
   selector:
     matchLabels:
       airunway.ai/deployment: qwen

3 objects: 0 added, 2 changed, 0 removed, 1 unchanged
`

var markdownGolden = diffBackticks(`### airunway-render diff for 'clusters/prod/capabilities.yaml'

'HEAD~1' → 'HEAD': 4 objects: 1 added, 0 changed, 0 removed, 3 unchanged

| Change | Kind | Namespace/Name | API version |
| --- | --- | --- | --- |
| added | ConfigMap | 'ml/notes' | 'v1' |

<details><summary>added ConfigMap/ml/notes</summary>

''''diff
--- /dev/null
+++ HEAD:ConfigMap/ml/notes
@@ -0,0 +1,8 @@
+apiVersion: v1
+kind: ConfigMap
+metadata:
+  name: notes
+  namespace: ml
+data:
+  readme: |
+    '''sh kubectl apply'''
''''

</details>
`)

type diffCase struct {
	name string
	// setup builds the repository and returns the arguments after
	// "diff -C <repo>".
	setup  func(t *testing.T) (*diffTestRepo, []string)
	code   int
	stdout string   // exact, when set
	want   []string // in stdout
	not    []string // not in stdout
	stderr []string // in stderr
}

var diffCases = []diffCase{
	{
		name: "model changed: replicas",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("scale", map[string]string{"models/qwen/model.yaml": diffModel("qwen", 2, 1)})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models"}
		},
		stdout: replicasGolden,
	},
	{
		name: "model changed: GPU count",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("gpus", map[string]string{"models/qwen/model.yaml": diffModel("qwen", 1, 2)})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models"}
		},
		want: []string{
			"~ Deployment/ml/qwen (apps/v1)\n",
			"-            nvidia.com/gpu: \"1\"\n+            nvidia.com/gpu: \"2\"\n",
			"+        - --tensor-parallel-size\n",
			"3 objects: 0 added, 2 changed, 0 removed, 1 unchanged\n",
		},
	},
	{
		name: "capability file changed: node pool selector",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("pool", map[string]string{"clusters/prod/capabilities.yaml": diffCaps("h100")})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models"}
		},
		want: []string{
			"~ Deployment/ml/qwen (apps/v1)\n\n--- HEAD~1:Deployment/ml/qwen\n+++ HEAD:Deployment/ml/qwen\n",
			"       nodeSelector:\n-        pool: a100\n+        pool: h100\n",
			"3 objects: 0 added, 1 changed, 0 removed, 2 unchanged\n",
		},
		not: []string{"~ ModelDeployment"},
	},
	{
		name: "model added",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("add", map[string]string{"models/llama/model.yaml": diffModel("llama", 1, 1)})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models"}
		},
		want: []string{
			"+ ModelDeployment/ml/llama (airunway.ai/v1alpha1)\n+ Deployment/ml/llama (apps/v1)\n+ Service/ml/llama (v1)\n\n",
			"--- /dev/null\n+++ HEAD:Deployment/ml/llama\n@@ -0,0 +1,",
			"+  replicas: 1\n",
			"6 objects: 3 added, 0 changed, 0 removed, 3 unchanged\n",
		},
	},
	{
		name: "model removed",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("add", map[string]string{"models/llama/model.yaml": diffModel("llama", 1, 1)})
			r.commit("remove", map[string]string{"models/qwen/model.yaml": ""})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models"}
		},
		want: []string{
			"- ModelDeployment/ml/qwen (airunway.ai/v1alpha1)\n- Deployment/ml/qwen (apps/v1)\n- Service/ml/qwen (v1)\n\n",
			"--- HEAD~1:Service/ml/qwen\n+++ /dev/null\n@@ -1,",
			"-kind: Service\n",
			"6 objects: 0 added, 0 changed, 3 removed, 3 unchanged\n",
		},
	},
	{
		name: "no change",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("docs", map[string]string{"README.md": "# models\n"})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models"}
		},
		stdout: "3 objects: 0 added, 0 changed, 0 removed, 3 unchanged\n",
	},
	{
		name: "working tree side",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.write(map[string]string{"models/qwen/model.yaml": diffModel("qwen", 3, 1)})
			return r, []string{diffCapsFlag, "HEAD", "--", "models"}
		},
		want: []string{
			"--- HEAD:Deployment/ml/qwen\n+++ working tree:Deployment/ml/qwen\n",
			"-  replicas: 1\n+  replicas: 3\n",
		},
	},
	{
		// The working tree is rendered from the repository, a ref from a
		// temporary directory: neither may leak into the output.
		name: "working tree equal to HEAD",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			return diffBaseRepo(t), []string{diffCapsFlag, "HEAD", "--", "models"}
		},
		stdout: "3 objects: 0 added, 0 changed, 0 removed, 3 unchanged\n",
	},
	{
		name: "path missing at the old ref: all added",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("add", map[string]string{"models/llama/model.yaml": diffModel("llama", 1, 1)})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models/llama"}
		},
		want: []string{"3 objects: 3 added, 0 changed, 0 removed, 0 unchanged\n"},
	},
	{
		name: "path missing at the new ref: all removed",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("remove", map[string]string{"models/qwen/model.yaml": ""})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models/qwen"}
		},
		want: []string{"3 objects: 0 added, 0 changed, 3 removed, 0 unchanged\n"},
	},
	{
		name: "relative paths from -C a subdirectory",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("scale", map[string]string{"models/qwen/model.yaml": diffModel("qwen", 2, 1), "docs/README.md": "x\n"})
			return r, []string{"-C", filepath.Join(r.dir, "docs"), "--capabilities", "../clusters/prod/capabilities.yaml", "HEAD~1", "HEAD", "--", "../models"}
		},
		stdout: replicasGolden,
	},
	{
		name: "the whole repository as PATH",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("scale", map[string]string{"models/qwen/model.yaml": diffModel("qwen", 2, 1)})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "."}
		},
		stdout: replicasGolden,
	},
	{
		// render keeps two objects of the user's with one identity; each is
		// compared with its namesake in the same position.
		name: "repeated identity",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\n  namespace: ml\ndata:\n  from: %s\n"
			r := diffBaseRepo(t)
			r.commit("two", map[string]string{"models/a.yaml": fmt.Sprintf(cm, "a"), "models/b.yaml": fmt.Sprintf(cm, "b")})
			r.commit("one", map[string]string{"models/b.yaml": ""})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models"}
		},
		want: []string{
			"- ConfigMap/ml/dup (v1)\n\n--- HEAD~1:ConfigMap/ml/dup\n+++ /dev/null\n",
			"-  from: b\n",
			"5 objects: 0 added, 0 changed, 1 removed, 4 unchanged\n",
		},
	},
	{
		name: "markdown",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("notes", map[string]string{"models/notes.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n  namespace: ml\ndata:\n  readme: |\n    ```sh kubectl apply```\n"})
			return r, []string{diffCapsFlag, "--format", "markdown", "HEAD~1", "HEAD", "--", "models"}
		},
		stdout: markdownGolden,
	},
	{
		name: "markdown: changed objects unfolded",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("scale", map[string]string{"models/qwen/model.yaml": diffModel("qwen", 2, 1)})
			return r, []string{diffCapsFlag, "--format=markdown", "HEAD~1", "HEAD", "--", "models"}
		},
		want: []string{
			"| changed | Deployment | `ml/qwen` | `apps/v1` |\n",
			"<details open><summary>changed Deployment/ml/qwen</summary>\n\n```diff\n--- HEAD~1:Deployment/ml/qwen\n",
			"-  replicas: 1\n+  replicas: 2\n",
		},
	},
	{
		name: "markdown: unchanged",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("docs", map[string]string{"README.md": "# models\n"})
			return r, []string{diffCapsFlag, "--format", "markdown", "HEAD~1", "HEAD", "--", "models"}
		},
		stdout: "**airunway-render diff for `clusters/prod/capabilities.yaml`**: the rendered output is unchanged, `HEAD~1` → `HEAD` (3 objects: 0 added, 0 changed, 0 removed, 3 unchanged).\n",
	},
	{
		name: "--exit-code with differences",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("scale", map[string]string{"models/qwen/model.yaml": diffModel("qwen", 2, 1)})
			return r, []string{diffCapsFlag, "--exit-code", "HEAD~1", "HEAD", "--", "models"}
		},
		code:   2,
		stdout: replicasGolden,
	},
	{
		name: "--exit-code without differences",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			return diffBaseRepo(t), []string{diffCapsFlag, "--exit-code", "HEAD", "HEAD", "--", "models"}
		},
		stdout: "3 objects: 0 added, 0 changed, 0 removed, 3 unchanged\n",
	},
	{
		name: "bad OLD_REF",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			return diffBaseRepo(t), []string{diffCapsFlag, "nope", "--", "models"}
		},
		code:   1,
		stdout: "",
		stderr: []string{`airunway-render diff: OLD_REF "nope" must name a commit or tree of the repository`},
	},
	{
		name: "bad NEW_REF",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			return diffBaseRepo(t), []string{"HEAD", "HEAD~5", "--", "models"}
		},
		code:   1,
		stderr: []string{`NEW_REF "HEAD~5" must name a commit or tree`},
	},
	{
		name: "usage: unknown flag",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			return diffBaseRepo(t), []string{"--output=x", "HEAD", "--", "models"}
		},
		code:   1,
		stderr: []string{"airunway-render diff: unknown flag: --output"},
	},
	{
		name: "usage: three refs",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			return diffBaseRepo(t), []string{"HEAD", "HEAD", "HEAD", "--", "models"}
		},
		code:   1,
		stderr: []string{`at most two refs (OLD_REF NEW_REF) must come before "--", got 3`},
	},
	{
		name: "path missing at both sides",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			return diffBaseRepo(t), []string{diffCapsFlag, "HEAD", "--", "models/nope"}
		},
		code:   1,
		stderr: []string{`airunway-render diff: PATH "models/nope" must exist at OLD_REF "HEAD" or at NEW_REF (the working tree); it exists at neither`},
	},
	{
		name: "path outside the repository",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			return diffBaseRepo(t), []string{"HEAD", "--", "../elsewhere"}
		},
		code:   1,
		stderr: []string{`PATH "../elsewhere" must be inside the repository`},
	},
	{
		name: "capability file missing at the old ref",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("dev", map[string]string{"clusters/dev/capabilities.yaml": diffCaps("l4")})
			return r, []string{"--capabilities", "clusters/dev/capabilities.yaml", "HEAD~1", "HEAD", "--", "models"}
		},
		code:   1,
		stderr: []string{`airunway-render diff: --capabilities "clusters/dev/capabilities.yaml" must exist at both sides; it is missing at OLD_REF "HEAD~1"`},
	},
	{
		name: "render error at the new side",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			r.commit("too many", map[string]string{"models/qwen/model.yaml": diffModel("qwen", 99, 1)})
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models"}
		},
		code:   1,
		stdout: "",
		stderr: []string{
			`NEW_REF "HEAD": [error] airunway.ai/v1alpha1/ModelDeployment/ml/qwen spec.scaling.replicas: must be less than or equal to 32, got 99 (file models/qwen/model.yaml, line 14)` + "\n",
			`NEW_REF "HEAD": airunway-render: 1 error(s), 0 warning(s); nothing was rendered` + "\n",
		},
	},
	{
		name: "render error at the old side",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := newDiffTestRepo(t)
			r.commit("broken", map[string]string{"clusters/prod/capabilities.yaml": strings.Replace(diffCaps("a100"), "name: vllm", "name: tgi", 1), "models/qwen/model.yaml": diffModel("qwen", 1, 1)})
			r.commit("fixed", map[string]string{"clusters/prod/capabilities.yaml": diffCaps("a100")})
			return r, []string{diffCapsFlag, "HEAD~1", "--", "models"}
		},
		code:   1,
		stderr: []string{`OLD_REF "HEAD~1": [error] airunway.ai/v1alpha1/ClusterCapabilities/test spec.providers[0].name: "tgi" is not a known provider`, "(file clusters/prod/capabilities.yaml, line 9)"},
	},
	{
		// As in the working tree, a link to a file of the repository
		// renders what it points to, even outside the PATHs.
		name: "symlink to a file elsewhere in the repository followed at a ref",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			r := diffBaseRepo(t)
			require.NoError(t, os.Symlink("../../models/qwen/model.yaml", filepath.Join(r.dir, "clusters", "prod", "qwen.yaml")))
			r.commit("link", nil)
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "clusters/prod"}
		},
		want: []string{"3 objects: 3 added, 0 changed, 0 removed, 0 unchanged\n"},
	},
	{
		// A link committed to the repository must not make a PR comment
		// show a file of the machine the diff runs on.
		name: "symlink out of the paths is an error at a ref",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			outside := filepath.Join(t.TempDir(), "secret.yaml")
			writeFile(t, outside, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: secret\n  namespace: ml\n")
			r := diffBaseRepo(t)
			require.NoError(t, os.Symlink(outside, filepath.Join(r.dir, "models", "secret.yaml")))
			r.commit("link", nil)
			return r, []string{diffCapsFlag, "HEAD~1", "HEAD", "--", "models"}
		},
		code:   1,
		stderr: []string{`airunway-render diff: cannot read NEW_REF "HEAD": symbolic link "models/secret.yaml" must point to a file or directory of the repository, not to "/`},
	},
	{
		name:   "usage: no --",
		setup:  func(t *testing.T) (*diffTestRepo, []string) { return diffBaseRepo(t), []string{"HEAD", "models"} },
		code:   1,
		stderr: []string{`airunway-render diff: PATHs must follow "--"`, "Usage:"},
	},
	{
		name: "usage: bad --format",
		setup: func(t *testing.T) (*diffTestRepo, []string) {
			return diffBaseRepo(t), []string{"--format", "html", "HEAD", "--", "models"}
		},
		code:   1,
		stderr: []string{`--format must be "text" or "markdown", got "html"`},
	},
}

func TestDiff(t *testing.T) {
	for _, tc := range diffCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, args := tc.setup(t)
			args = append([]string{"diff", "-C", r.dir}, args...)
			status := r.git("status", "--porcelain", "--ignored")
			// Twice: the second run must give the same bytes.
			var first [2]string
			for i := 0; i < 2; i++ {
				stdout, stderr, code := run(t, "", args...)
				require.Equal(t, tc.code, code, "stderr:\n%s\nstdout:\n%s", stderr, stdout)
				if tc.stdout != "" || tc.code == 1 {
					require.Equal(t, tc.stdout, stdout, "stderr:\n%s", stderr)
				}
				for _, w := range tc.want {
					require.Contains(t, stdout, w, "stderr:\n%s", stderr)
				}
				for _, n := range tc.not {
					require.NotContains(t, stdout, n)
				}
				for _, w := range tc.stderr {
					require.Contains(t, stderr, w)
				}
				if i == 0 {
					first = [2]string{stdout, stderr}
				} else {
					require.Equal(t, first, [2]string{stdout, stderr}, "second run differs")
				}
			}
			require.Equal(t, status, r.git("status", "--porcelain", "--ignored"), "the repository is left as it was")
		})
	}
}

// TestDiffIgnoresTheRevisionsAttributes holds diff to the objects as
// committed: a pull request's .gitattributes must neither hide a model
// (export-ignore), rewrite a file (export-subst) nor make diff run a
// program (a filter driver, as git-lfs is one).
func TestDiffIgnoresTheRevisionsAttributes(t *testing.T) {
	r := diffBaseRepo(t)
	marker := filepath.Join(t.TempDir(), "filter-ran")
	// The clone's own configuration names the driver, as a machine with
	// git-lfs installed does; the pull request only names the attribute.
	r.git("config", "filter.evil.smudge", "sh -c 'touch "+marker+"; cat'")
	r.git("config", "filter.evil.clean", "cat")
	evil := strings.Replace(diffModel("evil", 1, 1), "kind: ModelDeployment\n", "kind: ModelDeployment\n# $Format:%H$\n", 1)
	r.commit("hide a model", map[string]string{
		".gitattributes":         "models/evil/model.yaml export-ignore export-subst\n*.yaml filter=evil\n",
		"models/evil/model.yaml": evil,
		"models/qwen/model.yaml": diffModel("qwen", 2, 1),
	})
	// The control: git archive, which diff once used, runs the driver and
	// leaves the model out.
	listing := r.git("archive", "--format=tar", "HEAD", "--", "models")
	require.NotContains(t, listing, "models/evil/model.yaml")
	require.NoError(t, os.Remove(marker), "git archive runs the filter: the test's driver works")

	stdout, stderr, code := run(t, "", "diff", "-C", r.dir, diffCapsFlag, "HEAD~1", "HEAD", "--", "models")
	require.Equal(t, 0, code, "stderr:\n%s\nstdout:\n%s", stderr, stdout)
	require.NoFileExists(t, marker, "diff must not run the repository's filter driver")
	require.Contains(t, stdout, "+ ModelDeployment/ml/evil (airunway.ai/v1alpha1)\n")
	require.Contains(t, stdout, "~ Deployment/ml/qwen (apps/v1)\n")
	require.Contains(t, stdout, "6 objects: 3 added, 2 changed, 0 removed, 1 unchanged\n")
	require.Contains(t, stdout, "+# $Format:%H$\n", "export-subst must not rewrite the file")
}
