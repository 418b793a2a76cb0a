package providers

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"github.com/airunway-render/airunway-render/api/hub"
)

var argKeyRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

// ValidArgKey reports whether an `engine.args` key is acceptable to the
// Dynamo, llm-d and vLLM providers: not empty, no leading dash, only
// letters, digits, '-' and '_'. Anything else could smuggle extra tokens
// into the command line.
func ValidArgKey(key string) bool { return argKeyRe.MatchString(key) }

// CheckArgKeys reports every invalid `spec.engine.args` key.
func CheckArgKeys(e *hub.EngineSpec) []error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(e.Args)) {
		if !ValidArgKey(k) {
			errs = append(errs, fmt.Errorf("invalid engine arg key %q: must contain only alphanumeric characters, hyphens, and underscores, and must not start with '-'", k))
		}
	}
	return errs
}

// SortedArgs renders `engine.args` as command-line tokens in key order:
// `--key value`, or `--key` alone for an empty value.
func SortedArgs(args map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(args)) {
		out = append(out, "--"+k)
		if v := args[k]; v != "" {
			out = append(out, v)
		}
	}
	return out
}

// FlagSet records which flags the user set explicitly in `engine.args` or
// `engine.extraArgs`, so derived flags can step aside.
type FlagSet map[string]bool

// UserFlags collects the flag names the user set.
func UserFlags(e *hub.EngineSpec) FlagSet {
	set := FlagSet{}
	if e == nil {
		return set
	}
	for k := range e.Args {
		set[k] = true
	}
	for _, tok := range e.ExtraArgs {
		if k, ok := hub.FlagKey(tok); ok {
			set[k] = true
		}
	}
	return set
}

// CommandLine builds a vLLM-style command line in which every derived flag
// steps aside when the user set the same flag in `engine.args` or
// `engine.extraArgs`, so the user's value appears exactly once.
type CommandLine struct {
	user   FlagSet
	engine *hub.EngineSpec
	args   []string
}

// NewCommandLine starts a command line with fixed leading tokens.
func NewCommandLine(md *hub.ModelDeployment, leading ...string) *CommandLine {
	e := md.Spec.Engine
	if e == nil {
		e = &hub.EngineSpec{}
	}
	return &CommandLine{user: UserFlags(md.Spec.Engine), engine: e, args: leading}
}

// Engine is the engine spec, never nil.
func (c *CommandLine) Engine() *hub.EngineSpec { return c.engine }

// UserSet reports whether the user set the flag.
func (c *CommandLine) UserSet(flag string) bool { return c.user[flag] }

// Add appends `--flag value...` unless the user set the flag.
func (c *CommandLine) Add(flag string, value ...string) {
	if !c.user[flag] {
		c.args = append(append(c.args, "--"+flag), value...)
	}
}

// AddModelFlags appends the flags every vLLM server derives from the
// model: --model, --served-model-name, --max-model-len, --trust-remote-code.
func (c *CommandLine) AddModelFlags(md *hub.ModelDeployment) {
	if id := md.Spec.Model.ID; id != "" {
		c.Add("model", id)
	}
	if name := md.Spec.Model.ServedName; name != "" {
		c.Add("served-model-name", name)
	}
	if c.engine.ContextLength != nil {
		c.Add("max-model-len", strconv.Itoa(int(*c.engine.ContextLength)))
	}
	if hub.Bool(c.engine.TrustRemoteCode) {
		c.Add("trust-remote-code")
	}
}

// Finish appends `engine.args` sorted by key, then `engine.extraArgs`
// verbatim, and returns the tokens.
func (c *CommandLine) Finish() []string {
	return append(append(c.args, SortedArgs(c.engine.Args)...), c.engine.ExtraArgs...)
}
