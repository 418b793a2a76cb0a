package capabilities

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
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

// The bounds on selection rules. A capability file is repository content
// under `build`, kpt and Argo CD, and each rule is evaluated for each model
// it could select: one rule just under RuleCostLimit costs some 65 ms of
// CPU, so without a bound on the run, 1,000 such rules over 1,000 models
// in a few hundred KB would cost hours.
const (
	// RuleCostLimit bounds one evaluation of a selection rule, in CEL cost
	// units: the API server's limit for one CEL expression. A real rule
	// (`spec.engine.type == 'vllm'`) costs a handful; nested comprehensions
	// over literal lists can cost billions, which is a hang for every
	// kustomize build.
	RuleCostLimit = 1_000_000
	// RunRuleCostLimit bounds every evaluation of one run together: ten
	// rules at their limit, 1.3 s of CPU on a two-core machine
	// (BenchmarkRuleCost).
	// Real rules over 10,000 models cost a few hundred thousand, and a
	// result is evaluated once per distinct input (Resolved.Match).
	RunRuleCostLimit = 10 * RuleCostLimit
	// MaxSelectionRules bounds the rules of one capability file; the
	// built-in descriptions have one or two per provider.
	MaxSelectionRules = 100
	// maxCachedResults bounds the results a run remembers, about 100
	// bytes each.
	maxCachedResults = 1 << 16
)

// ErrRuleTooCostly reports a rule that went past RuleCostLimit.
var ErrRuleTooCostly = errors.New("selection rule exceeded its CEL cost limit")

// RunCostExceeded reports a run whose rules went past RunRuleCostLimit,
// naming the rule whose evaluation crossed it.
type RunCostExceeded struct {
	Rule  Rule
	Spent uint64
}

func (e *RunCostExceeded) Error() string {
	return fmt.Sprintf("the selection rules have spent %d CEL cost units in this run, past the %d one run may spend, while evaluating rule %s at `%s`; write rules that read fields of the spec instead of iterating, or set `spec.provider.name` to skip the rules", e.Spent, RunRuleCostLimit, e.Rule, e.Rule.Field)
}

// compiledRule is a rule's program and the inputs it reads.
type compiledRule struct {
	program cel.Program
	inputs  ruleInputs
}

// compileRule compiles a selection-rule condition into a program whose
// evaluation stops at RuleCostLimit and tracks its cost, with the fields
// of spec it reads.
func compileRule(condition string) (*compiledRule, error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(condition)
	if iss != nil && iss.Err() != nil {
		return nil, iss.Err()
	}
	prg, err := e.Program(ast, cel.CostLimit(RuleCostLimit), cel.EvalOptions(cel.OptTrackCost))
	if err != nil {
		return nil, err
	}
	return &compiledRule{program: prg, inputs: inputsOf(ast.NativeRep().Expr())}, nil
}

// builtinPrograms holds each built-in rule's program, compiled once per
// process when a selection first evaluates it. Most runs name their
// provider and evaluate no rule, and compiling CEL costs milliseconds (the
// parser builds its tables on first use): a third of a one-model run. The
// built-in rules are known to compile (TestBuiltins); rules of a
// capability file are compiled when it is resolved, to report them early.
var builtinPrograms sync.Map // condition -> func() (*compiledRule, error)

func builtinProgram(condition string) func() (*compiledRule, error) {
	f, _ := builtinPrograms.LoadOrStore(condition, sync.OnceValues(func() (*compiledRule, error) { return compileRule(condition) }))
	return f.(func() (*compiledRule, error))
}

// ruleCost is what the rules of a run have spent, shared by the capability
// files of one run (ShareRuleCost).
type ruleCost struct {
	spent atomic.Uint64
	// results caches each rule's result by the input it reads.
	results sync.Map // resultKey -> bool
	cached  atomic.Int64
}

// resultKey is a rule (by its condition: the same condition in two files
// of a fleet reads the same) and a digest of what it read.
type resultKey struct {
	condition string
	input     [sha256.Size]byte
}

// ShareRuleCost makes the capability files of one run (a fleet's) spend
// from one RunRuleCostLimit, as a single file's rules do.
func ShareRuleCost(files ...*Resolved) {
	shared := &ruleCost{}
	for _, r := range files {
		r.cost = shared
	}
}

// Match evaluates rule, one of r's, against the spec data. As upstream
// does, a rule that errors (for example `no such key` on an absent field)
// or returns a non-boolean does not match. A rule past its cost limit is
// ErrRuleTooCostly instead, and stays so for the rest of the run, so a
// costly rule is paid for once, not once per ModelDeployment; a run past
// RunRuleCostLimit is a *RunCostExceeded. A rule's result is evaluated once
// per distinct value of the fields it reads: models that differ elsewhere
// share it.
func (r *Resolved) Match(rule Rule, spec map[string]any) (bool, error) {
	if rule.tooCostly != nil && rule.tooCostly.Load() {
		return false, ErrRuleTooCostly
	}
	c, err := rule.compile()
	if err != nil {
		return false, fmt.Errorf("selection rule %q does not compile: %w", rule.Condition, err)
	}
	cost := r.cost
	if cost == nil { // the embedded default's built-in rules: trusted, cheap
		return evaluate(rule, c, spec, nil)
	}
	if spent := cost.spent.Load(); spent > RunRuleCostLimit {
		return false, &RunCostExceeded{Rule: rule, Spent: spent}
	}
	key, keyed := resultKey{condition: rule.Condition}, false
	if input, ok := c.inputs.of(spec); ok {
		key.input, keyed = sha256.Sum256(input), true
		if v, ok := cost.results.Load(key); ok {
			return v.(bool), nil
		}
	}
	match, err := evaluate(rule, c, spec, cost)
	if err != nil {
		return false, err
	}
	if keyed && cost.cached.Add(1) <= maxCachedResults {
		cost.results.Store(key, match)
	}
	return match, nil
}

// evaluate runs the rule's program, charging what it cost to cost (when
// not nil).
func evaluate(rule Rule, c *compiledRule, spec map[string]any, cost *ruleCost) (bool, error) {
	out, details, err := c.program.Eval(map[string]any{"spec": spec})
	var spent uint64
	if details != nil && details.ActualCost() != nil {
		spent = *details.ActualCost()
	}
	tooCostly := err != nil && strings.Contains(err.Error(), "cost limit exceeded")
	if tooCostly {
		spent = max(spent, RuleCostLimit)
	}
	if cost != nil {
		if total := cost.spent.Add(spent); total > RunRuleCostLimit {
			return false, &RunCostExceeded{Rule: rule, Spent: total}
		}
	}
	if tooCostly {
		if rule.tooCostly != nil {
			rule.tooCostly.Store(true)
		}
		return false, ErrRuleTooCostly
	}
	if err != nil {
		return false, nil
	}
	b, ok := out.Value().(bool)
	return ok && b, nil
}

// String identifies a rule in messages.
func (r Rule) String() string { return fmt.Sprintf("%q (priority %d)", r.Condition, r.Priority) }

// ruleInputs are the fields of `spec` a rule reads, as paths of field
// names; whole when it reads `spec` in a way other than by naming fields
// (`spec` alone, `spec['x']`, a comprehension variable named spec).
type ruleInputs struct {
	paths [][]string
	whole bool
}

// inputsOf walks a checked expression for the field selections rooted at
// `spec`.
func inputsOf(e celast.Expr) ruleInputs {
	var in ruleInputs
	var walk func(celast.Expr)
	walk = func(e celast.Expr) {
		switch e.Kind() {
		case celast.IdentKind:
			if e.AsIdent() == "spec" {
				in.whole = true
			}
		case celast.SelectKind:
			var path []string
			root := e
			for root.Kind() == celast.SelectKind {
				path = append([]string{root.AsSelect().FieldName()}, path...)
				root = root.AsSelect().Operand()
			}
			if root.Kind() == celast.IdentKind && root.AsIdent() == "spec" {
				in.paths = append(in.paths, path)
				return
			}
			walk(root)
		case celast.CallKind:
			call := e.AsCall()
			if call.IsMemberFunction() {
				walk(call.Target())
			}
			for _, a := range call.Args() {
				walk(a)
			}
		case celast.ListKind:
			for _, x := range e.AsList().Elements() {
				walk(x)
			}
		case celast.MapKind:
			for _, entry := range e.AsMap().Entries() {
				walk(entry.AsMapEntry().Key())
				walk(entry.AsMapEntry().Value())
			}
		case celast.StructKind:
			for _, f := range e.AsStruct().Fields() {
				walk(f.AsStructField().Value())
			}
		case celast.ComprehensionKind:
			c := e.AsComprehension()
			if c.IterVar() == "spec" || c.IterVar2() == "spec" || c.AccuVar() == "spec" {
				in.whole = true
			}
			for _, x := range []celast.Expr{c.IterRange(), c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()} {
				walk(x)
			}
		}
	}
	walk(e)
	return in
}

// of is what a rule with these inputs reads of spec, encoded so that
// equal bytes mean equal reads: each path's value, or that it is absent.
// False when the encoding fails (a value JSON cannot hold).
func (in ruleInputs) of(spec map[string]any) ([]byte, bool) {
	if in.whole {
		b, err := json.Marshal(spec)
		return b, err == nil
	}
	read := make([]readValue, len(in.paths))
	for i, p := range in.paths {
		v, ok := lookup(spec, p)
		read[i] = readValue{Path: p, Value: v, Present: ok}
	}
	b, err := json.Marshal(read)
	return b, err == nil
}

// readValue is one path's value as a rule reads it.
type readValue struct {
	Path    []string
	Value   any
	Present bool
}

// lookup is the value at path in spec, and whether there is one (null
// or not); a path through a value that is not an object has none.
func lookup(spec map[string]any, path []string) (any, bool) {
	var v any = spec
	for _, name := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[name]; !ok {
			return nil, false
		}
	}
	return v, true
}
