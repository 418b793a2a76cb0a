package argocdcmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// ZeroOutputWarning is the message runCommand (cmpserver/plugin/plugin.go)
// logs at warning level when a successful command wrote nothing at all to
// stdout. Argo CD carries on; an empty generate output means zero manifests
// (and, with auto-sync prune, deleting everything).
const ZeroOutputWarning = "Plugin command returned zero output"

// CmdError reproduces CmdError in cmpserver/plugin/plugin.go:
// "`<args>` failed <cause>[: <stderr>]", Args being the argv rendered by
// argoexec.GetCommandArgsToLog and Stderr being the trimmed stderr.
type CmdError struct {
	Args   string
	Stderr string
	Cause  error
}

func (e *CmdError) Error() string {
	s := fmt.Sprintf("`%v` failed %v", e.Args, e.Cause)
	if e.Stderr != "" {
		s = fmt.Sprintf("%s: %s", s, e.Stderr)
	}
	return s
}

// argsToLog mirrors GetCommandArgsToLog (util/exec/exec.go): empty
// arguments become "", arguments containing whitespace are strconv.Quote'd,
// everything is joined with spaces.
func argsToLog(argv []string) string {
	out := make([]string, 0, len(argv))
	for _, a := range argv {
		switch {
		case a == "":
			out = append(out, `""`)
		case strings.IndexFunc(a, unicode.IsSpace) >= 0:
			out = append(out, strconv.Quote(a))
		default:
			out = append(out, a)
		}
	}
	return strings.Join(out, " ")
}

// CommandRun records one plugin command execution.
type CommandRun struct {
	Phase    string // "discover", "init", "generate" or "parameters"
	Argv     []string
	Dir      string
	Env      []string
	Stdout   string // raw, untrimmed
	Stderr   string
	Err      error
	Duration time.Duration
}

// Warning is a warning Argo CD would log.
type Warning struct {
	Phase   string
	Argv    []string
	Message string
}

// trace collects what happened during one harness call.
type trace struct {
	commands []CommandRun
	warnings []Warning
}

func (t *trace) addCommand(c CommandRun) {
	if t != nil {
		t.commands = append(t.commands, c)
	}
}

func (t *trace) addWarning(w Warning) {
	if t != nil {
		t.warnings = append(t.warnings, w)
	}
}

// runCommand reproduces runCommand (cmpserver/plugin/plugin.go):
//
//   - argv is command + args; an empty command is the error "Command is empty";
//   - the process gets cmd.Dir = dir and cmd.Env = env (so Go's os/exec adds
//     no PWD of its own) and runs in a new process group (Setpgid);
//   - Argo CD uses exec.CommandContext, whose cancellation SIGKILLs the
//     process itself, and additionally starts a goroutine that, once ctx is
//     done, sends SIGTERM to the whole process group, sleeps a hard-coded 5
//     seconds (opts.KillGrace here) and sends SIGKILL to the group. ctx is
//     the per-RPC context, which is cancelled when the RPC returns, so the
//     group signals are sent after every command, also successful ones:
//     background processes a plugin leaves behind are terminated at the end
//     of the request. The harness does the same;
//   - on failure the error is a *CmdError and stdout is still returned;
//   - on success an entirely empty stdout adds ZeroOutputWarning;
//   - the returned stdout has one trailing "\n" removed.
//
// Because the command is built by opts.Command (which may wrap it, e.g. in
// podman run), error messages render the plugin's argv, as Argo CD would,
// not the wrapper's.
func runCommand(ctx context.Context, opts *Options, tr *trace, phase string, c Command, dir string, env []string) (string, error) {
	if len(c.Command) == 0 {
		return "", errors.New("Command is empty")
	}
	argv := c.Argv()
	rec := CommandRun{Phase: phase, Argv: argv, Dir: dir, Env: env}
	defer func() { tr.addCommand(rec) }()

	cmd := opts.Command(dir, env, argv)
	// exec.CommandContext refuses to start once its context is done.
	if err := ctx.Err(); err != nil {
		rec.Err = err
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true

	start := time.Now()
	if err := cmd.Start(); err != nil {
		rec.Err = err
		return "", err
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-exited:
			// Argo CD's goroutine only waits for ctx; the RPC context is
			// cancelled when the RPC returns, which the caller signals by
			// cancelling ctx. Keep waiting for that.
			<-ctx.Done()
		}
		select {
		case <-exited:
		default:
			// exec.CommandContext's default Cancel: Process.Kill.
			_ = cmd.Process.Kill()
		}
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		time.Sleep(opts.KillGrace)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}()

	err := cmd.Wait()
	close(exited)
	rec.Duration = time.Since(start)
	rec.Stdout, rec.Stderr = stdout.String(), stderr.String()
	out := stdout.String()
	if err != nil {
		cerr := &CmdError{Args: argsToLog(argv), Stderr: strings.TrimSpace(stderr.String()), Cause: errors.New(err.Error())}
		rec.Err = cerr
		return strings.TrimSuffix(out, "\n"), cerr
	}
	if out == "" {
		tr.addWarning(Warning{Phase: phase, Argv: argv, Message: ZeroOutputWarning})
	}
	return strings.TrimSuffix(out, "\n"), nil
}
