package cli

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airunway-render/airunway-render/internal/kbuild"
	"github.com/airunway-render/airunway-render/render"
)

// functionExecutable is the program kustomize runs as the KRM function
// during build: this binary (tests point it elsewhere, since theirs is the
// test binary).
var functionExecutable = os.Executable

func newBuildCommand(s streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "build DIR [-o yaml|json]",
		Short: "Build a kustomization with airunway-render as its function (kustomize build, in process)",
		Long: `Build the kustomization in DIR as ` + "`kustomize build`" + ` does, with kustomize's
library (sigs.k8s.io/kustomize/api) inside this binary: resources, patches,
replicas, images, namespaces, components and the transformers in their
order. Where the kustomization declares the airunway-render function (an
exec path or an image named airunway-render, as in
examples/kustomize/render), this binary runs it: no standalone kustomize,
no --enable-alpha-plugins --enable-exec. A kustomization that declares any
other function is refused.

The output is what standalone kustomize prints for the same directory with
the same airunway-render release. The Argo CD plugin builds an
application's directory this way when it holds a kustomization.`,
		Example: `  # the prod cluster's overlay: the shared models, prod's patches and capability file
  airunway-render build examples/kustomize/clusters/prod

  # the same as one JSON List
  airunway-render build examples/kustomize/clusters/prod -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("takes one directory with a kustomization, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			res, err := buildKustomization(args[0], "")
			if err != nil {
				fmt.Fprintf(s.errOut, "[error] %v\n", err)
				return exitCode(1)
			}
			if output == "json" {
				return writeBuildJSON(s, res.YAML)
			}
			_, err = s.out.Write(res.YAML)
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// buildKustomization runs kbuild with this binary as the function; root,
// when set, confines what it reads.
func buildKustomization(dir, root string) (kbuild.Result, error) {
	self, err := functionExecutable()
	if err != nil {
		return kbuild.Result{}, fmt.Errorf("cannot find this program to run as the function: %w", err)
	}
	return kbuild.Build(dir, kbuild.Options{Function: self, Root: root})
}

// writeBuildJSON prints built YAML as one JSON List, as the other commands
// print -o json.
func writeBuildJSON(s streams, out []byte) error {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(out), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return err
	}
	items := make([]render.Encoded, 0, len(nodes))
	for _, n := range nodes {
		items = append(items, render.Encoded{YAML: []byte(n.MustString())})
	}
	return writeJSONList(s.out, items)
}
