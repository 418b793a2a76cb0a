package e2e

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
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

// sandboxContainersConf makes podman run where crun cannot set rlimits or
// use hybrid cgroups (as in CI sandboxes); see research tooling.md §E.
const sandboxContainersConf = `[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
`

// privateEngineConf gives podman a per-boot directory and locks of the
// test's own. By default every podman on the machine shares /run/libpod
// (conmon's exit files) and one shared-memory lock segment, and the
// cleanup's `podman system reset` frees every lock in it: two make test
// runs at once failed with "getting exit code of container …: no such
// exit code (container in state running)".
const privateEngineConf = `tmp_dir = %q
lock_type = "file"
`

// The image names the examples use; `make image` builds them under these
// names, and so does this test, in a private image store.
const (
	imageRepo          = "ghcr.io/airunway-render/"
	imageTag           = ":v0.1.0"
	functionImage      = imageRepo + "airunway-render" + imageTag
	argocdPluginImage  = imageRepo + "argocd-plugin" + imageTag
	reporterImage      = imageRepo + "airunway-status-reporter" + imageTag
	kptExecMutator     = "  - exec: airunway-render\n"
	kptImageMutator    = "  - image: " + functionImage + "\n"
	dockerShimTemplate = "#!/bin/sh\n# kustomize runs container functions with `docker run`; podman takes the same flags.\nexec podman \"$@\"\n"
)

// images are the Dockerfile's prebuilt stages, built once per test run.
type images struct {
	// env makes buildah, podman, kpt and the docker shim use a private
	// image store and the sandbox's container settings.
	env []string
	// dockerShim is a directory with a `docker` that execs podman.
	dockerShim string
}

// buildImages builds the three images of `make image` with buildah into a
// store under a temp dir, so the test never touches the machine's images
// and needs no registry (the stages are FROM scratch).
func buildImages(t *testing.T) images {
	t.Helper()
	// `make test` installs the tools first; a bare `go test` does it here.
	mustRun(t, repoRoot, nil, filepath.Join(repoRoot, "hack", "install-image-tools.sh"))
	render, reporter := renderBin(t), reporterBin(t)
	requireStatic(t, render)
	requireStatic(t, reporter)

	tmp := t.TempDir()
	storage := filepath.Join(tmp, "storage.conf")
	require.NoError(t, os.WriteFile(storage, []byte(fmt.Sprintf(
		"[storage]\ndriver = \"vfs\"\ngraphroot = %q\nrunroot = %q\n", filepath.Join(tmp, "graph"), filepath.Join(tmp, "run"))), 0o644))
	env := []string{"CONTAINERS_STORAGE_CONF=" + storage}
	if os.Getenv("CONTAINERS_CONF") == "" { // else the caller's settings, as they are
		conf := "[engine]\n"
		if _, err := exec.LookPath("runc"); err == nil {
			conf = sandboxContainersConf
		}
		conf += fmt.Sprintf(privateEngineConf, filepath.Join(tmp, "libpod"))
		path := filepath.Join(tmp, "containers.conf")
		require.NoError(t, os.WriteFile(path, []byte(conf), 0o644))
		env = append(env, "CONTAINERS_CONF="+path)
	}
	t.Cleanup(func() {
		// vfs layers are plain directories, but podman may hold mounts.
		cmd := exec.Command("podman", "system", "reset", "--force")
		cmd.Env = append(os.Environ(), env...)
		_ = cmd.Run()
	})

	// A private context: bin/ may be rebuilt by someone else while buildah
	// reads it, and the binaries under test may live elsewhere.
	ctx := filepath.Join(tmp, "context")
	for _, f := range []string{"Dockerfile", ".dockerignore", "hack/image/passwd", "hack/image/group", "examples/argocd/plugin.yaml"} {
		copyFile(t, filepath.Join(repoRoot, f), filepath.Join(ctx, f), 0o644)
	}
	copyFile(t, render, filepath.Join(ctx, "bin", "airunway-render"), 0o755)
	copyFile(t, reporter, filepath.Join(ctx, "bin", "airunway-status-reporter"), 0o755)
	for stage, name := range map[string]string{
		"prebuilt": functionImage, "argocd-plugin-prebuilt": argocdPluginImage, "status-reporter-prebuilt": reporterImage,
	} {
		mustRun(t, ctx, env, "buildah", "bud", "-q", "--target", stage, "-t", name, ".")
	}

	shim := filepath.Join(tmp, "shim")
	require.NoError(t, os.MkdirAll(shim, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shim, "docker"), []byte(dockerShimTemplate), 0o755))
	return images{env: env, dockerShim: shim}
}

// withDocker puts the docker shim first on PATH.
func (im images) withDocker() []string {
	return append(append([]string(nil), im.env...), "PATH="+im.dockerShim+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestImages(t *testing.T) {
	im := buildImages(t)

	t.Run("function image", func(t *testing.T) {
		res := mustRun(t, repoRoot, im.env, "podman", "image", "inspect", "--format", "{{.Config.User}} {{json .Config.Entrypoint}}", functionImage)
		require.Equal(t, `65534:65534 ["/airunway-render"]`, strings.TrimSpace(res.stdout))
		require.Equal(t, []string{"airunway-render", "etc/group", "etc/passwd"}, imageFiles(t, im, functionImage))
		res = mustRun(t, repoRoot, im.env, "podman", "run", "--rm", functionImage, "version")
		require.True(t, strings.HasPrefix(res.stdout, "airunway-render "), "version output:\n%s", res.stdout)
	})

	t.Run("KRM function over stdin as nobody", func(t *testing.T) {
		// The flags kpt uses for container functions: no network, user nobody.
		res := runStdin(t, resourceList(t, filepath.Join(repoRoot, "examples", "kpt")), repoRoot, im.env, "podman", "run", "-i", "--rm",
			"--network", "none", "--user", "nobody", functionImage)
		require.Zero(t, res.exit, "stderr:\n%s", res.stderr)
		objs := parseObjects(t, res.stdout)
		requireKptObjects(t,
			requireObject(t, objs, "apps/v1", "Deployment", kptNS, kptMDName),
			requireObject(t, objs, "v1", "Service", kptNS, kptMDName))
	})

	t.Run("kpt fn eval --image with podman", func(t *testing.T) {
		kpt := kptBin(t)
		dir := kptPackage(t)
		res := mustRun(t, dir, append(im.env, "KPT_FN_RUNTIME=podman"), kpt, "fn", "eval", dir,
			"--image", functionImage, "--fn-config", filepath.Join(dir, "capabilities.yaml"), "-o", "stdout")
		objs := parseObjects(t, res.stdout)
		requireKptObjects(t,
			requireObject(t, objs, "apps/v1", "Deployment", kptNS, kptMDName),
			requireObject(t, objs, "v1", "Service", kptNS, kptMDName))
	})

	t.Run("Kptfile image step with podman", func(t *testing.T) {
		kpt := kptBin(t)
		pkg := kptPackage(t)
		editFile(t, filepath.Join(pkg, "Kptfile"), kptExecMutator, kptImageMutator)
		env := append(im.env, "KPT_FN_RUNTIME=podman")
		res := kptRender(t, kpt, pkg, env)
		require.Zero(t, res.exit, "kpt fn render failed\nstderr:\n%s", res.stderr)
		first := readTree(t, pkg)
		requireKptObjects(t, parseFile(t, first, kptDeploymentFile), parseFile(t, first, kptServiceFile))
		res = kptRender(t, kpt, pkg, env)
		require.Zero(t, res.exit, "second kpt fn render failed\nstderr:\n%s", res.stderr)
		requireSameTree(t, first, readTree(t, pkg))
	})

	t.Run("kustomize container function", func(t *testing.T) {
		root := examplesTree(t)
		dir := overlayDir(root, "dev")
		editFile(t, filepath.Join(dir, "kustomization.yaml"), kustomizeRenderExec, kustomizeRenderImage)
		res := run(t, t.TempDir(), im.withDocker(), kustomizeBin(t), "build", "--enable-alpha-plugins", dir)
		require.Zero(t, res.exit, "stderr:\n%s", res.stderr)
		requireDevObjects(t, parseObjects(t, res.stdout))
	})

	t.Run("kubectl kustomize container function", func(t *testing.T) {
		root := examplesTree(t)
		dir := overlayDir(root, "prod")
		editFile(t, filepath.Join(dir, "kustomization.yaml"), kustomizeRenderExec, kustomizeRenderImage)
		res := run(t, t.TempDir(), im.withDocker(), "kubectl", "kustomize", "--enable-alpha-plugins", dir)
		require.Zero(t, res.exit, "stderr:\n%s", res.stderr)
		requireProdObjects(t, parseObjects(t, res.stdout))
	})

	t.Run("status reporter image", func(t *testing.T) {
		res := mustRun(t, repoRoot, im.env, "podman", "image", "inspect", "--format", "{{.Config.User}} {{json .Config.Entrypoint}}", reporterImage)
		require.Equal(t, `65534:65534 ["/airunway-status-reporter"]`, strings.TrimSpace(res.stdout))
		res = mustRun(t, repoRoot, im.env, "podman", "run", "--rm", "--network", "none", reporterImage, "--version")
		require.True(t, strings.HasPrefix(res.stdout, "airunway-status-reporter "), "version output:\n%s", res.stdout)
		// deploy/base runs exactly this image.
		require.Contains(t, readFileString(t, filepath.Join(repoRoot, "deploy", "base", "kustomization.yaml")), "airunway-status-reporter")
	})

	t.Run("Argo CD plugin image", func(t *testing.T) {
		res := mustRun(t, repoRoot, im.env, "podman", "image", "inspect", "--format", "{{.Config.User}} {{json .Config.Env}}", argocdPluginImage)
		require.Equal(t, `999:999 ["PATH=/usr/local/bin"]`, strings.TrimSpace(res.stdout))
		require.Equal(t, []string{"etc/group", "etc/passwd", "home/argocd/cmp-server/config/plugin.yaml", "usr/local/bin/airunway-render"},
			imageFiles(t, im, argocdPluginImage))
		require.Equal(t, readFileString(t, filepath.Join(repoRoot, "examples", "argocd", "plugin.yaml")),
			imageFile(t, im, argocdPluginImage, "home/argocd/cmp-server/config/plugin.yaml"))
		runPluginInImage(t, im)
	})
}

// imageFiles lists the regular files of an image, from `podman export`.
func imageFiles(t *testing.T, im images, image string) []string {
	t.Helper()
	var files []string
	forEachImageFile(t, im, image, func(name string, _ []byte) { files = append(files, name) })
	sort.Strings(files)
	return files
}

func imageFile(t *testing.T, im images, image, path string) string {
	t.Helper()
	var content string
	found := false
	forEachImageFile(t, im, image, func(name string, data []byte) {
		if name == path {
			content, found = string(data), true
		}
	})
	require.True(t, found, "%s has no %s", image, path)
	return content
}

func forEachImageFile(t *testing.T, im images, image string, fn func(name string, data []byte)) {
	t.Helper()
	// A scratch image without an entrypoint still needs a command to create
	// a container from; it never runs.
	res := mustRun(t, repoRoot, im.env, "podman", "create", image, "/nonexistent")
	id := strings.TrimSpace(res.stdout)
	defer func() { _ = exec.Command("podman", "rm", id).Run() }()
	cmd := exec.Command("podman", "export", id)
	cmd.Env = append(os.Environ(), im.env...)
	out, err := cmd.Output()
	require.NoError(t, err)
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		require.NoError(t, err)
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		fn(strings.TrimPrefix(h.Name, "/"), data)
	}
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
