package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// poisonedVariables are variables a careless renderer might read: tokens,
// cloud and cluster credentials, the Argo CD and kustomize environments,
// image overrides, and locale and time zone. Every other variable of the
// test's own environment is poisoned too.
var poisonedVariables = []string{
	"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HOME", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "AZURE_CLIENT_SECRET",
	"GOOGLE_APPLICATION_CREDENTIALS", "KUBECONFIG", "ARGOCD_APP_NAME", "ARGOCD_APP_NAMESPACE", "ARGOCD_ENV_CAPABILITIES",
	"KUSTOMIZE_PLUGIN_HOME", "AIRUNWAY_IMAGE", "VLLM_IMAGE", "DYNAMO_IMAGE", "KAITO_VERSION", "NAMESPACE", "POD_NAMESPACE",
	"USER", "HOSTNAME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
}

// TestPoisonedEnvironment: the binary renders every golden case and every
// example the same, byte for byte, with a bare environment and with one in
// which every variable holds a secret-looking marker, from different
// working directories, home directories and time zones; no marker ever
// reaches stdout or stderr. Secrets appear only as references by name.
func TestPoisonedEnvironment(t *testing.T) {
	bin := renderBin(t)
	bare := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TZ=UTC", "LANG=C"}
	poisoned := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TZ=Pacific/Kiritimati", "LANG=tr_TR.UTF-8", "LC_ALL=tr_TR.UTF-8"}
	seen := map[string]bool{"PATH": true, "HOME": true, "TZ": true, "LANG": true, "LC_ALL": true}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !seen[name] && !strings.HasPrefix(name, "GO") && name != "CGO_ENABLED" {
			poisoned = append(poisoned, name+"="+marker(name))
			seen[name] = true
		}
	}
	for _, name := range poisonedVariables {
		if !seen[name] {
			poisoned = append(poisoned, name+"="+marker(name))
		}
	}

	runs := invocations(t)
	require.Greater(t, len(runs), 80, "every golden case and example")
	secretRefs := 0
	for _, args := range runs {
		clean := runIn(t, bin, bare, args)
		dirty := runIn(t, bin, poisoned, args)
		require.Equal(t, clean, dirty, "render %s depends on the environment", strings.Join(args, " "))
		require.NotContains(t, dirty, "poison-", "render %s leaked a variable", strings.Join(args, " "))
		secretRefs += checkSecretsByName(t, clean, args)
	}
	require.Positive(t, secretRefs, "some case references a Secret, so the check is not vacuous")
	t.Logf("%d invocations, %d Secret references, %d variables poisoned", len(runs), secretRefs, len(poisoned))
}

func marker(name string) string { return "poison-" + strings.ToLower(name) + "-s3cr3t" }

// invocations lists `render` argument lists, relative to the repository:
// each golden case's inputs with its capability file, and each example.
func invocations(t *testing.T) [][]string {
	t.Helper()
	var runs [][]string
	cases, err := filepath.Glob(filepath.Join(repoRoot, "golden", "testdata", "*"))
	require.NoError(t, err)
	for _, dir := range cases {
		args := []string{"render"}
		if caps, _ := filepath.Glob(filepath.Join(dir, "functionConfig", "*.yaml")); len(caps) == 1 {
			args = append(args, "--capabilities", caps[0])
		}
		inputs, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, in := range inputs {
			if filepath.Base(in) != "expected.yaml" {
				args = append(args, in)
			}
		}
		runs = append(runs, args)
	}
	for _, caps := range []string{"dev", "prod"} {
		runs = append(runs, []string{"render", "--capabilities", filepath.Join(repoRoot, "examples/kustomize/clusters", caps, "capabilities.yaml"), filepath.Join(repoRoot, "examples/kustomize/base")})
	}
	examples, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "*", "modeldeployment.yaml"))
	for _, ex := range examples {
		runs = append(runs, []string{"render", filepath.Dir(ex)})
	}
	return runs
}

// runIn runs the binary from a fresh working directory and returns its
// exit code, stdout and stderr as one string.
func runIn(t *testing.T, bin string, env, args []string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", code, stdout.String(), stderr.String())
}

// checkSecretsByName requires that no rendered object is a Secret and that
// every secretKeyRef names a Secret and a key and nothing more; it returns
// how many references it saw.
func checkSecretsByName(t *testing.T, out string, args []string) int {
	t.Helper()
	stdout := out[strings.Index(out, "--- stdout\n")+len("--- stdout\n") : strings.Index(out, "--- stderr\n")]
	if strings.TrimSpace(stdout) == "" {
		return 0
	}
	objs, err := kio.FromBytes([]byte(stdout))
	require.NoError(t, err, strings.Join(args, " "))
	refs := 0
	for _, o := range objs {
		require.NotEqual(t, "Secret", o.GetKind(), "render %s emitted a Secret", strings.Join(args, " "))
		require.NoError(t, walkMaps(o, func(key string, v *yaml.RNode) {
			if key != "secretKeyRef" {
				return
			}
			refs++
			fields, err := v.Fields()
			require.NoError(t, err)
			sort.Strings(fields)
			require.Subset(t, []string{"key", "name", "optional"}, fields, "a secretKeyRef only names a Secret and a key")
			require.Contains(t, fields, "name")
		}))
	}
	return refs
}

// walkMaps calls fn for every key of every mapping below n.
func walkMaps(n *yaml.RNode, fn func(key string, v *yaml.RNode)) error {
	switch n.YNode().Kind {
	case yaml.MappingNode:
		return n.VisitFields(func(f *yaml.MapNode) error {
			fn(f.Key.YNode().Value, f.Value)
			return walkMaps(f.Value, fn)
		})
	case yaml.SequenceNode:
		return n.VisitElements(func(e *yaml.RNode) error { return walkMaps(e, fn) })
	}
	return nil
}
