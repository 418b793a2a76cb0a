package fn

import (
	"fmt"
	"io"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/version"
)

func runVersion(args []string, stdout, stderr io.Writer) int {
	markdown := false
	for _, a := range args {
		if a != "--markdown" {
			fmt.Fprintf(stderr, "airunway-render version: unknown argument %q (only --markdown is accepted)\n", a)
			return 1
		}
		markdown = true
	}
	if markdown {
		fmt.Fprint(stdout, capabilities.MatrixMarkdown())
		return 0
	}
	fmt.Fprintf(stdout, "airunway-render %s\n\nSupported providers:\n", version.Version)
	if err := capabilities.WriteMatrixText(stdout); err != nil {
		fmt.Fprintf(stderr, "airunway-render version: %v\n", err)
		return 1
	}
	return 0
}
