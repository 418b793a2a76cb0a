package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const fixtureModuleRoot = "testdata/modules"

// fixtureModules mirrors the shape of the real table on a tiny CRD.
var fixtureModules = []moduleSource{
	{Module: "example.com/gadgets", Repo: "example.com/gadgets-upstream", License: "Apache-2.0", File: "crds/standard/gadgets.yaml",
		Provider: "example", Group: "example.com", Kind: "Gadget", Channel: "standard", Versions: []string{"v1"}, Releases: []string{"v1.0.0"}},
	{Module: "example.com/gadgets", Repo: "example.com/gadgets-upstream", License: "Apache-2.0", File: "crds/experimental/gadgets.yaml",
		Provider: "example", Group: "example.com", Kind: "Gadget", Channel: "experimental", Versions: []string{"v1"}, Releases: []string{"v1.0.0"}},
}

// dirFetcher serves <root>/<module>@<version> as the module, so tests never
// run the go command.
func dirFetcher(root string) fetcher {
	return func(module, version string) (fs.FS, func() error, error) {
		dir := filepath.Join(root, filepath.FromSlash(module)+"@"+version)
		if _, err := os.Stat(dir); err != nil {
			return nil, nil, err
		}
		return os.DirFS(dir), func() error { return nil }, nil
	}
}

func useModules(t *testing.T, sources []moduleSource, fetch fetcher) {
	t.Helper()
	oldSources, oldFetch := moduleSources, fetchModule
	moduleSources, fetchModule = sources, fetch
	t.Cleanup(func() { moduleSources, fetchModule = oldSources, oldFetch })
}

func useFixtureModules(t *testing.T) { useModules(t, fixtureModules, dirFetcher(fixtureModuleRoot)) }

func TestChannelFromFilename(t *testing.T) {
	for _, tc := range []struct{ name, want, wantErr string }{
		{name: "httproute-standard-v1.5.1.yaml", want: "standard"},
		{name: "httproute-experimental-v1.5.1.yaml", want: "experimental"},
		{name: "referencegrant-standard-v1.6.1.yaml", want: "standard"},
		{name: "workspace-v0.10.0.yaml"},
		{name: "inferenceobjective-llm-d.ai-v1alpha2-router-v0.10.0.yaml"},
		{name: "standardization-v1.0.0.yaml"}, // a word containing a channel is not one
		{name: "x-standard-experimental-v1.0.0.yaml", wantErr: `file name "x-standard-experimental-v1.0.0.yaml" must not name more than one channel`},
	} {
		got, err := channelFromFilename(tc.name)
		if tc.wantErr != "" {
			require.EqualError(t, err, tc.wantErr, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
}

func TestOutPath(t *testing.T) {
	for _, tc := range []struct{ channel, want string }{
		{"", "gateway-api/gateway.networking.k8s.io_httproute_v1_v1.2.0.json"},
		{"standard", "gateway-api/gateway.networking.k8s.io_httproute_v1_v1.2.0.json"},
		{"experimental", "gateway-api-experimental/gateway.networking.k8s.io_httproute_v1_v1.2.0.json"},
	} {
		require.Equal(t, tc.want, outPath("gateway-api", tc.channel, "gateway.networking.k8s.io", "HTTPRoute", "v1", "v1.2.0"), tc.channel)
		require.True(t, isGenerated(tc.want), tc.want)
	}
}

// TestModuleTable checks the real table without downloading anything.
func TestModuleTable(t *testing.T) {
	seen := map[string]string{}
	for _, j := range moduleJobs(moduleSources) {
		require.NotEmpty(t, j.Group, j.source())
		require.NotEmpty(t, j.Kind, j.source())
		require.NotEmpty(t, j.Versions, j.source())
		if j.pinned() {
			require.Len(t, j.Commit, 40, j.source())
			require.Len(t, j.SHA256, 64, j.source())
			require.Len(t, j.Releases, 1, "%s: a pinned file is one release", j.source())
		}
		if j.Module == gatewayAPIModule {
			require.Contains(t, []string{"standard", "experimental"}, j.Channel, j.source())
			require.True(t, strings.HasPrefix(j.File, "config/crd/"+j.Channel+"/"), "%s: file must be in the %s channel directory", j.source(), j.Channel)
		} else {
			require.Empty(t, j.Channel, "%s: only Gateway API CRDs have channels", j.source())
		}
		for _, p := range j.outputs() {
			require.True(t, isGenerated(p), p)
			require.NotContains(t, seen, p, "%s and %s produce the same file", seen[p], j.source())
			seen[p] = j.source()
		}
	}
	// ../shared/crds provides these; listing them too would be a duplicate.
	for _, p := range []string{
		"gateway-api/gateway.networking.k8s.io_httproute_v1_v1.5.1.json",
		"gateway-api/gateway.networking.k8s.io_httproute_v1_v1.6.1.json",
		"gateway-api/gateway.networking.k8s.io_referencegrant_v1beta1_v1.6.1.json",
	} {
		require.NotContains(t, seen, p)
	}
	for _, p := range []string{
		"gateway-api/gateway.networking.k8s.io_httproute_v1_v1.0.0.json",
		"gateway-api/gateway.networking.k8s.io_httproute_v1_v1.7.0.json",
		"gateway-api-experimental/gateway.networking.k8s.io_httproute_v1_v1.0.0.json",
		"gateway-api-experimental/gateway.networking.k8s.io_httproute_v1_v1.6.1.json",
		"gateway-api/gateway.networking.k8s.io_referencegrant_v1beta1_v1.0.0.json",
		"gateway-api/gateway.networking.k8s.io_gateway_v1_v1.7.0.json",
		"argo-cd/argoproj.io_application_v1alpha1_v3.6.1.json",
		"flux/kustomize.toolkit.fluxcd.io_kustomization_v1_v1.10.1.json",
		"flux/source.toolkit.fluxcd.io_gitrepository_v1_v1.10.1.json",
		"keda/keda.sh_scaledobject_v1alpha1_v2.21.0.json",
		"dynamo/nvidia.com_dynamomodel_v1alpha1_main-2a6da14c.json",
		"airunway/airunway.ai_modeldeployment_v1alpha1_main-b0d3fb77.json",
		"airunway/airunway.ai_inferenceproviderconfig_v1alpha1_main-b0d3fb77.json",
		"kaito/kaito.sh_inferenceset_v1beta1_v0.11.0.json",
		"dynamo/nvidia.com_dynamographdeploymentrequest_v1beta1_main-2a6da14c.json",
	} {
		require.Contains(t, seen, p)
	}
	require.Len(t, seen, 30)
}

func TestDeriveModuleErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(fixtureModuleRoot, "example.com/gadgets@v1.0.0/crds/standard/gadgets.yaml"))
	require.NoError(t, err)
	job := moduleJobs(fixtureModules[:1])[0]
	for _, tc := range []struct {
		name    string
		edit    func(j *moduleJob, crd string) string
		wantErr string
	}{
		{name: "ok", edit: func(j *moduleJob, crd string) string { return crd }},
		{
			name:    "wrong group",
			edit:    func(j *moduleJob, crd string) string { j.Group = "other.example.com"; return crd },
			wantErr: `CRD group must be "other.example.com", not "example.com"`,
		},
		{
			name:    "wrong kind",
			edit:    func(j *moduleJob, crd string) string { j.Kind = "Widget"; return crd },
			wantErr: `CRD kind must be "Widget", not "Gadget"`,
		},
		{
			name:    "declared version missing",
			edit:    func(j *moduleJob, crd string) string { j.Versions = []string{"v1", "v2"}; return crd },
			wantErr: `CRD must have version "v2"`,
		},
		{
			name: "channel annotation disagrees",
			edit: func(j *moduleJob, crd string) string {
				return strings.Replace(crd, "channel: standard", "channel: experimental", 1)
			},
			wantErr: `annotation gateway.networking.k8s.io/channel is "experimental", but the source must be channel "standard"`,
		},
		{
			name:    "bundle version disagrees",
			edit:    func(j *moduleJob, crd string) string { j.Release = "v1.0.1"; return crd },
			wantErr: `annotation gateway.networking.k8s.io/bundle-version is "v1.0.0", but the source must be release "v1.0.1"`,
		},
		{
			name:    "file missing",
			edit:    func(j *moduleJob, crd string) string { j.File = "crds/nope.yaml"; return crd },
			wantErr: "crds/nope.yaml",
		},
		{
			name:    "undeclared group",
			edit:    func(j *moduleJob, crd string) string { j.Group = ""; return crd },
			wantErr: "a module source must declare its group, kind and versions",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := job
			j.Versions = append([]string(nil), job.Versions...)
			crd := tc.edit(&j, string(good))
			root := t.TempDir()
			dir := filepath.Join(root, filepath.FromSlash(j.Module)+"@"+j.Release, "crds", "standard")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "gadgets.yaml"), []byte(crd), 0o644))
			outs, err := deriveModule(j, dirFetcher(root))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, outs, 1)
			require.Equal(t, "example/example.com_gadget_v1_v1.0.0.json", outs[0].entry.OutPath)
		})
	}

	fetchErr := func(string, string) (fs.FS, func() error, error) { return nil, nil, errors.New("offline") }
	_, err = deriveModule(job, fetchErr)
	require.EqualError(t, err, "offline")
}

// TestModuleFS covers reading what `go mod download -json` reports: the
// extracted directory, or the zip when the go command would not extract it.
func TestModuleFS(t *testing.T) {
	const (
		path    = "example.com/m"
		version = "v1.0.0"
		// Computed independently of zipHash (Python's hashlib/base64) for
		// the two files below.
		sum = "h1:qHMXZrSJohF43lh90wmKgYyaPBhy5YeWRfxonnSt2M8="
	)
	zipPath := filepath.Join(t.TempDir(), "m.zip")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range map[string]string{"go.mod": "module example.com/m\n", "crds/a.yaml": "a: 1\n"} {
		w, err := zw.Create(path + "@" + version + "/" + name)
		require.NoError(t, err)
		_, err = w.Write([]byte(data))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(zipPath, buf.Bytes(), 0o644))
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "crds"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "crds", "a.yaml"), []byte("a: 1\n"), 0o644))

	for _, tc := range []struct {
		name    string
		m       modDownload
		wantErr string
	}{
		{name: "extracted", m: modDownload{Path: path, Version: version, Dir: dir, Zip: zipPath, Sum: sum}},
		{name: "zip only", m: modDownload{Path: path, Version: version, Zip: zipPath, Sum: sum, Error: "example.com/m@v1.0.0 requires go >= 1.99.0"}},
		{
			name:    "zip does not match its sum",
			m:       modDownload{Path: path, Version: version, Zip: zipPath, Sum: "h1:AAAA"},
			wantErr: `has hash "` + sum + `", must be "h1:AAAA"`,
		},
		{
			name:    "download failed",
			m:       modDownload{Path: path, Version: version, Error: "not found"},
			wantErr: "go mod download example.com/m@v1.0.0: not found",
		},
		{
			name:    "unverified zip",
			m:       modDownload{Path: path, Version: version, Zip: zipPath},
			wantErr: "printed neither Dir nor Zip and Sum",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, closeFS, err := moduleFS(tc.m)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			defer func() { require.NoError(t, closeFS()) }()
			data, err := fs.ReadFile(fsys, "crds/a.yaml")
			require.NoError(t, err)
			require.Equal(t, "a: 1\n", string(data))
		})
	}
}

// TestOffline covers -modules=false: module-derived files cannot be
// re-derived, so they are kept, and their README rows carried over, as the
// last online run wrote them; anything that makes that impossible fails.
func TestOffline(t *testing.T) {
	useFixtureModules(t)
	online := t.TempDir()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", online}, &stdout, &stderr), stderr.String())
	want := readTree(t, online)

	// Offline runs must not fetch.
	useModules(t, fixtureModules, func(module, version string) (fs.FS, func() error, error) {
		t.Fatalf("fetched %s@%s with -modules=false", module, version)
		return nil, nil, nil
	})
	stdout.Reset()
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", online, "-modules=false", "-check"}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "2 module-derived or pinned files not re-derived")
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", online, "-modules=false"}, &stdout, &stderr), stderr.String())
	require.Equal(t, want, readTree(t, online), "an offline run must leave module-derived files and README rows as they are")

	const modFile = "example-experimental/example.com_gadget_v1_v1.0.0.json"
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, dir string)
		wantErr string
	}{
		{
			name:    "module file deleted",
			damage:  func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, modFile))) },
			wantErr: `"` + modFile + `" is kept as it is, but`,
		},
		{
			name: "module file edited",
			damage: func(t *testing.T, dir string) {
				require.NoError(t, os.WriteFile(filepath.Join(dir, modFile), []byte("{}\n"), 0o644))
			},
			wantErr: `kept file "` + modFile + `" has 3 bytes`,
		},
		{
			name: "README row missing",
			damage: func(t *testing.T, dir string) {
				p := filepath.Join(dir, "README.md")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				var kept []string
				for _, line := range strings.Split(string(data), "\n") {
					if !strings.HasPrefix(line, "| `"+modFile) {
						kept = append(kept, line)
					}
				}
				require.NoError(t, os.WriteFile(p, []byte(strings.Join(kept, "\n")), 0o644))
			},
			wantErr: "has no row for it",
		},
		{
			name:    "README missing",
			damage:  func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "README.md"))) },
			wantErr: "the files of modules.go a run does not re-derive are kept, but",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for rel, data := range want {
				p := filepath.Join(dir, filepath.FromSlash(rel))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, data, 0o644))
			}
			tc.damage(t, dir)
			var stderr bytes.Buffer
			require.Equal(t, 2, run([]string{"-crds", fixtureCRDs, "-out", dir, "-modules=false", "-check"}, &bytes.Buffer{}, &stderr))
			require.Contains(t, stderr.String(), tc.wantErr)
			require.Contains(t, stderr.String(), "-modules")
		})
	}
}

func TestReadmeRowRoundTrip(t *testing.T) {
	for _, e := range []derivedSchema{
		{OutPath: "gateway-api-experimental/g_k_v1_v1.0.0.json", Source: "sigs.k8s.io/gateway-api@v1.0.0 config/crd/experimental/x.yaml",
			Group: "g", Kind: "K", Version: "v1", Release: "v1.0.0", Channel: "experimental", Served: true, Size: 42, SourceSHA: "abc"},
		{OutPath: "kaito/k_w_v1_v0.1.0.json", Source: "kaito/w-v0.1.0.yaml", Group: "k", Kind: "W", Version: "v1", Release: "v0.1.0",
			Storage: true, Deprecated: true, Size: 7, SourceSHA: "def"},
	} {
		got, err := parseReadmeRow(strings.TrimSuffix(readmeRow(e), "\n"))
		require.NoError(t, err)
		require.Equal(t, e, got)
	}
	_, err := parseReadmeRow("| `a` | b |")
	require.ErrorContains(t, err, "must have 12 columns")
}

// fixturePinned is a pinned Git file: read from -pinned DIR at
// <repository>/<path>, and only when its bytes have the declared sha256.
var fixturePinned = moduleSource{
	Module: "example.com/levers", Repo: "example.com/levers", License: "Apache-2.0", File: "crds/levers.yaml",
	Provider: "example", Group: "example.com", Kind: "Lever", Versions: []string{"v1alpha1"}, Releases: []string{"main-0123456789ab"},
	Commit: "0123456789abcdef0123456789abcdef01234567",
	SHA256: "3edf5279aa7c5c67ce9cafd8346c69ee73ac341170018ee57061e92d5f1eac76",
}

// TestPinned covers the pinned Git files: derived with -pinned, kept as
// they are without it (even online, since no proxy serves them), and
// refused when the file's bytes are not the pinned ones.
func TestPinned(t *testing.T) {
	useModules(t, append(slices.Clone(fixtureModules), fixturePinned), dirFetcher(fixtureModuleRoot))
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", out, "-pinned", "testdata/pinned"}, &stdout, &stderr), stderr.String())
	files := readTree(t, out)
	const lever = "example/example.com_lever_v1alpha1_main-0123456789ab.json"
	require.Contains(t, files, lever)
	require.Contains(t, string(files["README.md"]),
		"| `"+lever+"` | `example.com/levers@0123456789ab crds/levers.yaml` | `example.com` | Lever | v1alpha1 | main-0123456789ab |")
	require.Contains(t, string(files["README.md"]), "### Pinned Git files")

	// Without -pinned the derived file and its row stay as they are.
	stdout.Reset()
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", out, "-check"}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "1 module-derived or pinned files not re-derived")
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", out}, &stdout, &stderr), stderr.String())
	require.Equal(t, files, readTree(t, out))

	// Other bytes at the path are refused, naming both sums.
	edited := t.TempDir()
	p := filepath.Join(edited, "example.com/levers/crds/levers.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	data, err := os.ReadFile("testdata/pinned/example.com/levers/crds/levers.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, append(data, '\n'), 0o644))
	stderr.Reset()
	require.Equal(t, 2, run([]string{"-crds", fixtureCRDs, "-out", out, "-pinned", edited, "-check"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "example.com/levers@0123456789ab crds/levers.yaml: file has sha256 ")
	require.Contains(t, stderr.String(), "must be "+fixturePinned.SHA256+" (its bytes at commit "+fixturePinned.Commit+")")

	// A -pinned directory without the repository keeps its files as they
	// are (one run may re-derive one repository's); a -pinned path that is
	// no directory is an error.
	stdout.Reset()
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", out, "-pinned", t.TempDir(), "-check"}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "1 module-derived or pinned files not re-derived")
	stderr.Reset()
	require.Equal(t, 2, run([]string{"-crds", fixtureCRDs, "-out", out, "-pinned", filepath.Join(t.TempDir(), "absent"), "-check"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "-pinned: ")
}
