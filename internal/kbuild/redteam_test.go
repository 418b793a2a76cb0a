package kbuild_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// rtRun builds files (app/ is the kustomization) with a marker script
// app/airunway-render (and app/evil.sh) that touch the marker.
func rtRun(t *testing.T, files func(marker string) map[string]string) (string, error, bool) {
	t.Helper()
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "PWNED")
	fs := files(marker)
	if _, ok := fs["app/m.yaml"]; !ok {
		fs["app/m.yaml"] = model
	}
	script := "#!/bin/sh\ntouch " + marker + "\ncat\n"
	for _, s := range []string{"app/airunway-render", "app/evil.sh"} {
		if _, ok := fs[s]; !ok {
			fs[s] = script
		}
	}
	writeTree(t, dir, fs)
	for _, s := range []string{"app/airunway-render", "app/evil.sh"} {
		_ = os.Chmod(filepath.Join(dir, s), 0o755)
	}
	out, err := build(t, filepath.Join(dir, "app"), dir)
	_, statErr := os.Stat(marker)
	return out, err, statErr == nil
}

func TestRedteamKustomizationAsOwnTransformer(t *testing.T) {
	out, err, pwned := rtRun(t, func(marker string) map[string]string {
		return map[string]string{
			"app/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
metadata:
  name: evil
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ./airunway-render
        args: [--evil]
resources: [m.yaml]
transformers: [kustomization.yaml]
`,
		}
	})
	t.Logf("err=%v pwned=%v out=%.300s", err, pwned, out)
	require.False(t, pwned, "repository's own airunway-render script ran")
	_ = fmt.Sprint()
}

func TestRedteamSymlinkedKustomization(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "PWNED")
	writeTree(t, dir, map[string]string{
		"app/real.yaml": "resources: [m.yaml]\ntransformers:\n- |\n" + indent(configMapDeclaring("config.kubernetes.io/function", "exec:\n  path: ./airunway-render\n  args: [\"-c\", \"touch "+marker+"; cat\"]\n"), 2),
		"app/m.yaml":    model,
	})
	require.NoError(t, os.Symlink("real.yaml", filepath.Join(dir, "app/kustomization.yaml")))
	require.NoError(t, os.Symlink("/bin/sh", filepath.Join(dir, "app/airunway-render")))
	out, err := build(t, filepath.Join(dir, "app"), dir)
	_, statErr := os.Stat(marker)
	t.Logf("err=%v pwned=%v out=%.200s", err, statErr == nil, out)
	require.NoFileExists(t, marker, "/bin/sh ran through the repository's airunway-render symlink")
}

// rtCase builds files under a fresh root; marker is substituted for MARKER.
func rtCase(t *testing.T, files map[string]string, symlinks map[string]string) (string, error, bool) {
	t.Helper()
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "PWNED")
	fs := map[string]string{}
	for k, v := range files {
		fs[k] = strings.ReplaceAll(v, "MARKER", marker)
	}
	if _, ok := fs["app/m.yaml"]; !ok {
		fs["app/m.yaml"] = model
	}
	writeTree(t, dir, fs)
	for name, target := range symlinks {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.Symlink(strings.ReplaceAll(target, "ROOT", dir), filepath.Join(dir, name)))
	}
	out, err := build(t, filepath.Join(dir, "app"), dir)
	_, statErr := os.Stat(marker)
	return out, err, statErr == nil
}

func TestRedteamKustomizationAsTransformerCaseVariantMetadata(t *testing.T) {
	out, err, pwned := rtCase(t, map[string]string{
		"app/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
metadata:
  name: evil
  annotations:
    config.k8s.io/function: "exec: {path: airunway-render}"
Metadata:
  annotations:
    config.kubernetes.io/function: "exec: {path: /bin/sh, args: [-c, 'touch MARKER; cat']}"
resources: [m.yaml]
transformers: [kustomization.yaml]
`}, nil)
	t.Logf("err=%v pwned=%v out=%.200s", err, pwned, out)
	require.False(t, pwned, "/bin/sh ran")
}

const shDecl = `"exec: {path: /bin/sh, args: [-c, 'touch MARKER; cat']}"`

func cmDecl(decl string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: " + decl + "\n"
}

func TestRedteamTable(t *testing.T) {
	ours := `"exec: {path: ./airunway-render, args: [-c, 'touch MARKER; cat']}"`
	shLink := map[string]string{"app/airunway-render": "/bin/sh"}
	for name, tc := range map[string]struct {
		files    map[string]string
		symlinks map[string]string
	}{
		"component under transformers": {files: map[string]string{
			"app/kustomization.yaml":      "resources: [m.yaml]\ntransformers: [comp]\n",
			"app/comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [fn.yaml]\n",
			"app/comp/fn.yaml":            cmDecl(shDecl),
		}},
		"bases in a plain dir leading to transformers": {files: map[string]string{
			"app/kustomization.yaml":                "resources: [m.yaml]\ntransformers: [plugins]\n",
			"app/plugins/kustomization.yaml":        "bases: [nested]\n",
			"app/plugins/nested/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
			"app/plugins/nested/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			"app/plugins/nested/fn.yaml":            cmDecl(shDecl),
		}},
		"resources dir listing transformers": {files: map[string]string{
			"app/kustomization.yaml":     "resources: [m.yaml, sub]\n",
			"app/sub/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
			"app/sub/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			"app/sub/fn.yaml":            cmDecl(shDecl),
		}},
		"openapi path to a declaring file": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\nopenapi: {path: fn.yaml}\n",
			"app/fn.yaml":            cmDecl(shDecl),
		}},
		"helmCharts field": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\nhelmCharts:\n- name: x\n  repo: https://example.com/charts\n",
		}},
		"HelmChartInflationGenerator builtin config": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ngenerators:\n- |\n  apiVersion: builtin\n  kind: HelmChartInflationGenerator\n  metadata: {name: h}\n  name: x\n  repo: https://example.com/charts\n",
		}},
		"unknown builtin kind": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers:\n- |\n  apiVersion: builtin\n  kind: Evil\n  metadata: {name: h}\n",
		}},
		"apiVersion /builtin": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers:\n- |\n  apiVersion: /builtin\n  kind: Evil\n  metadata: {name: h}\n",
		}},
		"builtin apiVersion with a declaration": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
			"app/fn.yaml":            "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: " + shDecl + "\nlabels: {a: b}\nfieldSpecs: [{path: metadata/labels, create: true}]\n",
		}},
		"container image named airunway-render plus exec": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
			"app/fn.yaml":            cmDecl(`"{exec: {path: airunway-render}, container: {image: evil.example/x:1}}"`),
		}},
		"exec ours, container evil": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
			"app/fn.yaml":            cmDecl(`"{container: {image: evil.example/airunway-render:1, network: true, mounts: [{type: bind, src: /, dst: /host}]}}"`),
		}},
		"kustomization.yml as own transformer": {files: map[string]string{
			"app/kustomization.yml": "metadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: " + ours + "\nresources: [m.yaml]\ntransformers: [kustomization.yml]\n",
		}, symlinks: shLink},
		"Kustomization as own generator": {files: map[string]string{
			"app/Kustomization": "metadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: " + ours + "\nresources: [m.yaml]\ngenerators: [Kustomization]\n",
		}, symlinks: shLink},
		"own kustomization as validator": {files: map[string]string{
			"app/kustomization.yaml": "metadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: " + ours + "\nresources: [m.yaml]\nvalidators: [kustomization.yaml]\n",
		}, symlinks: shLink},
		"plain dir listing its own kustomization file": {files: map[string]string{
			"app/kustomization.yaml":         "resources: [m.yaml]\ntransformers: [plugins]\n",
			"app/plugins/kustomization.yaml": "metadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: \"exec: {path: ../airunway-render, args: [-c, 'touch MARKER; cat']}\"\nresources: [kustomization.yaml]\n",
		}, symlinks: shLink},
		"base kustomization file as transformer": {files: map[string]string{
			"app/kustomization.yaml":      "resources: [base]\ntransformers: [base/kustomization.yaml]\n",
			"app/base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata:\n  name: evil\n  annotations:\n    config.k8s.io/function: \"exec: {path: airunway-render}\"\nMetadata:\n  annotations:\n    config.kubernetes.io/function: " + shDecl + "\nresources: [m.yaml]\n",
			"app/base/m.yaml":             model,
		}},
		"symlinked kustomization.yml with inline ours": {files: map[string]string{
			"app/sub/real": "resources: [m.yaml]\ntransformers:\n- |\n  " + strings.ReplaceAll(cmDecl(`"exec: {path: ./airunway-render, args: [-c, 'touch MARKER; cat']}"`), "\n", "\n  ") + "\n",
		}, symlinks: map[string]string{"app/airunway-render": "/bin/sh", "app/kustomization.yml": "sub/real"}},
		"kind-less kustomization as own transformer, ours elsewhere": {files: map[string]string{
			"app/kustomization.yaml": "metadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: " + shDecl + "\nresources: [m.yaml]\ntransformers: [ours.yaml, kustomization.yaml]\n",
			"app/ours.yaml":          cmDecl(`"exec: {path: airunway-render}"`),
		}},
		"kind-less plain dir listing itself, ours elsewhere": {files: map[string]string{
			"app/kustomization.yaml":         "resources: [m.yaml]\ntransformers: [ours.yaml, plugins]\n",
			"app/ours.yaml":                  cmDecl(`"exec: {path: airunway-render}"`),
			"app/plugins/kustomization.yaml": "metadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: " + shDecl + "\nresources: [kustomization.yaml]\n",
		}},
		"kind-less Kustomization as generator, ours elsewhere": {files: map[string]string{
			"app/Kustomization": "metadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: " + shDecl + "\nresources: [m.yaml]\ntransformers: [ours.yaml]\ngenerators: [Kustomization]\n",
			"app/ours.yaml":     cmDecl(`"exec: {path: airunway-render}"`),
		}},
		"symlinked kustomization in a base": {files: map[string]string{
			"app/kustomization.yaml": "resources: [base]\n",
			"app/base/m.yaml":        model,
			"app/base/k.yaml":        "resources: [m.yaml]\ntransformers:\n- |\n  " + strings.ReplaceAll(cmDecl(`"exec: {path: ../airunway-render, args: [-c, 'touch MARKER; cat']}"`), "\n", "\n  ") + "\n",
		}, symlinks: map[string]string{"app/airunway-render": "/bin/sh", "app/base/kustomization.yaml": "k.yaml"}},
	} {
		t.Run(name, func(t *testing.T) {
			out, err, pwned := rtCase(t, tc.files, tc.symlinks)
			t.Logf("RESULT %s: pwned=%v err=%v outlen=%d", name, pwned, err, len(out))
			require.False(t, pwned, "program ran")
		})
	}
}

func TestRedteamNetworkAndOutside(t *testing.T) {
	var requests atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		t.Logf("REQUEST %s", r.URL)
		fmt.Fprint(w, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fetched}\n")
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "http://" + ln.Addr().String() + "/x.yaml"
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.txt": "TOPSECRET\n", "base/kustomization.yaml": "resources: [s.yaml]\n", "base/s.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata: {s: TOPSECRET}\n"})
	for name, tc := range map[string]struct {
		files    map[string]string
		symlinks map[string]string
	}{
		"openapi http":               {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\nopenapi: {path: " + url + "}\n"}},
		"replacements http":          {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\nreplacements:\n- path: " + url + "\n"}},
		"envs http":                  {files: map[string]string{"app/kustomization.yaml": "configMapGenerator:\n- name: c\n  envs: [" + url + "]\n"}},
		"crds http":                  {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\ncrds: [" + url + "]\n"}},
		"configurations http":        {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\nconfigurations: [" + url + "]\n"}},
		"transformer http":           {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [" + url + "]\n"}},
		"component http":             {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\ncomponents: [" + url + "]\n"}},
		"patchesJson6902 http":       {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\npatchesJson6902:\n- target: {kind: ModelDeployment, name: m}\n  path: " + url + "\n"}},
		"patchesStrategicMerge http": {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\npatchesStrategicMerge: [" + url + "]\n"}},
		"git:: transformer":          {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [\"git::" + "http://" + ln.Addr().String() + "/org/repo.git\"]\n"}},
		"git URL in generator":       {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\ngenerators: [\"http://" + ln.Addr().String() + "/org/repo.git//x?ref=main\"]\n"}},
		"file:// in component":       {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\ncomponents: [\"file://" + outside + "/base\"]\n"}},
		"file symlink outside":       {files: map[string]string{"app/kustomization.yaml": "configMapGenerator:\n- name: c\n  files: [s.txt]\n"}, symlinks: map[string]string{"app/s.txt": outside + "/secret.txt"}},
		"dir symlink outside":        {files: map[string]string{"app/kustomization.yaml": "resources: [b]\n"}, symlinks: map[string]string{"app/b": outside + "/base"}},
		"abs path in files":          {files: map[string]string{"app/kustomization.yaml": "configMapGenerator:\n- name: c\n  files: [" + outside + "/secret.txt]\n"}},
		"abs path in resources":      {files: map[string]string{"app/kustomization.yaml": "resources: [" + outside + "/base/s.yaml]\n"}},
		"dotdot in resources":        {files: map[string]string{"app/kustomization.yaml": "resources: [../../" + filepath.Base(outside) + "/base]\n"}},
		"openapi symlink outside":    {files: map[string]string{"app/kustomization.yaml": "resources: [m.yaml]\nopenapi: {path: o.json}\n"}, symlinks: map[string]string{"app/o.json": outside + "/secret.txt"}},
		"root symlink /proc":         {files: map[string]string{"app/kustomization.yaml": "configMapGenerator:\n- name: c\n  files: [p/self/environ]\n"}, symlinks: map[string]string{"app/p": "/proc"}},
	} {
		t.Run(name, func(t *testing.T) {
			out, err, pwned := rtCase(t, tc.files, tc.symlinks)
			t.Logf("RESULT %s: pwned=%v leaked=%v err=%.300v", name, pwned, strings.Contains(out, "TOPSECRET"), err)
			require.NotContains(t, out, "TOPSECRET")
		})
	}
	require.Zero(t, requests.Load(), "a request reached the server")
}

func TestRedteamTable2(t *testing.T) {
	for name, tc := range map[string]struct {
		files    map[string]string
		symlinks map[string]string
	}{
		"apiVersion builtin/v1": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers:\n- |\n  apiVersion: builtin/v1\n  kind: LabelTransformer\n  metadata: {name: h}\n",
		}},
		"duplicate key in declaration value": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
			"app/fn.yaml":            cmDecl(`"exec: {path: airunway-render, path: /bin/sh, args: [-c, 'touch MARKER; cat']}"`),
		}},
		"duplicate annotation keys": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
			"app/fn.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: \"exec: {path: airunway-render}\"\n    config.kubernetes.io/function: " + shDecl + "\n",
		}},
		"case-variant metadata in a plugin file": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
			"app/fn.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n    config.k8s.io/function: \"exec: {path: airunway-render}\"\nMetadata:\n  annotations:\n    config.kubernetes.io/function: " + shDecl + "\n",
		}},
		"merge key carrying a declaration": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
			"app/fn.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n    <<: {config.kubernetes.io/function: " + shDecl + "}\n",
		}},
		"inline List wrapping": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers:\n- |\n  apiVersion: v1\n  kind: ConfigMapList\n  items:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: evil\n      annotations:\n        config.kubernetes.io/function: " + shDecl + "\n",
		}},
		"Transformers and transformers keys": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [ok.yaml]\nTransformers: [fn.yaml]\n",
			"app/ok.yaml":            "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {a: b}\nfieldSpecs: [{path: metadata/labels, create: true}]\n",
			"app/fn.yaml":            cmDecl(shDecl),
		}},
		"yaml tag !!binary key": {files: map[string]string{
			"app/kustomization.yaml": "resources: [m.yaml]\ntransformers: [fn.yaml]\n",
			"app/fn.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n    ? !!binary Y29uZmlnLmt1YmVybmV0ZXMuaW8vZnVuY3Rpb24=\n    : " + shDecl + "\n",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			out, err, pwned := rtCase(t, tc.files, tc.symlinks)
			t.Logf("RESULT %s: pwned=%v err=%.250v outlen=%d", name, pwned, err, len(out))
			require.False(t, pwned, "program ran")
		})
	}
}
