package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airunway-render/airunway-render/fit"
)

type renderOptions struct {
	filenames     []string
	warnings      warningFlags
	capsFile      string
	output        string
	outDir        string
	kustomization bool
	modelDirs     []string
}

func newRenderCommand(s streams) *cobra.Command {
	var o renderOptions
	cmd := &cobra.Command{
		Use:   "render [-f FILE|DIR|-]... [PATH...] [--capabilities FILE] [-o yaml|json | --output-dir DIR [--kustomization]]",
		Short: "Render YAML files or directories",
		Long: `Render the ModelDeployments in the YAML files and directories given (with
-f or as arguments; -f - reads stdin), with the capability file of the
cluster: a YAML stream (or, with -o json, a v1 List) on stdout, or one file
per object under --output-dir (a rendered-manifests directory for Flux or
Argo CD). Objects that are not ModelDeployments pass through.

Without --capabilities, a ClusterCapabilities among the inputs is used,
else the embedded default, with a warning: it assumes every provider is
installed at upstream's pinned release and one generic NVIDIA GPU pool.`,
		Example: `  # render one model for a cluster
  airunway-render render -f model.yaml --capabilities cluster.yaml

  # a directory of models, as JSON
  airunway-render render -f models/ --capabilities clusters/prod/capabilities.yaml -o json

  # a rendered-manifests directory for Flux or Argo CD
  airunway-render render -f models/ --capabilities caps.yaml --output-dir rendered/prod --kustomization

  # from a pipe
  kustomize build overlays/prod | airunway-render render -f - --capabilities caps.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := inputPaths(o.filenames, args)
			if err != nil {
				return err
			}
			if err := o.validate(cmd); err != nil {
				return err
			}
			hintIfTerminal(s, cmd.CommandPath(), paths)
			return runRender(o, paths, s)
		},
	}
	f := cmd.Flags()
	addFilenameFlag(cmd, &o.filenames, "YAML file or directory to render")
	f.StringVar(&o.capsFile, "capabilities", "", "ClusterCapabilities file (default: a ClusterCapabilities object among the inputs, else the embedded default, with a warning)")
	f.StringVarP(&o.output, "output", "o", "yaml", "output format of the stream on stdout: yaml or json")
	f.StringVar(&o.outDir, "output-dir", "", "write one file per object under this directory instead of a stream on stdout")
	addModelDirFlag(cmd, &o.modelDirs)
	f.BoolVar(&o.kustomization, "kustomization", false, "with --output-dir: also write DIR/kustomization.yaml listing every rendered file (for kubectl kustomize, Flux and Argo CD)")
	o.warnings.add(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (o renderOptions) validate(cmd *cobra.Command) error {
	if err := checkOutputFormat(o.output); err != nil {
		return err
	}
	switch {
	case o.kustomization && o.outDir == "":
		return usagef("`--kustomization` must be used with `--output-dir`")
	case o.outDir != "" && cmd.Flags().Changed("output"):
		return usagef("`-o` formats the stream on stdout; `--output-dir` writes YAML files: use one of them")
	}
	return nil
}

func runRender(o renderOptions, paths []string, s streams) error {
	policy, err := o.warnings.policy()
	if err != nil {
		return err
	}
	src, closeScope, err := namedHostFiles(s.in, slices.Concat(paths, []string{o.capsFile})...)
	if err != nil {
		return fail(err)
	}
	defer closeScope()
	models, err := readModelDirs(o.modelDirs)
	if err != nil {
		return fail(err)
	}
	objects, ok := renderPaths(src, o.capsFile, paths, policy, models, s.errOut)
	if !ok {
		return exitCode(1)
	}
	if o.kustomization && len(objects) == 0 {
		// Flux or Argo CD would prune everything the directory held before.
		return fail(fmt.Errorf("nothing was rendered from %q; `--kustomization` must not write an empty directory that Flux or Argo CD would apply (and prune everything)", paths))
	}
	switch {
	case o.outDir != "":
		err = writeDir(o.outDir, objects, o.kustomization)
	case o.output == "json":
		err = writeJSONList(s.out, objects)
	default:
		err = writeStream(s.out, objects)
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// addModelDirFlag adds --model-dir, which render, plan and preview take.
func addModelDirFlag(cmd *cobra.Command, dirs *[]string) {
	cmd.Flags().StringArrayVar(dirs, "model-dir", nil, "ID=DIR: read model ID's facts for the memory fit from DIR's config.json, model.safetensors.index.json and hf_quant_config.json instead of the model catalog (repeatable; docs/will-it-run.md)")
}

// readModelDirs reads each --model-dir ID=DIR: the facts of model ID from
// the config.json (and safetensors index) in DIR, offline.
func readModelDirs(flags []string) (map[string]fit.Model, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	models := map[string]fit.Model{}
	for _, f := range flags {
		id, dir, ok := strings.Cut(f, "=")
		if !ok || id == "" || dir == "" {
			return nil, fmt.Errorf("--model-dir %q: want ID=DIR, the model's spec.model.id and a directory holding its config.json", f)
		}
		m, err := fit.ReadDir(id, dir)
		if err != nil {
			return nil, fmt.Errorf("--model-dir %s: %v", f, err)
		}
		models[id] = m
	}
	return models, nil
}
