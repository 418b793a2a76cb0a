package argocdcmp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// This file emulates the three streaming RPCs of argocd-cmp-server
// (cmpserver/plugin/plugin.go): GenerateManifest, MatchRepository and
// GetParametersAnnouncement. Each receives a fresh copy of the repository in
// its own request directory, exactly as each real RPC receives and unpacks
// its own tarball, so nothing one command writes is seen by another RPC.

// cmpTimeoutBuffer mirrors cmpTimeoutBuffer in cmpserver/plugin/plugin.go:
// server-side work gets a deadline 100ms before the client's.
const cmpTimeoutBuffer = 100 * time.Millisecond

// withEarlierDeadline mirrors buffered_context.WithEarlierDeadline. Unlike
// Argo CD's helper it always returns a cancellable context: the real stream
// context is cancelled by gRPC when the RPC ends, and runCommand's cleanup
// depends on that.
func withEarlierDeadline(ctx context.Context, buffer time.Duration) (context.Context, context.CancelFunc) {
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, deadline.Add(-buffer))
	}
	return context.WithCancel(ctx)
}

// rpcRequest is what every cmp-server RPC receives: the metadata message
// (app-relative path and env entries) and the repository tarball.
type rpcRequest struct {
	archive    *repoArchive
	appRelPath string
	env        []string // the request's []string, before toEnvEntry
}

// receive mirrors the common prologue of the three RPCs: create
// <cmp workdir>/<uuid>, unpack the tarball there (cmp.ReceiveRepoStream).
// what is the RPC-specific wording Argo CD uses in its messages.
func receive(p *Plugin, opts *Options, req rpcRequest, what, receiveWhat string) (string, func(), error) {
	workDir, err := createRequestDir(cmpWorkDir(opts.WorkDir))
	if err != nil {
		return "", nil, fmt.Errorf("error creating workdir for %s: %w", what, err)
	}
	cleanup := func() { removeRequestDir(workDir) }
	if err := unpackRepo(workDir, bytes.NewReader(req.archive.data), p.Spec.PreserveFileMode); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("%s error receiving stream: error decompressing tgz file: %w", receiveWhat, err)
	}
	return workDir, cleanup, nil
}

// receiveApp is receive plus the app-path bound check that generate and
// the parameters RPC both make before running anything.
func receiveApp(p *Plugin, opts *Options, req rpcRequest, what, receiveWhat string) (workDir, appPath string, cleanup func(), err error) {
	workDir, cleanup, err = receive(p, opts, req, what, receiveWhat)
	if err != nil {
		return "", "", nil, err
	}
	appPath = filepath.Clean(filepath.Join(workDir, req.appRelPath))
	if !strings.HasPrefix(appPath, workDir) {
		cleanup()
		return "", "", nil, errors.New("illegal appPath: out of workDir bound")
	}
	return workDir, appPath, cleanup, nil
}

// serverEnv mirrors `append(os.Environ(), environ(envEntries)...)`.
func serverEnv(opts *Options, request []string) []string {
	env := append([]string(nil), opts.BaseEnv...)
	return append(env, requestEnviron(request)...)
}

// generateResult is what the GenerateManifest RPC hands back, plus harness
// observations.
type generateResult struct {
	manifests []string
	stdout    string
	stderr    string
	env       []string
	workDir   string
	appDir    string
}

// cmpGenerateManifest reproduces generateManifestGeneric + generateManifest.
func cmpGenerateManifest(ctx context.Context, p *Plugin, opts *Options, tr *trace, req rpcRequest) (*generateResult, error) {
	ctx, cancel := withEarlierDeadline(ctx, cmpTimeoutBuffer)
	defer cancel()

	workDir, appPath, cleanup, err := receiveApp(p, opts, req, "manifest generation", "generate manifest")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	res := &generateResult{workDir: workDir, appDir: appPath}
	res.env = serverEnv(opts, req.env)

	wrap := func(err error) error { return fmt.Errorf("error generating manifests: %w", err) }
	if len(p.Spec.Init.Command) > 0 {
		if _, err := runCommand(ctx, opts, tr, "init", p.Spec.Init, appPath, res.env); err != nil {
			return res, wrap(err)
		}
	}
	out, err := runCommand(ctx, opts, tr, "generate", p.Spec.Generate, appPath, res.env)
	res.stdout = out
	for _, c := range tr.commands {
		if c.Phase == "generate" {
			res.stderr = c.Stderr
		}
	}
	if err != nil {
		return res, wrap(err)
	}
	manifests, err := splitYAMLToString([]byte(out))
	if err != nil {
		return res, wrap(err)
	}
	res.manifests = manifests
	return res, nil
}

// MatchResult is the answer of one MatchRepository RPC.
type MatchResult struct {
	// Stage says who asked: "GetAppSourceType" (auto-detection of the
	// source type) or "DetectConfigManagementPlugin" (choosing the plugin
	// for the request).
	Stage string
	// Env is the request env the repo-server sent.
	Env                []string
	IsSupported        bool
	IsDiscoveryEnabled bool
	Err                error
}

// cmpMatchRepository reproduces matchRepositoryGeneric + matchRepository.
// The three discovery methods are tried in order and only the first one
// configured is evaluated:
//
//  1. fileName: filepath.Glob(<app dir>/<fileName>);
//  2. find.glob: go-zglob Glob(<app dir>/<glob>) (see zglob.go);
//  3. find.command: run in the app directory (not the repository root the
//     docs mention) with the sidecar env + request env; it matches when it
//     exits 0 and prints anything (after removing one trailing newline).
//
// With none configured the answer is (false, false).
func cmpMatchRepository(ctx context.Context, p *Plugin, opts *Options, tr *trace, req rpcRequest) (bool, bool, error) {
	ctx, cancel := withEarlierDeadline(ctx, cmpTimeoutBuffer)
	defer cancel()

	workDir, cleanup, err := receive(p, opts, req, "repository matching", "match repository")
	if err != nil {
		return false, false, err
	}
	defer cleanup()

	supported, enabled, err := matchRepository(ctx, p, opts, tr, workDir, req.env, req.appRelPath)
	if err != nil {
		return supported, enabled, fmt.Errorf("match repository error: %w", err)
	}
	return supported, enabled, nil
}

func matchRepository(ctx context.Context, p *Plugin, opts *Options, tr *trace, workDir string, env []string, appRelPath string) (bool, bool, error) {
	// Argo CD uses securejoin.SecureJoin here, which resolves symlinks in
	// appRelPath inside workDir; for the in-bounds paths that reach this
	// point that is filepath.Join followed by symlink resolution.
	appPath := filepath.Join(workDir, appRelPath)
	if resolved, err := filepath.EvalSymlinks(appPath); err == nil && strings.HasPrefix(resolved, workDir) {
		appPath = resolved
	}
	d := p.Spec.Discover
	if d.FileName != "" {
		pattern := filepath.Join(appPath, d.FileName)
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return false, true, fmt.Errorf("error finding filename match for pattern %q: %w", pattern, err)
		}
		return len(matches) > 0, true, nil
	}
	if d.Find.Glob != "" {
		pattern := filepath.Join(appPath, d.Find.Glob)
		matches, err := zglobMatches(pattern, opts.getenv)
		if err != nil {
			return false, true, fmt.Errorf("error finding glob match for pattern %q: %w", pattern, err)
		}
		return len(matches) > 0, true, nil
	}
	if len(d.Find.Command.Command) > 0 {
		out, err := runCommand(ctx, opts, tr, "discover", d.Find.Command, appPath, serverEnv(opts, env))
		if err != nil {
			return false, true, fmt.Errorf("error running find command: %w", err)
		}
		return out != "", true, nil
	}
	return false, false, nil
}

// cmpGetParametersAnnouncement reproduces GetParametersAnnouncement +
// getParametersAnnouncement: the dynamic command (if any) runs in the app
// directory and must print a JSON array of announcements; the result is
// dynamic announcements first, then the static ones ("static should take
// precedence by being later").
func cmpGetParametersAnnouncement(ctx context.Context, p *Plugin, opts *Options, tr *trace, req rpcRequest) ([]*ParameterAnnouncement, error) {
	ctx, cancel := withEarlierDeadline(ctx, cmpTimeoutBuffer)
	defer cancel()

	_, appPath, cleanup, err := receiveApp(p, opts, req, "generating parameter announcements", "parameters announcement")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	announcements := p.Spec.Parameters.Static
	dyn := p.Spec.Parameters.Dynamic
	if len(dyn.Command) > 0 {
		out, err := runCommand(ctx, opts, tr, "parameters", dyn, appPath, serverEnv(opts, req.env))
		if err != nil {
			return nil, fmt.Errorf("get parameters announcement error: error executing dynamic parameter output command: %w", err)
		}
		var dynamic []*ParameterAnnouncement
		if err := json.Unmarshal([]byte(out), &dynamic); err != nil {
			return nil, fmt.Errorf("get parameters announcement error: error unmarshaling dynamic parameter output into ParametersAnnouncementResponse: %w", err)
		}
		announcements = append(dynamic, announcements...)
	}
	return announcements, nil
}

// getenv looks a name up in BaseEnv (the sidecar's environment), last
// definition winning as with os/exec.
func (o *Options) getenv(name string) string {
	val := ""
	for _, kv := range o.BaseEnv {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			val = v
		}
	}
	return val
}
