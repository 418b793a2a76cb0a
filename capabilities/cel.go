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

// Matches evaluates a compiled rule against the spec data. As upstream does,
// a rule that errors (for example `no such key` on an absent field) or
// returns a non-boolean does not match. A rule past its cost limit is
// ErrRuleTooCostly instead, and stays so for the rest of the run, so a
// costly rule is paid for once, not once per ModelDeployment.
func (r Rule) Matches(spec map[string]any) (bool, error) {
	if r.tooCostly != nil && r.tooCostly.Load() {
		return false, ErrRuleTooCostly
	}
	out, _, err := r.Program.Eval(map[string]any{"spec": spec})
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
