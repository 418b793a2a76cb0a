package capabilities

import (
	"fmt"
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

// CompileRule compiles a selection-rule condition.
func CompileRule(condition string) (cel.Program, error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(condition)
	if iss != nil && iss.Err() != nil {
		return nil, iss.Err()
	}
	return e.Program(ast)
}

// Matches evaluates a compiled rule against the spec data. As upstream does,
// a rule that errors (for example `no such key` on an absent field) or
// returns a non-boolean does not match.
func (r Rule) Matches(spec map[string]any) bool {
	out, _, err := r.Program.Eval(map[string]any{"spec": spec})
	if err != nil {
		return false
	}
	b, ok := out.Value().(bool)
	return ok && b
}

// String identifies a rule in messages.
func (r Rule) String() string { return fmt.Sprintf("%q (priority %d)", r.Condition, r.Priority) }
