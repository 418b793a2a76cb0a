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
