package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/kbuild"
	"github.com/airunway-render/airunway-render/internal/termsafe"
	"github.com/airunway-render/airunway-render/render"
)

// functionExecutable is the program kustomize runs as the KRM function
// during build: this binary (tests point it elsewhere, since theirs is the
// test binary).
var functionExecutable = os.Executable

func newBuildCommand(s streams) *cobra.Command {
	var output, root string
	var timeout time.Duration
	var warnings warningFlags
	cmd := &cobra.Command{
		Use:   "build DIR [--root DIR] [-o yaml|json]",
		Short: "Build a kustomization with airunway-render as its function (kustomize build, in process)",
		Long: `Build the kustomization in DIR as ` + "`kustomize build`" + ` does, with kustomize's
library (sigs.k8s.io/kustomize/api) inside this binary: resources, patches,
replicas, images, namespaces, components and the transformers in their
order. Where the kustomization declares the airunway-render function (an
exec path or an image named airunway-render, as in
examples/kustomize/render), this binary runs it: no standalone kustomize,
no --enable-alpha-plugins --enable-exec. A kustomization that declares any
other function, or any other plugin that is not one of kustomize's builtins,
is refused before kustomize loads anything, however it is written (inline,
in a file, in a List, with escaped or differently cased keys); so is a
remote base or file: build fetches nothing and runs nothing else.

Everything read must be inside --root: by default the Git working tree that
holds DIR, else the file system.
A build that runs longer than --timeout is stopped with an error: kustomize's
work grows with the square of the objects, so a commit of a few thousand
objects could otherwise hold a CI job or Argo CD's repo server for hours.

The output is what standalone kustomize prints for the same directory with
the same airunway-render release. The Argo CD plugin builds an
application's directory this way when it holds a kustomization.

A kustomization that declares no airunway-render prints its
ModelDeployments unrendered, with a warning (unrendered-models) naming
them; an object of the airunway.ai API that the renderer would not read
(a misspelled group, an unserved version) is an error, as in render.
--ignore-warnings and --warnings-as-errors apply to that warning; the
renderer's own follow the capability file's ` + "`spec.warnings`" + `.`,
		Example: `  # the prod cluster's overlay: the shared models, prod's patches and capability file
  airunway-render build examples/kustomize/clusters/prod

  # the same as one JSON List
  airunway-render build examples/kustomize/clusters/prod -o json

  # outside a Git working tree: allow reads of the whole platform directory
  airunway-render build platform/clusters/prod --root platform`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("takes one directory with a kustomization, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			policy, err := warnings.policy()
			if err != nil {
				return err
			}
			if root == "" {
				root = repositoryRoot(args[0])
			}
			stop := stopAfter(timeout, s.errOut, "build")
			defer stop()
			res, err := buildKustomization(args[0], root)
			var outside *kbuild.OutsideError
			if errors.As(err, &outside) && !cmd.Flags().Changed("root") {
				err = fmt.Errorf("%w (the default root; name a wider one with `--root DIR`)", err)
			}
			if err != nil {
				return fail(err)
			}
			if !res.RunsFunction {
				problems := unrenderedModels(res.YAML).Apply(policy)
				problems.Report(s.errOut, "nothing was written")
				if problems.HasErrors() {
					return exitCode(1)
				}
			}
			if output == "json" {
				return writeBuildJSON(s, res.YAML)
			}
			_, err = s.out.Write(res.YAML)
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	cmd.Flags().DurationVar(&timeout, "timeout", defaultBuildTimeout, "stop the build with an error after this long")
	cmd.Flags().StringVar(&root, "root", "", "the directory nothing outside of which is read (default: the Git working tree holding DIR, else the file system)")
	warnings.add(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// unrenderedModels checks the output of a build that ran no renderer,
// which standalone kustomize prints without a word: its ModelDeployments
// reach the cluster as they are, and a cluster without upstream AI
// Runway's controller runs nothing for them. That is a warning (a cluster
// with the controller wants them so), naming them and how to declare the
// renderer; an object the renderer would not read is an error, as render
// says.
func unrenderedModels(built []byte) diag.List {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(built), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil // kustomize wrote it; nothing reads it differently
	}
	var problems diag.List
	var models []string
	for _, n := range nodes {
		if _, bad := versions.CheckShape(n); bad {
			continue
		}
		if p, bad := versions.CheckAPIVersion(n); bad {
			problems = append(problems, p)
			continue
		}
		if n.GetKind() == hub.KindModelDeployment && strings.HasPrefix(n.GetApiVersion(), hub.Group+"/") {
			models = append(models, fmt.Sprintf("%q", path.Join(n.GetNamespace(), n.GetName())))
		}
	}
	if len(models) > 0 {
		problems.Warnf(diag.UnrenderedModels, "", "the kustomization declares no airunway-render function, so %d ModelDeployment(s) come out unrendered: %s; list the renderer under `transformers:` of the overlay (as examples/kustomize/clusters/dev lists ../../render/exec), or render the output with `airunway-render render -f - --capabilities FILE`", len(models), firstOf(models, 10))
	}
	return problems
}

// firstOf joins up to n names, saying how many more there are.
func firstOf(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// buildKustomization runs kbuild with this binary as the function (with
// args, kbuild.Options.FunctionArgs), reading nothing outside root.
func buildKustomization(dir, root string, args ...string) (kbuild.Result, error) {
	self, err := functionExecutable()
	if err != nil {
		return kbuild.Result{}, fmt.Errorf("cannot find this program to run as the function: %w", err)
	}
	return kbuild.Build(dir, kbuild.Options{Function: self, FunctionArgs: args, Root: root})
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

// defaultBuildTimeout bounds a build's time: far above a real overlay's
// (the examples build in a fraction of a second; 2,000 objects take about
// ten seconds), below what a CI job or Argo CD's repo server should wait.
const defaultBuildTimeout = 2 * time.Minute

// exit ends the process; stopAfter's deadline uses it.
var exit = os.Exit

// buildLiveHeapLimit bounds the live heap of a build while kustomize runs:
// its transformers copy what they set onto every object they select, in
// memory, before any output is charged (a 1 MiB commonAnnotations value
// over 2,000 objects would hold 2 GB). A real build's is far less: 5,000
// ConfigMaps take about 110 MiB.
const buildLiveHeapLimit = 512 << 20

// heapCheckInterval is how often a build's live heap is read; the
// collector updates it at each cycle, and GOMEMLIMIT starts one before the
// heap grows far past it.
const heapCheckInterval = 10 * time.Millisecond

// stopAfter stops the process with an error once d has passed, or once
// the live heap is past buildLiveHeapLimit, unless the returned function is
// called first. kustomize's library cannot be cancelled, so the process
// ends: a build writes nothing before it returns, so nothing half-written
// is left.
func stopAfter(d time.Duration, stderr io.Writer, what string) (stop func()) {
	done := make(chan struct{})
	var t *time.Timer
	if d > 0 {
		t = time.AfterFunc(d, func() {
			fmt.Fprintf(stderr, "[error] the %s took longer than %s and was stopped; a kustomization's objects cost time with the square of their number, so split it (or raise `--timeout`)\n", termsafe.Escape(what), d)
			exit(1)
		})
	}
	go watchHeap(done, stderr, what, buildLiveHeapLimit, exit)
	return func() {
		if t != nil {
			t.Stop()
		}
		close(done)
	}
}

// watchHeap stops the process (exit) with an error when the live heap
// passes limit, until done closes.
func watchHeap(done <-chan struct{}, stderr io.Writer, what string, limit uint64, exit func(int)) {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tick := time.NewTicker(heapCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		metrics.Read(live)
		if live[0].Value.Kind() == metrics.KindUint64 && live[0].Value.Uint64() > limit {
			fmt.Fprintf(stderr, "[error] the %s held more than %s of objects in memory and was stopped; kustomize copies what a transformer sets (commonAnnotations, commonLabels, replacements, patches with a target) onto every object it selects: set it on fewer objects, or split the kustomization\n", termsafe.Escape(what), hub.FormatBytes(int(limit)))
			exit(1)
			return
		}
	}
}

// repositoryRoot is the directory a build of dir may read: the Git working
// tree that holds it (the nearest directory above it with a .git), where a
// kustomization reads its bases from; outside one, the file system, as
// kustomize itself reads (whose loader keeps each file inside its own
// kustomization's directory, symbolic links resolved).
func repositoryRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return d // the file system's root
		}
	}
}
