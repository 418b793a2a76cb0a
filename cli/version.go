package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/version"
)

func newVersionCommand(s streams) *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "version [--markdown]",
		Short: "Print the version and the supported provider releases",
		Long: `Print the renderer's version and its compatibility matrix: the operator
releases of each provider it renders for, the Gateway API and InferencePool
versions, and the Kubernetes releases the rendered objects need.`,
		Example: `  airunway-render version
  airunway-render version --markdown   # the table docs publish`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if markdown {
				_, err := fmt.Fprint(s.out, capabilities.MatrixMarkdown())
				return err
			}
			fmt.Fprintf(s.out, "airunway-render %s\n\nSupported providers:\n", version.String())
			return capabilities.WriteMatrixText(s.out)
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the matrix as a Markdown table")
	return cmd
}
