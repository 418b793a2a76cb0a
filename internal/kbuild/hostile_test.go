package kbuild_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// shell is a function declaration that would run /bin/sh to create the
// marker file: the program a hostile kustomization wants run.
func shell(marker string) string {
	return fmt.Sprintf("exec:\n  path: /bin/sh\n  args: [\"-c\", \"touch %s; cat\"]\n", marker)
}

// indent indents every line of s by n spaces.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pad) + "\n"
}

// configMapDeclaring is a ConfigMap whose function annotation (spelled key)
// holds declaration.
func configMapDeclaring(key, declaration string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n    " + key + ": |\n" + indent(declaration, 6)
}

// TestHostileDeclarationsNeverRun: however a kustomization spells or
// builds a function declaration, a program other than the renderer never
// runs: the build is refused, naming the declaration, before kustomize
// loads anything.
func TestHostileDeclarationsNeverRun(t *testing.T) {
	for name, tc := range map[string]struct {
		files func(marker string) map[string]string
		says  string
	}{
		"inline transformer": {
			files: func(marker string) map[string]string {
				return map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\ntransformers:\n- |\n" + indent(configMapDeclaring("config.kubernetes.io/function", shell(marker)), 2)}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"inline generator": {
			files: func(marker string) map[string]string {
				return map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\ngenerators:\n- |\n" + indent(configMapDeclaring("config.kubernetes.io/function", shell(marker)), 2)}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"inline validator": {
			files: func(marker string) map[string]string {
				return map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\nvalidators:\n- |\n" + indent(configMapDeclaring("config.kubernetes.io/function", shell(marker)), 2)}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"annotation key with a YAML escape": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
					"app/fn.yaml":            configMapDeclaring(`"config.kubernetes.io/\x66unction"`, shell(marker)),
				}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"kustomization keys in another case": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "Resources: [m.yaml]\nTRANSFORMERS: [fn.yaml]\n",
					"app/fn.yaml":            configMapDeclaring("config.kubernetes.io/function", shell(marker)),
				}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"kustomization key with a YAML escape": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [m.yaml]\n\"transf\\x6frmers\": [fn.yaml]\n",
					"app/fn.yaml":            configMapDeclaring("config.kubernetes.io/function", shell(marker)),
				}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"the legacy annotation config.k8s.io/function": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
					"app/fn.yaml":            configMapDeclaring("config.k8s.io/function", shell(marker)),
				}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"the legacy field metadata.configFn": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
					"app/fn.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  configFn:\n" + indent(shell(marker), 4),
				}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"a declaration inside a List": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
					"app/fn.yaml":            "apiVersion: v1\nkind: List\nitems:\n- " + strings.TrimPrefix(indent(configMapDeclaring("config.kubernetes.io/function", shell(marker)), 2), "  "),
				}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"a declaration in flow style": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "{resources: [m.yaml], transformers: [fn.yaml]}\n",
					"app/fn.yaml":            fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: evil, annotations: {"config.kubernetes.io/function": "exec: {path: /bin/sh, args: [-c, touch %s; cat]}"}}}`+"\n", marker),
				}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"a declaration made by a kustomization's commonAnnotations": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml":         "resources: [m.yaml]\ntransformers: [plugins]\n",
					"app/plugins/kustomization.yaml": "resources: [cm.yaml]\ncommonAnnotations:\n  config.kubernetes.io/function: |\n" + indent(shell(marker), 4),
					"app/plugins/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: evil}\n",
				}
			},
			says: "uses `commonAnnotations`; a kustomization listed there may only list `resources`",
		},
		"a declaration made by a generator's options": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml":         "resources: [m.yaml]\ntransformers: [plugins]\n",
					"app/plugins/kustomization.yaml": "configMapGenerator:\n- name: evil\n  literals: [a=b]\n  options:\n    annotations:\n      config.kubernetes.io/function: |\n" + indent(shell(marker), 8),
				}
			},
			says: "uses `configMapGenerator`; a kustomization listed there may only list `resources`",
		},
		"a declaration made by a patch in a plugin directory": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml":         "resources: [m.yaml]\ntransformers: [plugins]\n",
					"app/plugins/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: evil\n      annotations:\n        config.kubernetes.io/function: \"exec: {path: /bin/sh}\"\n",
					"app/plugins/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: evil}\n",
				}
			},
			says: "uses `patches`",
		},
		"a declaration in a base's resources, listed as a plugin through a plain directory": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml":                "resources: [m.yaml]\ntransformers: [plugins]\n",
					"app/plugins/kustomization.yaml":        "resources: [nested]\n",
					"app/plugins/nested/kustomization.yaml": "resources: [fn.yaml]\n",
					"app/plugins/nested/fn.yaml":            configMapDeclaring("config.kubernetes.io/function", shell(marker)),
				}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"a container function": {
			files: func(string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
					"app/fn.yaml":            configMapDeclaring("config.kubernetes.io/function", "container:\n  image: example.com/evil:v1\n"),
				}
			},
			says: `ConfigMap "evil" declares the function image "example.com/evil:v1"`,
		},
		"the legacy container annotation": {
			files: func(string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
					"app/fn.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/container: example.com/evil:v1\n",
				}
			},
			says: `ConfigMap "evil" declares the function image "example.com/evil:v1"`,
		},
		"a legacy exec plugin (a kind kustomize looks up in its plugin directory)": {
			files: func(string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [plugin.yaml]\n",
					"app/plugin.yaml":        "apiVersion: someteam.example.com/v1\nkind: ChartInflator\nmetadata: {name: evil}\n",
				}
			},
			says: `ChartInflator "evil" is neither a builtin plugin's config`,
		},
		"a declaration in a file listed as a resource": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [m.yaml, fn.yaml]\n",
					"app/fn.yaml":            configMapDeclaring("config.kubernetes.io/function", shell(marker)),
				}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
		"a declaration beside ours": {
			files: func(marker string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
					"app/fn.yaml":            configMapDeclaring("config.kubernetes.io/function", "exec:\n  path: airunway-render\n") + "---\n" + configMapDeclaring("config.kubernetes.io/function", shell(marker)),
				}
			},
			says: `ConfigMap "evil" declares the function exec "/bin/sh"`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(t.TempDir(), "PWNED")
			files := tc.files(marker)
			files["app/m.yaml"] = model
			writeTree(t, dir, files)
			out, err := build(t, filepath.Join(dir, "app"), dir)
			require.Error(t, err)
			require.Empty(t, out)
			require.Contains(t, err.Error(), tc.says)
			require.NoFileExists(t, marker, "the hostile program ran")
		})
	}
}

// TestOursRunsThisBinary: a declaration that names airunway-render runs
// the given executable, never the file it names, and none of its
// arguments: a repository's own script named airunway-render does not run.
func TestOursRunsThisBinary(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "PWNED")
	writeTree(t, dir, map[string]string{
		"app/kustomization.yaml": "resources: [m.yaml]\ntransformers:\n- |\n" + indent(configMapDeclaring(`"config.kubernetes.io/\x66unction"`, "exec:\n  path: ./airunway-render\n  args: [--evil]\n"), 2),
		"app/m.yaml":             model,
		"app/airunway-render":    "#!/bin/sh\ntouch " + marker + "\n",
	})
	require.NoError(t, os.Chmod(filepath.Join(dir, "app/airunway-render"), 0o755))
	out, err := build(t, filepath.Join(dir, "app"), dir)
	require.NoError(t, err)
	require.Contains(t, out, "kind: DynamoGraphDeployment")
	require.NoFileExists(t, marker)
}

// TestRemoteSpellingsRefused: whatever spelling kustomize's parser takes
// for a Git repository is refused before anything is fetched, and a URL
// in any field that names a file fails without a connection.
func TestRemoteSpellingsRefused(t *testing.T) {
	for _, ref := range []string{
		"deploy@gitserver:org/repo",
		"GitHub.com/example/models",
		"github.com:example/models",
		"file:///tmp/models",
		"https://github.com/example/models//base?ref=v1.0.0",
	} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"app/kustomization.yaml": "resources:\n- " + ref + "\n"})
		_, err := build(t, filepath.Join(dir, "app"), dir)
		require.Error(t, err, ref)
		require.Contains(t, err.Error(), "`resources[0]` is \""+ref+"\", a remote reference")
	}
	// A local github.com directory does not make the reference local:
	// kustomize would clone it all the same.
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"app/kustomization.yaml":                           "resources: [github.com/example/models]\n",
		"app/github.com/example/models/kustomization.yaml": "resources: [m.yaml]\n",
		"app/github.com/example/models/m.yaml":             model,
	})
	_, err := build(t, filepath.Join(dir, "app"), dir)
	require.ErrorContains(t, err, "a remote reference")

	// A loopback server counts the requests that reach it.
	var requests atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		fmt.Fprint(w, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fetched}\n")
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "http://" + ln.Addr().String() + "/x.yaml"
	for name, kustomization := range map[string]string{
		"a resource":                  "resources: [" + url + "]\n",
		"a patch file":                "resources: [m.yaml]\npatches:\n- path: " + url + "\n",
		"a configMapGenerator's file": "configMapGenerator:\n- name: c\n  files: [" + url + "]\n",
	} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"app/kustomization.yaml": kustomization, "app/m.yaml": model})
		_, err := build(t, filepath.Join(dir, "app"), dir)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "fetches nothing", name)
	}
	require.Zero(t, requests.Load(), "a request reached the server")
}

// TestSpecialFilesRefused: a FIFO listed as a resource fails at once
// instead of blocking the build.
func TestSpecialFilesRefused(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"app/kustomization.yaml": "resources: [fifo.yaml]\n"})
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "app/fifo.yaml"), 0o644))
	_, err := build(t, filepath.Join(dir, "app"), dir)
	require.ErrorContains(t, err, "must be a regular file, but it is a named pipe (FIFO)")
}

// TestAliasBombRefused: a kilobyte of aliases is refused before kustomize
// expands it.
func TestAliasBombRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	for _, place := range []string{"resources: [bomb.yaml]\n", "resources: [m.yaml]\ntransformers: [bomb.yaml]\n"} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"app/kustomization.yaml": place, "app/bomb.yaml": b.String(), "app/m.yaml": model})
		_, err := build(t, filepath.Join(dir, "app"), dir)
		require.ErrorContains(t, err, "an alias bomb", place)
	}
}

// TestEveryReadCharged: kustomize reads a file once for each reference to
// it and holds every copy, so each read is charged: a 3 MB file listed 30
// times by a generator (which took 1.1 GB at 50 times) is refused at the
// read that crosses the budget.
func TestEveryReadCharged(t *testing.T) {
	dir := t.TempDir()
	kustomization := "configMapGenerator:\n- name: c\n  files:\n"
	for i := range 30 {
		kustomization += fmt.Sprintf("  - k%d=big.txt\n", i)
	}
	writeTree(t, dir, map[string]string{"app/kustomization.yaml": kustomization, "app/big.txt": strings.Repeat("x", 3<<20)})
	_, err := build(t, filepath.Join(dir, "app"), dir)
	require.ErrorContains(t, err, "big.txt: brings the input past 64 MiB")
}
