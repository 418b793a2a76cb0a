package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// moduleSource declares CRD files read from a Go module rather than from
// ../shared/crds: ../shared/crds holds only some Gateway API releases, and
// only their standard channel, while the product validates HTTPRoutes for
// every supported release and both channels. The Go module of a release ships
// the CRDs of both channels, and the module proxy plus checksum database make
// the bytes reproducible without copying them here.
type moduleSource struct {
	Module   string
	Repo     string // upstream repository, for the README
	License  string // SPDX identifier, for the README
	File     string // slash path inside the module
	Provider string // schemas/ subdirectory; a non-standard channel appends "-<channel>"
	Group    string
	Kind     string
	Channel  string
	Versions []string // spec.versions to derive; the rest are left out to keep schemas/ small
	Releases []string // module versions, which are also the upstream releases

	// A pinned Git file, for a repository whose Go module the proxy does not
	// serve: Module is the repository, Commit the full commit the file is
	// read at and SHA256 its bytes, checked before anything is derived.
	// Releases then holds the one release label schemas/ files it under.
	Commit string
	SHA256 string
}

const (
	gatewayAPIModule = "sigs.k8s.io/gateway-api"
	gatewayAPIGroup  = "gateway.networking.k8s.io"
)

// moduleSources lists the Gateway API CRDs ../shared/crds lacks. Standard
// v1.5.1 and v1.6.1 (HTTPRoute) and v1.6.1 (ReferenceGrant) come from
// ../shared/crds and must not be listed here. HTTPRoute keeps only v1, the
// version the renderer emits; ReferenceGrant keeps v1beta1, the only version
// the oldest supported release (v1.0.0) serves that later ones still do.
// Gateway is not rendered but watched by the status reporter, whose envtest
// tests install its CRD (schemacheck.CRD): only the newest release, and only
// v1, its storage version there, so the rebuilt CRD is valid.
var moduleSources = []moduleSource{
	gatewayAPI("config/crd/standard/gateway.networking.k8s.io_httproutes.yaml", "HTTPRoute", "standard", "v1",
		"v1.0.0", "v1.1.0", "v1.2.0", "v1.3.0", "v1.4.0", "v1.5.0", "v1.6.0", "v1.7.0"),
	gatewayAPI("config/crd/experimental/gateway.networking.k8s.io_httproutes.yaml", "HTTPRoute", "experimental", "v1",
		"v1.0.0", "v1.1.0", "v1.2.0", "v1.3.0", "v1.4.0", "v1.5.0", "v1.5.1", "v1.6.0", "v1.6.1", "v1.7.0"),
	gatewayAPI("config/crd/standard/gateway.networking.k8s.io_referencegrants.yaml", "ReferenceGrant", "standard", "v1beta1",
		"v1.0.0"),
	gatewayAPI("config/crd/standard/gateway.networking.k8s.io_gateways.yaml", "Gateway", "standard", "v1",
		"v1.7.0"),
	// Autoscaling: the ScaledObjects rendered for `spec.scaling.autoscaling`
	// when the capability file declares KEDA.
	{
		Module: "github.com/kedacore/keda/v2", Repo: "github.com/kedacore/keda", License: "Apache-2.0",
		File: "config/crd/bases/keda.sh_scaledobjects.yaml", Provider: "keda",
		Group: "keda.sh", Kind: "ScaledObject", Versions: []string{"v1alpha1"}, Releases: []string{"v2.21.0"},
	},
	// LoRA adapters on Dynamo: one DynamoModel per adapter. The operator's
	// Go module has no version the proxy serves, and ../shared/crds holds
	// only the graph and component CRDs, so the file is pinned to the commit
	// those two were taken at (same release label, same bytes upstream).
	{
		Module: "github.com/ai-dynamo/dynamo", Repo: "github.com/ai-dynamo/dynamo", License: "Apache-2.0",
		File: "deploy/operator/config/crd/bases/nvidia.com_dynamomodels.yaml", Provider: "dynamo",
		Group: "nvidia.com", Kind: "DynamoModel", Versions: []string{"v1alpha1"}, Releases: []string{"main-2a6da14c"},
		Commit: "2a6da14c83617f5412caba5777dbf0e2399e9c5f",
		SHA256: "a8eb52717826a2dfaeb56f0237affa3f2cd1cdd2d2a7202f2e325835d1c23b3b",
	},
	// Upstream AI Runway's main after v0.7.0 (docs/upstream-main.md): the
	// ModelDeployment's status.gateway.apiFormats and the provider config's
	// engines[].apiFormats (#317). No release carries them yet and the
	// controller's module has no version the proxy serves, so both files are
	// pinned to the commit the parity table was read at.
	airunwayMain("controller/config/crd/bases/airunway.ai_modeldeployments.yaml", "ModelDeployment",
		"498ec0e66ec5cffb586df59a487bdcfa99cc3c8cab0bf74c938be4e70486e91a"),
	airunwayMain("controller/config/crd/bases/airunway.ai_inferenceproviderconfigs.yaml", "InferenceProviderConfig",
		"3e3c626ad16ecbf348f0bb47b4a5e86fc1b7d533340731db2fed19ca772cd7f8"),
	// KAITO's InferenceSet at v0.11.0, the first release serving it at
	// v1beta1 (beta, on by default): the renderer writes one from that
	// release on, and ../shared/crds holds only v0.8.1 and v0.12.0. The
	// module's replace directives keep the proxy from serving it.
	{
		Module: "github.com/kaito-project/kaito", Repo: "github.com/kaito-project/kaito", License: "Apache-2.0",
		File: "config/crd/bases/kaito.sh_inferencesets.yaml", Provider: "kaito",
		Group: "kaito.sh", Kind: "InferenceSet", Versions: []string{"v1alpha1", "v1beta1"}, Releases: []string{"v0.11.0"},
		Commit: "7545aa214f72475081330dd4c4b5c0a30f494870",
		SHA256: "adb71e789d6d2114d95dcbe5f21e4ad5cc490c9e7db295d1ffe4d77df314e046",
	},
	// Dynamo's intent mode (docs/providers.md, DynamoGraphDeploymentRequest):
	// the request at the same commit as the graph's schemas, v1beta1 only,
	// the version rendered and stored.
	{
		Module: "github.com/ai-dynamo/dynamo", Repo: "github.com/ai-dynamo/dynamo", License: "Apache-2.0",
		File: "deploy/operator/config/crd/bases/nvidia.com_dynamographdeploymentrequests.yaml", Provider: "dynamo",
		Group: "nvidia.com", Kind: "DynamoGraphDeploymentRequest", Versions: []string{"v1beta1"}, Releases: []string{"main-2a6da14c"},
		Commit: "2a6da14c83617f5412caba5777dbf0e2399e9c5f",
		SHA256: "a4d453c2d9c6da764e0b6b7eb3462911e1ba55022c5f8baf0e211e33a4a8318d",
	},
	// Not provider kinds: the GitOps examples (examples/argocd, examples/flux)
	// are validated against the CRDs of the tools that read them.
	{
		Module: "github.com/argoproj/argo-cd/v3", Repo: "github.com/argoproj/argo-cd", License: "Apache-2.0",
		File: "manifests/crds/application-crd.yaml", Provider: "argo-cd",
		Group: "argoproj.io", Kind: "Application", Versions: []string{"v1alpha1"}, Releases: []string{"v3.6.1"},
	},
	{
		Module: "github.com/fluxcd/kustomize-controller", Repo: "github.com/fluxcd/kustomize-controller", License: "Apache-2.0",
		File: "config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml", Provider: "flux",
		Group: "kustomize.toolkit.fluxcd.io", Kind: "Kustomization", Versions: []string{"v1"}, Releases: []string{"v1.10.1"},
	},
	{
		Module: "github.com/fluxcd/source-controller", Repo: "github.com/fluxcd/source-controller", License: "Apache-2.0",
		File: "config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml", Provider: "flux",
		Group: "source.toolkit.fluxcd.io", Kind: "GitRepository", Versions: []string{"v1"}, Releases: []string{"v1.10.1"},
	},
}

// airunwayMain is a CRD of upstream AI Runway at the main commit
// docs/upstream-main.md was read at.
func airunwayMain(file, kind, sha256 string) moduleSource {
	return moduleSource{
		Module: "github.com/ai-runway/airunway", Repo: "github.com/ai-runway/airunway", License: "Apache-2.0",
		File: file, Provider: "airunway", Group: "airunway.ai", Kind: kind,
		Versions: []string{"v1alpha1"}, Releases: []string{"main-b0d3fb77"},
		Commit: "b0d3fb775439d2f276e714f6c5f5d8612e75caa0", SHA256: sha256,
	}
}

func gatewayAPI(file, kind, channel, version string, releases ...string) moduleSource {
	return moduleSource{
		Module:   gatewayAPIModule,
		Repo:     "github.com/kubernetes-sigs/gateway-api",
		License:  "Apache-2.0",
		File:     file,
		Provider: "gateway-api",
		Group:    gatewayAPIGroup,
		Kind:     kind,
		Channel:  channel,
		Versions: []string{version},
		Releases: releases,
	}
}

// moduleJob is one file of one module release.
type moduleJob struct {
	moduleSource
	Release string
}

func (j moduleJob) source() string {
	if j.pinned() {
		return j.Module + "@" + j.Commit[:12] + " " + j.File
	}
	return j.Module + "@" + j.Release + " " + j.File
}

// pinned tells a pinned Git file from a Go module source.
func (s moduleSource) pinned() bool { return s.Commit != "" }

// outputs are the files the job produces, known without downloading, so
// -modules=false can tell which files on disk it must keep.
func (j moduleJob) outputs() []string {
	var out []string
	for _, v := range j.Versions {
		out = append(out, outPath(j.Provider, j.Channel, j.Group, j.Kind, v, j.Release))
	}
	return out
}

func moduleJobs(sources []moduleSource) []moduleJob {
	var jobs []moduleJob
	for _, s := range sources {
		for _, r := range s.Releases {
			jobs = append(jobs, moduleJob{moduleSource: s, Release: r})
		}
	}
	return jobs
}

// fetcher returns the file tree of module@version and a function releasing it.
type fetcher func(module, version string) (fs.FS, func() error, error)

// fetchModule is replaced by tests that must not reach the network.
var fetchModule fetcher = goModDownload

func deriveModule(j moduleJob, fetch fetcher) ([]output, error) {
	if len(j.Versions) == 0 || j.Group == "" || j.Kind == "" {
		return nil, fmt.Errorf("a module source must declare its group, kind and versions")
	}
	fsys, closeFS, err := fetch(j.Module, j.Release)
	if err != nil {
		return nil, err
	}
	defer func() { _ = closeFS() }() // a module zip opened for reading: nothing to lose
	raw, err := fs.ReadFile(fsys, j.File)
	if err != nil {
		return nil, err
	}
	if j.pinned() {
		if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != j.SHA256 {
			return nil, fmt.Errorf("file has sha256 %x, must be %s (its bytes at commit %s)", sum, j.SHA256, j.Commit)
		}
	}
	return deriveCRDs(raw, origin{
		Provider: j.Provider,
		Source:   j.source(),
		Release:  j.Release,
		Channel:  j.Channel,
		Group:    j.Group,
		Kind:     j.Kind,
		Versions: j.Versions,
	})
}

// pinnedPresent reports whether the -pinned directory holds a repository's
// files: one run may re-derive the pinned files of one repository and keep
// the others' as they are.
func pinnedPresent(dir, repo string) bool {
	if dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(repo)))
	return err == nil
}

// pinnedFetcher serves a pinned Git file's repository from
// <dir>/<repository>, a checkout or any copy of the file at its path.
func pinnedFetcher(dir string) fetcher {
	return func(repo, _ string) (fs.FS, func() error, error) {
		root := filepath.Join(dir, filepath.FromSlash(repo))
		if _, err := os.Stat(root); err != nil {
			return nil, nil, fmt.Errorf("-pinned: %w", err)
		}
		return os.DirFS(root), func() error { return nil }, nil
	}
}

// modDownload is the part of `go mod download -json` output we use.
type modDownload struct {
	Path, Version, Error, Dir, Zip, Sum string
}

// goModDownload runs `go mod download -json module@version`.
func goModDownload(module, version string) (fs.FS, func() error, error) {
	// Outside any module, so this repository's go.mod and go.sum are never
	// touched; GOTOOLCHAIN=local so a module needing a newer Go does not
	// make the go command fetch a toolchain (moduleFS reads its zip instead).
	tmp, err := os.MkdirTemp("", "derive-schemas-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run() // non-zero also when only extraction failed; the JSON says
	var m modDownload
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		return nil, nil, fmt.Errorf("go mod download %s@%s: %v: %s", module, version, runErr, strings.TrimSpace(stderr.String()))
	}
	return moduleFS(m)
}

// moduleFS opens the files of a downloaded module: the extracted directory
// when the go command made one, else the verified zip.
func moduleFS(m modDownload) (fs.FS, func() error, error) {
	if m.Dir != "" {
		return os.DirFS(m.Dir), func() error { return nil }, nil
	}
	// The go command does not extract a module whose go.mod needs a newer Go
	// (gateway-api v1.7.0 needs go 1.27), but it has downloaded and verified
	// the zip; its files are the same, so we check the zip against Sum and
	// read it.
	if m.Zip == "" || m.Sum == "" {
		if m.Error != "" {
			return nil, nil, fmt.Errorf("go mod download %s@%s: %s", m.Path, m.Version, m.Error)
		}
		return nil, nil, fmt.Errorf("go mod download %s@%s printed neither Dir nor Zip and Sum", m.Path, m.Version)
	}
	zr, err := zip.OpenReader(m.Zip)
	if err != nil {
		return nil, nil, err
	}
	got, err := zipHash(&zr.Reader)
	if err == nil && got != m.Sum {
		err = fmt.Errorf("module zip %q has hash %q, must be %q", m.Zip, got, m.Sum)
	}
	var sub fs.FS
	if err == nil {
		sub, err = fs.Sub(zr, m.Path+"@"+m.Version)
	}
	if err != nil {
		zr.Close()
		return nil, nil, err
	}
	return sub, zr.Close, nil
}

// zipHash computes the go.sum "h1:" hash of a module zip: the sha256 of the
// sorted lines "<hex sha256 of file>  <name>\n", base64-encoded.
func zipHash(zr *zip.Reader) (string, error) {
	files := append([]*zip.File(nil), zr.File...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	h := sha256.New()
	for _, f := range files {
		if strings.Contains(f.Name, "\n") {
			return "", fmt.Errorf("zip file name %q must not contain a newline", f.Name)
		}
		r, err := f.Open()
		if err != nil {
			return "", err
		}
		fh := sha256.New()
		_, err = io.Copy(fh, r)
		r.Close()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%x  %s\n", fh.Sum(nil), f.Name)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// carryOver returns the README entries of the files already in outDir that
// jobs derive, for the sources a run does not read (-modules=false, no
// -pinned): they are kept as the last run that read them wrote them.
func carryOver(outDir string, jobs []moduleJob) ([]derivedSchema, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	readme, err := os.Open(filepath.Join(outDir, "README.md"))
	if err != nil {
		return nil, fmt.Errorf("the files of modules.go a run does not re-derive are kept, but %w; run with -modules and -pinned once", err)
	}
	defer readme.Close()
	rows := map[string]string{}
	sc := bufio.NewScanner(readme)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			if file, _, ok := strings.Cut(rest, "`"); ok {
				rows[file] = line
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}

	var entries []derivedSchema
	for _, j := range jobs {
		for _, p := range j.outputs() {
			row, ok := rows[p]
			if !ok {
				return nil, fmt.Errorf("%q is kept as it is, but %s has no row for it; derive it again (-modules, -pinned)", p, readme.Name())
			}
			e, err := parseReadmeRow(row)
			if err != nil {
				return nil, err
			}
			if e.Source != j.source() {
				return nil, fmt.Errorf("%s row for %q has source %q, must be %q; derive it again (-modules, -pinned)", readme.Name(), p, e.Source, j.source())
			}
			st, err := os.Stat(filepath.Join(outDir, filepath.FromSlash(p)))
			if err != nil {
				return nil, fmt.Errorf("%q is kept as it is, but %w; derive it again (-modules, -pinned)", p, err)
			}
			if st.Size() != int64(e.Size) {
				return nil, fmt.Errorf("kept file %q has %d bytes, but %s says %d; derive it again (-modules, -pinned)", p, st.Size(), readme.Name(), e.Size)
			}
			entries = append(entries, e)
		}
	}
	return entries, nil
}
