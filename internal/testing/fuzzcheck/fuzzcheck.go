// Package fuzzcheck holds what the fuzz targets share: a bound on each
// input's running time, which Go's fuzzer lacks, and which models their
// schema invariant (schemacheck.RenderedNode) leaves out, and the rule that
// every error has a message. Test code only; of the project it imports only
// diag, which imports nothing, so every package's tests can use it.
package fuzzcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
)

// ErrorsHaveMessages fails on an error without a message: an error the
// user cannot read is no error report.
func ErrorsHaveMessages(l diag.List) error {
	for _, p := range l {
		if p.Severity == diag.Error && strings.TrimSpace(p.Message) == "" {
			return fmt.Errorf("error without a message: %+v", p)
		}
	}
	return nil
}

// Timeout bounds one input. Without it a hang stalls a fuzzing worker and
// never yields a reproducer.
const Timeout = 5 * time.Second

// Bounded runs check in a goroutine and fails the test on its error, on a
// panic (with the stack, which a recovered panic would otherwise lose) and
// when it runs longer than Timeout.
func Bounded(t testing.TB, check func() error) {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		if err := check(); err != nil {
			done <- err.Error()
			return
		}
		done <- ""
	}()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case msg := <-done:
		if msg != "" {
			t.Fatal(msg)
		}
	case <-timer.C:
		t.Fatalf("input still running after %s (hang)", Timeout)
	}
}

// ModelsWithOverrides names the ModelDeployments among nodes that set
// `spec.provider.overrides`. Overrides are free JSON merged into the
// object, so the API server, not the renderer, refuses fields they add:
// the schema invariant skips those models' objects.
func ModelsWithOverrides(nodes []*yaml.RNode) map[string]bool {
	out := map[string]bool{}
	for _, n := range nodes {
		if n.GetKind() != "ModelDeployment" {
			continue
		}
		o, err := n.Pipe(yaml.Lookup("spec", "provider", "overrides"))
		if err == nil && !yaml.IsMissingOrNull(o) && !yaml.IsYNodeEmptyMap(o.YNode()) {
			out[n.GetName()] = true
		}
	}
	return out
}

// CorpusInputs is the inputs of the fuzz corpus files that patterns match
// (Go's corpus format: a header line, then one Go literal per line), as
// bytes: another target's findings are seeds for one that reads the same
// kind of input.
func CorpusInputs(tb testing.TB, patterns ...string) [][]byte {
	tb.Helper()
	var inputs [][]byte
	for _, pattern := range patterns {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				tb.Fatal(err)
			}
			for _, line := range strings.Split(string(b), "\n")[1:] {
				for _, prefix := range []string{"string(", "[]byte("} {
					if lit, ok := strings.CutPrefix(line, prefix); ok {
						if s, err := strconv.Unquote(strings.TrimSuffix(lit, ")")); err == nil {
							inputs = append(inputs, []byte(s))
						}
					}
				}
			}
		}
	}
	return inputs
}
