package cli

import (
	"fmt"
	"io"

	"github.com/airunway-render/airunway-render/internal/termsafe"
)

// reportError prints err as an error line on w. Its text often quotes a
// repository (a file path, an object's name, kustomize's own errors about
// them), so it is escaped: one line, nothing a terminal acts on.
func reportError(w io.Writer, err error) {
	fmt.Fprintf(w, "[error] %s\n", termsafe.Escape(err.Error()))
}

// failure ends a command with exit status 1 because of err, which Execute
// reports (reportError): the one way a command fails on an error that is
// not a list of problems.
type failure struct{ err error }

func (f failure) Error() string { return f.err.Error() }
func (f failure) Unwrap() error { return f.err }

// fail is the error a command returns to stop on err.
func fail(err error) error { return failure{err} }
