package capabilities

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
)

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
)

// env declares the single dynamic variable `spec`, as upstream's selector
// does: rules see the ModelDeployment spec as plain JSON data.
func env() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(cel.Variable("spec", cel.DynType))
	})
	return celEnv, celEnvErr
}

// RuleCostLimit bounds one evaluation of a selection rule, in CEL cost
// units: the API server's limit for one CEL expression. A real rule
// (`spec.engine.type == 'vllm'`) costs a handful; nested comprehensions
// over literal lists can cost billions, which is a hang for every
// kustomize build.
const RuleCostLimit = 1_000_000

// ErrRuleTooCostly reports a rule that went past RuleCostLimit.
var ErrRuleTooCostly = errors.New("selection rule exceeded its CEL cost limit")

// CompileRule compiles a selection-rule condition into a program whose
// evaluation stops at RuleCostLimit.
func CompileRule(condition string) (cel.Program, error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(condition)
	if iss != nil && iss.Err() != nil {
		return nil, iss.Err()
	}
	return e.Program(ast, cel.CostLimit(RuleCostLimit))
}

// builtinPrograms holds each built-in rule's program, compiled once per
// process when a selection first evaluates it. Most runs name their
// provider and evaluate no rule, and compiling CEL costs milliseconds (the
// parser builds its tables on first use): a third of a one-model run. The
// built-in rules are known to compile (TestBuiltins); rules of a
// capability file are compiled when it is resolved, to report them early.
var builtinPrograms sync.Map // condition -> func() (cel.Program, error)

func builtinProgram(condition string) func() (cel.Program, error) {
	f, _ := builtinPrograms.LoadOrStore(condition, sync.OnceValues(func() (cel.Program, error) { return CompileRule(condition) }))
	return f.(func() (cel.Program, error))
}

// Matches evaluates a compiled rule against the spec data. As upstream does,
// a rule that errors (for example `no such key` on an absent field) or
// returns a non-boolean does not match. A rule past its cost limit is
// ErrRuleTooCostly instead, and stays so for the rest of the run, so a
// costly rule is paid for once, not once per ModelDeployment.
func (r Rule) Matches(spec map[string]any) (bool, error) {
	if r.tooCostly != nil && r.tooCostly.Load() {
		return false, ErrRuleTooCostly
	}
	prg := r.Program
	if prg == nil && r.compile != nil {
		var err error
		if prg, err = r.compile(); err != nil {
			return false, fmt.Errorf("selection rule %q does not compile: %w", r.Condition, err)
		}
	}
	out, _, err := prg.Eval(map[string]any{"spec": spec})
	if err != nil {
		if strings.Contains(err.Error(), "cost limit exceeded") {
			if r.tooCostly != nil {
				r.tooCostly.Store(true)
			}
			return false, ErrRuleTooCostly
		}
		return false, nil
	}
	b, ok := out.Value().(bool)
	return ok && b, nil
}

// String identifies a rule in messages.
func (r Rule) String() string { return fmt.Sprintf("%q (priority %d)", r.Condition, r.Priority) }
