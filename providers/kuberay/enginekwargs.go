package kuberay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// Ray Serve LLM passes engine_kwargs to vLLM as keyword arguments of its
// AsyncEngineArgs (VLLMEngineConfig.from_llm_config,
// python/ray/llm/_internal/serve/engines/vllm/vllm_models.py): each key is
// the field name, a flag's name with underscores, and each value is used
// as given, without vLLM's command-line parsing. The functions here turn
// the command line the other providers pass (derived flags, engine.args,
// engine.extraArgs) into those arguments.

// reservedKwargs are the arguments Ray Serve LLM sets itself and refuses
// in engine_kwargs (VLLMEngineConfig.get_initialization_kwargs), with the
// ModelDeployment field that sets each here.
var reservedKwargs = map[string]string{
	"model":             "spec.model.id",
	"served_model_name": "spec.model.servedName",
}

// kwargsProblem is an engine argument Ray Serve LLM cannot take, at the
// field the user wrote it.
type kwargsProblem struct{ field, message string }

// kwargsBuilder collects engine_kwargs and what cannot become one.
type kwargsBuilder struct {
	values   map[string]any
	problems []kwargsProblem
}

// EngineKwargs is the engine_kwargs of md's Serve config and what cannot
// become one: the flags derived from the spec (--max-model-len,
// --trust-remote-code, --enforce-eager, prefix caching, the tensor
// parallelism over a replica's GPUs), then engine.args sorted by key, then
// engine.extraArgs; a later argument replaces an earlier one of the same
// name, as a later flag does on vLLM's command line, and a derived flag
// steps aside when the user sets it.
func EngineKwargs(md *hub.ModelDeployment) (map[string]any, []kwargsProblem) {
	k := &kwargsBuilder{values: map[string]any{}}
	k.tokens(derivedFlags(md), func(int) string { return "" })
	if e := md.Spec.Engine; e != nil {
		for _, key := range slices.Sorted(maps.Keys(e.Args)) {
			if providers.ValidArgKey(key) { // Check refuses the others
				k.set("spec.engine.args."+key, key, kwargValue(e.Args[key]))
			}
		}
		k.tokens(e.ExtraArgs, func(i int) string { return fmt.Sprintf("spec.engine.extraArgs[%d]", i) })
	}
	return k.values, k.problems
}

// set records one argument, or why it cannot be one.
func (k *kwargsBuilder) set(field, flag string, value any) {
	key, problem := kwargKey(flag)
	if problem == "" {
		key, value = negated(key, value)
		problem = reservedProblem(key, value)
	}
	if problem != "" {
		k.problems = append(k.problems, kwargsProblem{field, problem})
		return
	}
	k.values[key] = value
}

// tokens reads command-line tokens as vLLM's parser would: `--name=value`,
// `--name value`, or `--name` alone (true); `-tp`/`-pp` are the short
// names of the parallel sizes. A token that is neither a flag nor the one
// value after one cannot become an argument; field names each token's
// place.
func (k *kwargsBuilder) tokens(tokens []string, field func(i int) string) {
	for i := 0; i < len(tokens); i++ {
		at, tok := field(i), tokens[i]
		if !isFlag(tok) {
			k.problems = append(k.problems, kwargsProblem{at, fmt.Sprintf("%q is not a flag or the value of one: Ray Serve LLM takes each engine argument as one keyword (engine_kwargs), so write `--name value`, `--name=value`, or a list value as JSON (`--name [\"a\",\"b\"]`)", tok)})
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		v := any(true)
		switch {
		case hasValue:
			v = kwargValue(value)
		case i+1 < len(tokens) && !isFlag(tokens[i+1]):
			v, i = kwargValue(tokens[i+1]), i+1
		}
		k.set(at, name, v)
	}
}

// derivedFlags are the flags the spec implies, in upstream's order, each
// stepping aside when the user sets it (providers.CommandLine).
func derivedFlags(md *hub.ModelDeployment) []string {
	c := providers.NewCommandLine(md)
	c.AddContextFlags()
	if hub.Bool(c.Engine().EnforceEager) {
		c.Add("enforce-eager")
	}
	c.AddPrefixCaching()
	c.AddParallelism(providers.OnePod(ReplicaGPUs(&md.Spec), ""))
	return c.Derived()
}

// isFlag: a token that starts with "-" and is not a negative number.
func isFlag(tok string) bool {
	if !strings.HasPrefix(tok, "-") {
		return false
	}
	_, err := strconv.ParseFloat(tok, 64)
	return err != nil
}

// kwargKey is the AsyncEngineArgs field a flag sets: "--max-num-seqs" →
// "max_num_seqs", the parallel sizes' short names → their fields.
func kwargKey(flag string) (string, string) {
	name := strings.TrimLeft(flag, "-")
	if strings.Contains(name, ".") {
		base, _, _ := strings.Cut(name, ".")
		return "", fmt.Sprintf("%q sets one key of --%s, which vLLM's command line allows and Ray Serve LLM's engine_kwargs do not; give --%s its whole JSON value", "--"+name, base, base)
	}
	for _, group := range []struct {
		aliases []string
		field   string
	}{{providers.VLLMParallelFlags.Tensor, "tensor_parallel_size"}, {providers.VLLMParallelFlags.Pipeline, "pipeline_parallel_size"}} {
		if slices.Contains(group.aliases, name) {
			return group.field, ""
		}
	}
	return strings.ReplaceAll(name, "-", "_"), ""
}

// negated turns argparse's negation of a boolean, `--no-X` without a
// value, into X: false.
func negated(key string, value any) (string, any) {
	if rest, ok := strings.CutPrefix(key, "no_"); ok && value == true {
		return rest, false
	}
	return key, value
}

// reservedProblem refuses what Ray Serve LLM sets itself.
func reservedProblem(key string, value any) string {
	if field, ok := reservedKwargs[key]; ok {
		return fmt.Sprintf("sets %s, which Ray Serve LLM refuses in engine_kwargs: it sets it from model_loading_config, which the kuberay provider fills from %s; set that field instead", key, field)
	}
	if key == "distributed_executor_backend" && value != "ray" {
		return fmt.Sprintf("sets distributed_executor_backend to %v: Ray Serve LLM runs vLLM's workers as Ray actors and refuses any other backend", value)
	}
	return ""
}

// kwargValue is a flag's value as vLLM's parser would type it: no value is
// true, a whole number an integer, and JSON (a number, true or false, an
// object, a list) its decoded value; anything else stays a string.
func kwargValue(s string) any {
	if s == "" {
		return true
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() || v == nil {
		return s
	}
	if _, isString := v.(string); isString {
		return s // a quoted JSON string is the string as written
	}
	return typedNumbers(v)
}

// typedNumbers turns every json.Number into an int64 or a float64, so
// the YAML encoder writes numbers, not quoted strings.
func typedNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = typedNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = typedNumbers(e)
		}
	}
	return v
}

// checkEngineKwargs reports every engine argument that cannot become one
// of Ray Serve LLM's engine_kwargs.
func checkEngineKwargs(md *hub.ModelDeployment, l *diag.List) {
	if e := md.Spec.Engine; e != nil {
		for _, err := range providers.CheckArgKeys(e) {
			l.Errorf("spec.engine.args", "%v", err)
		}
	}
	_, problems := EngineKwargs(md)
	for _, p := range problems {
		l.Errorf(p.field, "%s", p.message)
	}
}
