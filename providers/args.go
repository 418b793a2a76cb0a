package providers

import (
	"encoding/json"
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
// `--key value`, or `--key` alone for an empty value; the tokens as the
// engine must see them, not yet escaped for a container (EscapeExpansion).
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
// `engine.extraArgs`, so the user's value appears exactly once. Its tokens
// are a container's `args`: every string from the ModelDeployment is
// escaped for the kubelet where the CommandLine places it, so the engine
// sees it as written.
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
// The user's strings are escaped (EscapeExpansion), as every user token of
// a CommandLine is.
func (c *CommandLine) AddModelFlags(md *hub.ModelDeployment) {
	if id := md.Spec.Model.ID; id != "" {
		c.Add("model", EscapeExpansion(id))
	}
	if name := md.Spec.Model.ServedName; name != "" {
		c.Add("served-model-name", EscapeExpansion(name))
	}
	c.AddContextFlags()
}

// AddContextFlags adds `--max-model-len` and `--trust-remote-code` from the
// engine spec: the model flags a provider that names the model another way
// (KubeRay's model_loading_config) still passes.
func (c *CommandLine) AddContextFlags() {
	if c.engine.ContextLength != nil {
		c.Add("max-model-len", strconv.Itoa(int(*c.engine.ContextLength)))
	}
	if hub.Bool(c.engine.TrustRemoteCode) {
		c.Add("trust-remote-code")
	}
}

// AddPrefixCaching adds vLLM's `--enable-prefix-caching` or
// `--no-enable-prefix-caching` when the engine spec sets it, unless the
// user's own arguments already say `--no-enable-prefix-caching`.
func (c *CommandLine) AddPrefixCaching() {
	if c.engine.EnablePrefixCaching == nil || c.UserSet("no-enable-prefix-caching") {
		return
	}
	if *c.engine.EnablePrefixCaching {
		c.Add("enable-prefix-caching")
	} else {
		c.Add("no-enable-prefix-caching")
	}
}

// Derived is the tokens so far: the leading ones and the derived flags,
// without `engine.args` and `engine.extraArgs`, for a provider that passes
// those another way (KubeRay's engine_kwargs).
func (c *CommandLine) Derived() []string { return c.args }

// Finish appends `engine.args` sorted by key, then `engine.extraArgs`
// verbatim, both escaped (EscapeExpansion), and returns the tokens.
func (c *CommandLine) Finish() []string {
	return append(append(c.args, EscapeExpansionAll(SortedArgs(c.engine.Args))...), EscapeExpansionAll(c.engine.ExtraArgs)...)
}

// DefaultMaxLoRAs is how many adapters vLLM serves in one batch, from
// GPU memory, unless `engine.args` says otherwise: vLLM's own default, 1,
// would serialise requests for different adapters; each slot reserves GPU
// memory for an adapter of `--max-lora-rank` (vLLM's default 16).
const DefaultMaxLoRAs = 4

// loraModule is one adapter as vLLM's `--lora-modules` reads it in its
// JSON form, which takes any path (the `name=path` form breaks on '=').
type loraModule struct {
	Name          string `json:"name"`
	Path          string `json:"path"`
	BaseModelName string `json:"base_model_name,omitempty"`
}

// AddLoRA appends vLLM's flags for `spec.adapters`: --enable-lora;
// --max-loras, the adapters served in one batch (all of them, up to
// DefaultMaxLoRAs); --max-cpu-loras, so that every listed adapter stays
// cached in host memory; and --lora-modules with one JSON object per
// adapter. vLLM downloads a Hugging Face repository ID given as the path
// (with HF_TOKEN when `secrets.huggingFaceToken` is set). Each flag steps
// aside for the user's own; --max-cpu-loras also for a user --max-loras,
// which vLLM then takes as its default.
func (c *CommandLine) AddLoRA(md *hub.ModelDeployment) {
	adapters := md.Spec.Adapters
	if len(adapters) == 0 {
		return
	}
	c.AddLoRACapacity(len(adapters))
	base := md.Spec.Model.ServedName
	if base == "" {
		base = md.Spec.Model.ID
	}
	modules := make([]string, len(adapters))
	for i, a := range adapters {
		b, err := json.Marshal(loraModule{Name: a.Name, Path: a.HFRepo(), BaseModelName: base})
		if err != nil {
			panic(err) // three strings always marshal
		}
		// The base model's name is the user's servedName or id.
		modules[i] = EscapeExpansion(string(b))
	}
	c.Add("lora-modules", modules...)
}

// LoRACapacityArgs are the flags that let vLLM serve the model's adapters
// without naming them, for an operator that loads adapters at runtime
// (Dynamo): AddLoRACapacity's, alone.
func LoRACapacityArgs(md *hub.ModelDeployment) []string {
	if len(md.Spec.Adapters) == 0 {
		return nil
	}
	c := NewCommandLine(md)
	c.AddLoRACapacity(len(md.Spec.Adapters))
	return c.args
}

// AddLoRACapacity appends the flags that let vLLM serve n adapters:
// --enable-lora, --max-loras (n, up to DefaultMaxLoRAs) and --max-cpu-loras
// (n). Each steps aside for the user's own, and both counts for a user
// --max-loras.
func (c *CommandLine) AddLoRACapacity(n int) {
	c.Add("enable-lora")
	if !c.UserSet("max-loras") {
		c.Add("max-loras", strconv.Itoa(min(n, DefaultMaxLoRAs)))
		c.Add("max-cpu-loras", strconv.Itoa(n))
	}
}
