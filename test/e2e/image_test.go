package e2e

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// sandboxContainersConf makes podman run where crun cannot set rlimits or
// use hybrid cgroups (as in CI sandboxes); see research tooling.md §E.
const sandboxContainersConf = `[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
`

// TestImage builds the `prebuilt` stage of the Dockerfile with buildah and
// runs it with podman, directly and as a kpt container function. No
// registry is needed: the stage is FROM scratch.
func TestImage(t *testing.T) {
	// `make test` installs the tools first; a bare `go test` does it here.
	mustRun(t, repoRoot, nil, filepath.Join(repoRoot, "hack", "install-image-tools.sh"))
	bin := renderBin(t)
	requireStatic(t, bin)

	// A private context: the real bin/ may be rebuilt by someone else
	// while buildah reads it, and the binary under test may live elsewhere.
	ctx := t.TempDir()
	for _, f := range []string{"Dockerfile", ".dockerignore", "hack/image/passwd"} {
		copyFile(t, filepath.Join(repoRoot, f), filepath.Join(ctx, f), 0o644)
	}
	copyFile(t, bin, filepath.Join(ctx, "bin", "airunway-render"), 0o755)

	var env []string
	if os.Getenv("CONTAINERS_CONF") == "" {
		if _, err := exec.LookPath("runc"); err == nil {
			conf := filepath.Join(t.TempDir(), "containers.conf")
			require.NoError(t, os.WriteFile(conf, []byte(sandboxContainersConf), 0o644))
			env = append(env, "CONTAINERS_CONF="+conf)
		}
	}

	image := fmt.Sprintf("localhost/airunway-render:e2e-%d", time.Now().UnixNano())
	mustRun(t, ctx, env, "buildah", "bud", "--target", "prebuilt", "-t", image, ".")
	t.Cleanup(func() { _ = exec.Command("buildah", "rmi", "-f", image).Run() })

	res := mustRun(t, ctx, env, "podman", "image", "inspect", "--format", "{{.Config.User}} {{json .Config.Entrypoint}}", image)
	require.Equal(t, `65534:65534 ["/airunway-render"]`, strings.TrimSpace(res.stdout))

	res = mustRun(t, ctx, env, "podman", "run", "--rm", image, "version")
	require.True(t, strings.HasPrefix(res.stdout, "airunway-render "), "version output:\n%s", res.stdout)

	pkg := filepath.Join(repoRoot, "examples", "kpt")
	t.Run("KRM function over stdin as nobody", func(t *testing.T) {
		// The flags kpt uses for container functions: no network, user nobody.
		res := runStdin(t, resourceList(t, pkg), ctx, env, "podman", "run", "-i", "--rm",
			"--network", "none", "--user", "nobody", image)
		require.Zero(t, res.exit, "stderr:\n%s", res.stderr)
		objs := parseObjects(t, res.stdout)
		requireKptObjects(t,
			requireObject(t, objs, "apps/v1", "Deployment", kptNS, kptMDName),
			requireObject(t, objs, "v1", "Service", kptNS, kptMDName))
	})

	t.Run("kpt fn eval --image with podman", func(t *testing.T) {
		kpt := kptBin(t)
		dir := kptPackage(t)
		res := mustRun(t, dir, append(env, "KPT_FN_RUNTIME=podman"), kpt, "fn", "eval", dir,
			"--image", image, "--fn-config", filepath.Join(dir, "capabilities.yaml"), "-o", "stdout")
		objs := parseObjects(t, res.stdout)
		requireKptObjects(t,
			requireObject(t, objs, "apps/v1", "Deployment", kptNS, kptMDName),
			requireObject(t, objs, "v1", "Service", kptNS, kptMDName))
	})
}

// requireStatic fails for a dynamically linked binary: it cannot run on a
// scratch image ("exec /airunway-render: no such file or directory").
func requireStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "%s is dynamically linked; build it with CGO_ENABLED=0 (make build)", bin)
	}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, b, mode))
}

// resourceList wraps a package's modeldeployment.yaml as the item and its
// capabilities.yaml as the functionConfig.
func resourceList(t *testing.T, pkg string) string {
	t.Helper()
	md, err := yaml.ReadFile(filepath.Join(pkg, "modeldeployment.yaml"))
	require.NoError(t, err)
	caps, err := yaml.ReadFile(filepath.Join(pkg, "capabilities.yaml"))
	require.NoError(t, err)
	var sb strings.Builder
	w := kio.ByteWriter{
		Writer:             &sb,
		WrappingAPIVersion: kio.ResourceListAPIVersion,
		WrappingKind:       kio.ResourceListKind,
		FunctionConfig:     caps,
	}
	require.NoError(t, w.Write([]*yaml.RNode{md}))
	return sb.String()
}
