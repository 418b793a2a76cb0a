package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newRenderCommand(s streams) *cobra.Command {
	var capsFile, outDir string
	var kustomization bool
	cmd := &cobra.Command{
		Use:   "render [--capabilities FILE] [--output-dir DIR [--kustomization]] PATH...",
		Short: "Render YAML files or directories",
		Long: `Render the ModelDeployments in the YAML files and directories given, with
the capability file of the cluster: a YAML stream on stdout, or one file
per object under --output-dir (a rendered-manifests directory for Flux or
Argo CD). Objects that are not ModelDeployments pass through.`,
		Example: `  airunway-render render --capabilities clusters/prod/capabilities.yaml models/
  airunway-render render --capabilities caps.yaml --output-dir rendered/prod --kustomization models/`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			switch {
			case len(paths) == 0:
				return usagef("at least one PATH is required")
			case kustomization && outDir == "":
				return usagef("`--kustomization` must be used with `--output-dir`")
			}
			objects, ok := renderPaths(hostFiles{}, capsFile, paths, s.errOut)
			if !ok {
				return exitCode(1)
			}
			if kustomization && len(objects) == 0 {
				// Flux or Argo CD would prune everything the directory held before.
				fmt.Fprintf(s.errOut, "[error] nothing was rendered from %q; `--kustomization` must not write an empty directory that Flux or Argo CD would apply (and prune everything)\n", paths)
				return exitCode(1)
			}
			var err error
			if outDir != "" {
				err = writeDir(outDir, objects, kustomization)
			} else {
				err = writeStream(s.out, objects)
			}
			if err != nil {
				fmt.Fprintf(s.errOut, "[error] %v\n", err)
				return exitCode(1)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&capsFile, "capabilities", "", "ClusterCapabilities file (default: a ClusterCapabilities object among the inputs, else the embedded default)")
	f.StringVar(&outDir, "output-dir", "", "write one file per object under this directory instead of a YAML stream on stdout")
	f.BoolVar(&kustomization, "kustomization", false, "with --output-dir: also write DIR/kustomization.yaml listing every rendered file (for kubectl kustomize, Flux and Argo CD)")
	return cmd
}
