package argocdcmp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DefaultTimeout is the default of the controller's and API server's
// repo-server RPC timeout (--repo-server-timeout-seconds, 60s), which bounds
// a whole manifest request including every CMP RPC it makes.
const DefaultTimeout = 60 * time.Second

// DefaultKillGrace is the hard-coded pause in runCommand
// (cmpserver/plugin/plugin.go) between SIGTERM and SIGKILL to the command's
// process group.
const DefaultKillGrace = 5 * time.Second

// Options configures the emulated sidecar and request.
type Options struct {
	// WorkDir plays ARGOCD_CMP_WORKDIR: request directories are created as
	// <WorkDir>/_cmp_server/<uuid> (common.GetCMPWorkDir). Empty means
	// os.TempDir(), Argo CD's default.
	WorkDir string
	// BaseEnv is the sidecar's own environment, the os.Environ() that
	// argocd-cmp-server prepends to the request env. nil means os.Environ().
	BaseEnv []string
	// Command builds the process for a plugin command. The default is
	// exec.Command(argv[0], argv[1:]...) with Dir and Env set. A test may
	// wrap argv, e.g. in `podman run` with dir mounted at the same path;
	// Stdout, Stderr and SysProcAttr.Setpgid are set by the harness.
	Command func(dir string, env []string, argv []string) *exec.Cmd
	// Timeout is the whole request's deadline (the repo-server RPC timeout,
	// DefaultTimeout when zero; negative disables it). Each CMP RPC gets a
	// deadline 100ms earlier (cmpTimeoutBuffer).
	Timeout time.Duration
	// KillGrace is the pause between SIGTERM and SIGKILL to a command's
	// process group once its RPC is over (DefaultKillGrace when zero).
	KillGrace time.Duration
	// GitCredsEnv is appended to the request env when the plugin sets
	// provideGitCreds (git.Creds.Environ() in the repo-server).
	GitCredsEnv []string
	// TarExcludedGlobs plays the repo-server's --plugin-tar-exclude
	// (default none: the .git directory is sent to the plugin).
	TarExcludedGlobs []string
	// AllowOutOfBoundsSymlinks plays --allow-oob-symlinks.
	AllowOutOfBoundsSymlinks bool
	// PluginSockDir plays ARGOCD_PLUGINSOCKFILEPATH; it only appears in
	// error messages. Default DefaultPluginSockDir.
	PluginSockDir string
}

func (o Options) withDefaults() *Options {
	if o.BaseEnv == nil {
		o.BaseEnv = os.Environ()
	}
	if o.Command == nil {
		o.Command = func(dir string, env []string, argv []string) *exec.Cmd {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = dir
			cmd.Env = env
			return cmd
		}
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.KillGrace == 0 {
		o.KillGrace = DefaultKillGrace
	}
	if o.PluginSockDir == "" {
		o.PluginSockDir = DefaultPluginSockDir
	}
	return &o
}

func (o *Options) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.Timeout > 0 {
		return context.WithTimeout(ctx, o.Timeout)
	}
	return context.WithCancel(ctx)
}

// RPCError is how a gRPC client renders a failed call:
// "rpc error: code = <Code> desc = <message>". Real status errors do not
// unwrap; this one does, so tests can errors.As to *CmdError.
type RPCError struct {
	Code string
	Err  error
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("rpc error: code = %s desc = %s", e.Code, e.Err.Error())
}

func (e *RPCError) Unwrap() error { return e.Err }

// rpcOutcome turns a server-side result into what the client sees: a plain
// error returned by a handler becomes codes.Unknown; if the client's own
// context ended first the client reports that instead, whatever the
// server did.
func rpcOutcome(clientCtx context.Context, serverErr error) error {
	if err := clientCtx.Err(); err != nil {
		code := "Canceled"
		if errors.Is(err, context.DeadlineExceeded) {
			code = "DeadlineExceeded"
		}
		return &RPCError{Code: code, Err: err}
	}
	if serverErr != nil {
		return &RPCError{Code: "Unknown", Err: serverErr}
	}
	return nil
}

// NotPluginError is the harness's own error (not an Argo CD message) for an
// Application Argo CD would not route to a config management plugin at all.
type NotPluginError struct {
	// SourceType is what GetAppSourceType would decide instead: Directory,
	// Helm or Kustomize.
	SourceType string
}

func (e *NotPluginError) Error() string {
	return fmt.Sprintf("argocdcmp: Argo CD would not use a config management plugin for this Application; its source type would be %s", e.SourceType)
}

// SourceOverrideError is the harness's own error for an app directory that
// contains .argocd-source.yaml or .argocd-source-<app>.yaml. Argo CD merges
// those into spec.source (mergeSourceParameters), which can change the
// plugin env and parameters; the harness does not emulate that merge.
type SourceOverrideError struct{ File string }

func (e *SourceOverrideError) Error() string {
	return fmt.Sprintf("argocdcmp: %s would be merged into spec.source by Argo CD (mergeSourceParameters); not emulated", e.File)
}

// Selection is how the repo-server routes an Application to a plugin.
type Selection struct {
	// SourceType is "Plugin" when the Application goes to a CMP.
	SourceType string
	// Discovered is true when the plugin was accepted because its discover
	// rule matched (as opposed to being named by an Application whose
	// plugin has no discover section).
	Discovered bool
	// Matches lists every MatchRepository RPC made, in order.
	Matches []MatchResult
	// Commands and Warnings record discover commands run.
	Commands []CommandRun
	Warnings []Warning
}

// Result is the outcome of Run. It is returned, partially filled, even when
// Run fails.
type Result struct {
	// Manifests are the objects the repo-server ends up with: the
	// cmp-server's documents re-parsed as Unstructured, lists flattened.
	Manifests []*unstructured.Unstructured
	// CMPManifests are the documents the cmp-server returned (its
	// ManifestResponse.Manifests): JSON text, one per non-empty document.
	CMPManifests []string
	// Stdout is generate's stdout with one trailing newline removed, as
	// Argo CD splits it; Stderr is generate's stderr.
	Stdout string
	Stderr string
	// Env is exactly the environment generate ran with: BaseEnv followed by
	// RequestEnv.
	Env []string
	// RequestEnv is the env the repo-server sent with the request, in order.
	RequestEnv []string
	// Selection describes how the plugin was chosen.
	Selection
	// WorkDir is the request directory generate ran in (removed when Run
	// returns), AppDir the app path inside it (generate's cwd).
	WorkDir string
	AppDir  string
}

// prepareRepo reproduces the checks runRepoOperation makes before any
// manifest generation: out-of-bounds symlinks (skipping .git) and the app
// path.
func prepareRepo(repoDir string, app App, o *Options) (string, string, error) {
	root, err := filepath.Abs(repoDir)
	if err != nil {
		return "", "", err
	}
	if !o.AllowOutOfBoundsSymlinks {
		if err := checkOutOfBoundsSymlinks(root, ".git"); err != nil {
			return "", "", err
		}
	}
	appPath, err := resolveAppPath(root, app.Path)
	if err != nil {
		return "", "", err
	}
	return root, appPath, nil
}

// sendRepo mirrors the client half of cmp.SendRepoStream /
// GetCompressedRepoAndMetadata: archive rootPath, refuse an archive with no
// regular file, compute the app path relative to rootPath.
func sendRepo(rootPath, appPath string, env []string, o *Options) (rpcRequest, error) {
	archive, err := packRepo(rootPath, o.TarExcludedGlobs)
	if err != nil {
		return rpcRequest{}, fmt.Errorf("error compressing repo files: error creating app tgz file: %w", err)
	}
	if archive.filesWritten == 0 {
		return rpcRequest{}, fmt.Errorf("no files to send(%s)", rootPath)
	}
	rel, err := relativePath(appPath, rootPath)
	if err != nil {
		return rpcRequest{}, fmt.Errorf("error building app relative path: %w", err)
	}
	return rpcRequest{archive: archive, appRelPath: rel, env: env}, nil
}

// session is one harness call: options, trace and the MatchRepository log.
type session struct {
	p         *Plugin
	o         *Options
	tr        *trace
	root      string
	appPath   string
	matches   []MatchResult
	clientCtx context.Context
}

// matchRepositoryRPC mirrors matchRepositoryCMP
// (util/app/discovery/discovery.go) plus the server side.
func (s *session) matchRepositoryRPC(stage string, env []string) (bool, bool, error) {
	m := MatchResult{Stage: stage, Env: env}
	defer func() { s.matches = append(s.matches, m) }()
	req, err := sendRepo(s.root, s.appPath, env, s.o)
	if err != nil {
		m.Err = fmt.Errorf("error sending stream: %w", err)
		return false, false, m.Err
	}
	supported, enabled, serr := cmpMatchRepository(s.clientCtx, s.p, s.o, s.tr, req)
	if err := rpcOutcome(s.clientCtx, serr); err != nil {
		m.Err = fmt.Errorf("error receiving stream response: %w", err)
		return false, false, m.Err
	}
	m.IsSupported, m.IsDiscoveryEnabled = supported, enabled
	return supported, enabled, nil
}

// cmpSupports mirrors cmpSupports (util/app/discovery/discovery.go) for the
// single plugin the harness hosts: a socket other than "<SocketName>.sock"
// does not exist, so dialling it fails.
func (s *session) cmpSupports(stage, fileName string, named bool, env []string) (found, discovered bool, err error) {
	sockDir, err := filepath.Abs(s.o.PluginSockDir)
	if err != nil {
		return false, false, fmt.Errorf("error getting absolute path for plugin socket dir %q: %w", s.o.PluginSockDir, err)
	}
	address := filepath.Join(sockDir, fileName)
	if !strings.HasPrefix(address, filepath.Clean(sockDir)+string(os.PathSeparator)) {
		return false, false, fmt.Errorf("invalid socket file path, %q is outside plugin socket dir %q", fileName, s.o.PluginSockDir)
	}
	if fileName != s.p.SocketName()+".sock" {
		return false, false, fmt.Errorf("error dialing to cmp-server for plugin %s: error dial proxy: dial unix %s: connect: no such file or directory", fileName, address)
	}
	// CheckPluginConfiguration
	if !s.p.IsDiscoveryConfigured() {
		return named, false, nil
	}
	supported, enabled, err := s.matchRepositoryRPC(stage, env)
	if err != nil {
		return false, false, fmt.Errorf("error checking repository support for plugin %s: %w", fileName, err)
	}
	if !supported {
		if !enabled && named {
			return true, false, nil
		}
		return false, false, nil
	}
	return true, true, nil
}

// detect mirrors DetectConfigManagementPlugin
// (util/app/discovery/discovery.go). A named plugin is addressed by socket
// name and, if it has a discover section, must still match; an unnamed
// request considers only plugins with a discover section.
func (s *session) detect(stage, pluginName string, env []string) (bool, error) {
	if pluginName != "" {
		found, discovered, lastErr := s.cmpSupports(stage, fmt.Sprintf("%v.sock", pluginName), true, env)
		if !found {
			if lastErr != nil {
				return false, fmt.Errorf("could not find cmp-server plugin with name %q supporting the given repository: %w", pluginName, lastErr)
			}
			return false, fmt.Errorf("could not find cmp-server plugin with name %q supporting the given repository", pluginName)
		}
		return discovered, nil
	}
	found, discovered, lastErr := s.cmpSupports(stage, s.p.SocketName()+".sock", false, env)
	if !found {
		if lastErr != nil {
			return false, fmt.Errorf("could not find plugin supporting the given repository: %w", lastErr)
		}
		return false, errors.New("could not find plugin supporting the given repository")
	}
	return discovered, nil
}

// appSourceType mirrors GetAppSourceType (reposerver/repository/repository.go)
// and discovery.AppType/Discover (util/app/discovery/discovery.go) for an
// Application whose only possible explicit type is a plugin section:
// spec.source.plugin makes it a Plugin app; otherwise the plugin is asked
// (MatchRepository with the build env only) and, if it does not match or
// the match fails, the app directory is scanned for Helm/Kustomize files.
func (s *session) appSourceType(app App, env []string) (string, error) {
	overrides := []string{filepath.Join(s.appPath, ".argocd-source.yaml")}
	if app.Name != "" {
		overrides = append(overrides, filepath.Join(s.appPath, fmt.Sprintf(".argocd-source-%s.yaml", app.Name)))
	}
	for _, f := range overrides {
		if fi, err := os.Stat(f); err == nil && !fi.IsDir() {
			return "", &SourceOverrideError{File: f}
		}
	}
	if app.Plugin != nil {
		return "Plugin", nil
	}
	if _, err := s.detect("GetAppSourceType", "", env); err == nil {
		return "Plugin", nil
	}
	apps := map[string]string{}
	err := filepath.Walk(s.appPath, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		dir, err := filepath.Rel(s.appPath, filepath.Dir(p))
		if err != nil {
			return err
		}
		base := filepath.Base(p)
		if strings.HasSuffix(base, "Chart.yaml") {
			apps[dir] = "Helm"
		}
		if base == "kustomization.yaml" || base == "kustomization.yml" || base == "Kustomization" {
			apps[dir] = "Kustomize"
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("error getting app source type: %w", err)
	}
	if t, ok := apps["."]; ok {
		return t, nil
	}
	return "Directory", nil
}

// selectPlugin runs GetAppSourceType and DetectConfigManagementPlugin the
// way GenerateManifests / runConfigManagementPluginSidecars do and returns
// the request env (before git credentials).
func (s *session) selectPlugin(app App, sel *Selection) ([]string, error) {
	t, err := s.appSourceType(app, manifestBuildEnv(app))
	if err != nil {
		return nil, fmt.Errorf("error getting app source type: %w", err)
	}
	sel.SourceType = t
	if t != "Plugin" {
		return nil, &NotPluginError{SourceType: t}
	}
	env, err := PluginEnv(app)
	if err != nil {
		return nil, fmt.Errorf("CMP processing failed for application %q: %w", app.Name, err)
	}
	name := ""
	if app.Plugin != nil {
		name = app.Plugin.Name
	}
	discovered, err := s.detect("DetectConfigManagementPlugin", name, env)
	if err != nil {
		return env, fmt.Errorf("CMP processing failed for application %q: %w", app.Name, err)
	}
	sel.Discovered = discovered
	return env, nil
}

func newSession(ctx context.Context, p *Plugin, repoDir string, app App, o *Options) (*session, error) {
	root, appPath, err := prepareRepo(repoDir, app, o)
	if err != nil {
		return nil, err
	}
	return &session{p: p, o: o, tr: &trace{}, root: root, appPath: appPath, clientCtx: ctx}, nil
}

func (s *session) fill(sel *Selection) {
	sel.Matches = s.matches
	sel.Commands = s.tr.commands
	sel.Warnings = s.tr.warnings
}

// Discover reports whether and how the repo-server would route app to p,
// without generating manifests: source-type detection (when the
// Application has no plugin section) and plugin detection, each with its
// own MatchRepository RPC and env, as GenerateManifests does. The error is
// the one Run would return at that point.
func Discover(ctx context.Context, p *Plugin, repoDir string, app App, opts Options) (*Selection, error) {
	o := opts.withDefaults()
	ctx, cancel := o.requestContext(ctx)
	defer cancel()
	sel := &Selection{}
	s, err := newSession(ctx, p, repoDir, app, o)
	if err != nil {
		return sel, err
	}
	defer s.fill(sel)
	_, err = s.selectPlugin(app, sel)
	return sel, err
}

// Run emulates one manifest generation for app through plugin p, as
// GenerateManifests (reposerver/repository/repository.go) and the
// cmp-server's GenerateManifest RPC (cmpserver/plugin/plugin.go) perform it:
//
//  1. runRepoOperation checks: out-of-bounds symlinks, app path;
//  2. GetAppSourceType: a plugin section makes it a plugin app, otherwise
//     discovery decides (with the nine ARGOCD_APP_* variables only);
//  3. getPluginEnvs, then DetectConfigManagementPlugin with that env
//     (matching by name, running discovery when the plugin has it);
//  4. git credentials appended when provideGitCreds;
//  5. GenerateManifest RPC: fresh copy of the repository root, init then
//     generate in the app directory, output split into documents;
//  6. documents parsed into objects, lists flattened.
//
// Errors carry Argo CD's wording and wrapping (up to the repo-server's
// GenerateManifests; the controller would add "failed to generate manifest
// for source 1 of 1: rpc error: code = Unknown desc = ").
func Run(ctx context.Context, p *Plugin, repoDir string, app App, opts Options) (*Result, error) {
	o := opts.withDefaults()
	ctx, cancel := o.requestContext(ctx)
	defer cancel()
	res := &Result{}
	s, err := newSession(ctx, p, repoDir, app, o)
	if err != nil {
		return res, err
	}
	defer s.fill(&res.Selection)

	env, err := s.selectPlugin(app, &res.Selection)
	if err != nil {
		return res, err
	}
	failed := func(err error) error {
		return fmt.Errorf("CMP processing failed for application %q: %w", app.Name, err)
	}
	if p.Spec.ProvideGitCreds {
		env = append(env, o.GitCredsEnv...)
	}
	res.RequestEnv = env

	req, err := sendRepo(s.root, s.appPath, env, o)
	if err != nil {
		return res, failed(fmt.Errorf("error generating manifests in cmp: error sending file to cmp-server: %w", err))
	}
	gen, serr := cmpGenerateManifest(ctx, p, o, s.tr, req)
	if gen != nil {
		res.Stdout, res.Stderr, res.Env = gen.stdout, gen.stderr, gen.env
		res.WorkDir, res.AppDir = gen.workDir, gen.appDir
	}
	if err := rpcOutcome(ctx, serr); err != nil {
		return res, failed(fmt.Errorf("error generating manifests in cmp: %w", err))
	}
	res.CMPManifests = gen.manifests
	objs, err := parseCMPManifests(gen.manifests)
	if err != nil {
		return res, failed(err)
	}
	res.Manifests, err = flattenTargets(objs)
	return res, err
}

// Parameters emulates the parameter announcement path of GetAppDetails
// (reposerver/repository/repository.go, populatePluginAppDetails) and the
// cmp-server's GetParametersAnnouncement RPC. Source-type detection uses the
// five-variable env of newEnvRepoQuery; plugin detection and the dynamic
// command get ARGOCD_APP_NAME, ARGOCD_APP_SOURCE_REPO_URL,
// ARGOCD_APP_SOURCE_PATH and ARGOCD_APP_SOURCE_TARGET_REVISION plus the
// plugin env and parameter variables (no revision, namespace, project or
// KUBE_* variables). The result is dynamic announcements followed by static
// ones.
func Parameters(ctx context.Context, p *Plugin, repoDir string, app App, opts Options) ([]*ParameterAnnouncement, error) {
	o := opts.withDefaults()
	ctx, cancel := o.requestContext(ctx)
	defer cancel()
	s, err := newSession(ctx, p, repoDir, app, o)
	if err != nil {
		return nil, err
	}
	t, err := s.appSourceType(app, appDetailsBuildEnv(app))
	if err != nil {
		return nil, err
	}
	if t != "Plugin" {
		return nil, &NotPluginError{SourceType: t}
	}
	failed := func(err error) error { return fmt.Errorf("failed to populate plugin app details: %w", err) }
	env, err := pluginParamEnvs(parameterAnnouncementBaseEnv(app), app.Plugin)
	if err != nil {
		return nil, failed(fmt.Errorf("failed to get env vars for plugin: %w", err))
	}
	name := ""
	if app.Plugin != nil {
		name = app.Plugin.Name
	}
	if _, err := s.detect("DetectConfigManagementPlugin", name, env); err != nil {
		return nil, failed(fmt.Errorf("failed to detect CMP for app: %w", err))
	}
	req, err := sendRepo(s.root, s.appPath, env, o)
	if err != nil {
		return nil, failed(fmt.Errorf("error sending file to cmp-server: %w", err))
	}
	ann, serr := cmpGetParametersAnnouncement(ctx, p, o, s.tr, req)
	if err := rpcOutcome(ctx, serr); err != nil {
		return nil, failed(fmt.Errorf("failed to get parameter announcement: %w", err))
	}
	return ann, nil
}
