package providers

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
)

var argKeyRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

// ValidArgKey reports whether an `engine.args` key is acceptable to the
// Dynamo, llm-d and vLLM providers: not empty, no leading dash, only
// letters, digits, '-' and '_'. Anything else could smuggle extra tokens
// into the command line.
func ValidArgKey(key string) bool { return argKeyRe.MatchString(key) }

// CheckArgKeys reports every invalid `spec.engine.args` key.
func CheckArgKeys(e *v1.EngineSpec) []error {
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
func UserFlags(e *v1.EngineSpec) FlagSet {
	set := FlagSet{}
	if e == nil {
		return set
	}
	for k := range e.Args {
		set[k] = true
	}
	for _, tok := range e.ExtraArgs {
		if k, ok := v1.FlagKey(tok); ok {
			set[k] = true
		}
	}
	return set
}
