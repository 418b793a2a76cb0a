package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/gitsnap"
	"github.com/airunway-render/airunway-render/internal/objdiff"
)

// `airunway-render diff` renders the same paths at two git revisions (or a
// revision and the working tree) and shows what changed in the objects bound
// for the cluster: what a reviewer of a GitOps pull request needs to see,
// since the ModelDeployment diff alone hides the provider objects it implies.

type diffOptions struct {
	capabilities string
	format       string
	exitCode     bool
	dir          string
	oldRef       string
	newRef       string // "" is the working tree
	paths        []string
}

func newDiffCommand(s streams) *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff [--capabilities FILE] [--format text|markdown] [--exit-code] [-C DIR] OLD_REF [NEW_REF] -- PATH...",
		Short: "Show how the rendered objects differ between two git revisions",
		Long: `Render PATHs at two git revisions (NEW_REF omitted: the working tree) and
show, object by object, how what the cluster would get differs: as text,
or as Markdown for a pull-request comment. The repository is left as it
was; a revision is read from git's objects (ls-tree, cat-file), with
none of its .gitattributes applied, and no file outside the
repository is read, whatever its symbolic links say.

A PATH that holds a kustomization (a cluster's overlay) is built at each
revision as build builds it, kustomize in process with this binary as the
function, so the diff is of what Argo CD and Flux apply: the overlay's
patches included, its bases found wherever they are in the repository.
The revision's whole tree is then read (at most 1 GiB).`,
		Example: `  # what a pull request changes on the prod cluster, as Argo CD builds it
  airunway-render diff --capabilities clusters/prod/capabilities.yaml origin/main -- clusters/prod

  airunway-render diff --capabilities clusters/prod/capabilities.yaml origin/main -- models/
  airunway-render diff --format markdown --exit-code origin/main HEAD -- models/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args, cmd.ArgsLenAtDash()); err != nil {
				return err
			}
			return runDiff(o, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.capabilities, "capabilities", "", "ClusterCapabilities file, read at each ref (repository path)")
	f.StringVar(&o.format, "format", "text", `output format: "text" or "markdown" (a pull-request comment)`)
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 2 when the rendered objects differ")
	f.StringVarP(&o.dir, "directory", "C", ".", "run as if started in this directory")
	return cmd
}

// complete checks the arguments; dash is where "--" was, -1 when absent.
func (o *diffOptions) complete(args []string, dash int) error {
	if o.format != "text" && o.format != "markdown" {
		return usagef(`--format must be "text" or "markdown", got %q`, o.format)
	}
	if dash < 0 {
		return usagef(`PATHs must follow "--", as in: diff OLD_REF [NEW_REF] -- PATH`)
	}
	refs, paths := args[:dash], args[dash:]
	switch len(refs) {
	case 0:
		return usagef(`OLD_REF is required before "--"`)
	case 1, 2:
	default:
		return usagef(`at most two refs (OLD_REF NEW_REF) must come before "--", got %d: %q`, len(refs), refs)
	}
	if len(paths) == 0 {
		return usagef(`at least one PATH is required after "--"`)
	}
	o.oldRef, o.paths = refs[0], paths
	if len(refs) == 2 {
		o.newRef = refs[1]
	}
	return nil
}

func runDiff(o diffOptions, s streams) error {
	res, failed, err := diffRefs(o, s.errOut)
	if err != nil {
		return err
	}
	if failed {
		return exitCode(1)
	}
	out := res.Text()
	if o.format == "markdown" {
		out = res.Markdown()
	}
	if _, err := io.WriteString(s.out, out); err != nil {
		return err
	}
	if o.exitCode && res.Differs() {
		return exitCode(exitDifferent)
	}
	return nil
}

// diffRefs renders both sides. failed means render problems were printed
// on stderr; err is any other failure.
func diffRefs(o diffOptions, stderr io.Writer) (result *objdiff.Result, failed bool, err error) {
	sides, err := openSides(o.dir, o.capabilities, o.paths, "OLD_REF", o.oldRef, "NEW_REF", o.newRef, "NEW_REF (the working tree)")
	if err != nil {
		return nil, false, err
	}
	oldObjs, oldFailed, err := renderSide(sides.repo, sides.old, sides.caps, sides.oldPaths, stderr)
	if err != nil {
		return nil, false, err
	}
	newObjs, newFailed, err := renderSide(sides.repo, sides.new, sides.caps, sides.newPaths, stderr)
	if err != nil || oldFailed || newFailed {
		return nil, oldFailed || newFailed, err
	}
	changes, err := objdiff.Compare(oldObjs, newObjs)
	if err != nil {
		return nil, false, err
	}
	return &objdiff.Result{Old: sides.old.Label(), New: sides.new.Label(), Capabilities: sides.caps, Changes: changes}, false, nil
}

// refSides are the two sides of a comparison in one repository: the
// capability file's repository path and the PATHs present at each side.
type refSides struct {
	repo               *gitsnap.Repo
	caps               string
	old, new           gitsnap.Side
	oldPaths, newPaths []string
}

// openSides opens the repository at dir, turns the capability file (may
// be "") and the PATHs given into repository paths, and resolves the refs
// (newRef "": the working tree, described as workingTree). The roles name
// the refs in messages.
func openSides(dir, capsFile string, given []string, oldRole, oldRef, newRole, newRef, workingTree string) (*refSides, error) {
	repo, err := gitsnap.Open(dir)
	if err != nil {
		return nil, err
	}
	s := &refSides{repo: repo}
	if capsFile != "" {
		if s.caps, err = repo.RelPath(capsFile); err != nil {
			return nil, fmt.Errorf("--capabilities %q %v", capsFile, err)
		}
	}
	paths := make([]string, len(given))
	for i, p := range given {
		if paths[i], err = repo.RelPath(p); err != nil {
			return nil, fmt.Errorf("PATH %q %v", p, err)
		}
	}
	if s.old, err = repo.Resolve(oldRole, oldRef); err != nil {
		return nil, err
	}
	s.new = gitsnap.WorkingTree(workingTree)
	if newRef != "" {
		if s.new, err = repo.Resolve(newRole, newRef); err != nil {
			return nil, err
		}
	}
	s.oldPaths, s.newPaths, err = presentPaths(repo, s.old, s.new, s.caps, paths, given)
	return s, err
}

// presentPaths returns the PATHs that exist at each side. A PATH at one side
// only is a model added or removed; at neither, a typo. The capability file
// must exist at both sides: without it a side would silently render with
// other capabilities.
func presentPaths(repo *gitsnap.Repo, oldSide, newSide gitsnap.Side, caps string, paths, given []string) (oldPaths, newPaths []string, err error) {
	query := append([]string{caps}, paths...)
	oldHas, err := repo.Exists(oldSide, query)
	if err != nil {
		return nil, nil, err
	}
	newHas, err := repo.Exists(newSide, query)
	if err != nil {
		return nil, nil, err
	}
	if caps != "" {
		for _, side := range []struct {
			side gitsnap.Side
			has  bool
		}{{oldSide, oldHas[0]}, {newSide, newHas[0]}} {
			if !side.has {
				return nil, nil, fmt.Errorf("--capabilities %q must exist at both sides; it is missing at %s", caps, side.side.Desc)
			}
		}
	}
	for i, p := range paths {
		if !oldHas[i+1] && !newHas[i+1] {
			return nil, nil, fmt.Errorf("PATH %q must exist at %s or at %s; it exists at neither", given[i], oldSide.Desc, newSide.Desc)
		}
		if oldHas[i+1] {
			oldPaths = append(oldPaths, p)
		}
		if newHas[i+1] {
			newPaths = append(newPaths, p)
		}
	}
	return oldPaths, newPaths, nil
}

// printSide prints a side's problems with the side in front of each line.
func printSide(w io.Writer, side gitsnap.Side, text string) {
	for _, line := range strings.SplitAfter(text, "\n") {
		if line != "" {
			fmt.Fprintf(w, "%s: %s", side.Desc, line)
		}
	}
}

// renderSide renders one side the way `render` does, reading through the
// side's os.Root. Problems are printed on stderr with the side in front of
// each line, and name files by their repository paths; failed reports
// errors among them.
func renderSide(repo *gitsnap.Repo, side gitsnap.Side, caps string, paths []string, stderr io.Writer) (objs []*yaml.RNode, failed bool, err error) {
	take := paths
	if caps != "" {
		take = append([]string{caps}, paths...)
	}
	snap, err := takeSide(repo, side, take)
	if err != nil {
		return nil, false, err
	}
	defer func() { err = errors.Join(err, snap.Close()) }()
	src, problems := withOverlaysBuilt(rootFiles{root: snap.Root, dir: "."}, paths, snapshotDirs(snap), stderr)
	if !problems.HasErrors() {
		objs, problems = renderFiles(src, caps, paths)
	}
	var b strings.Builder
	problems.Report(&b, "nothing was rendered")
	printSide(stderr, side, b.String())
	return objs, problems.HasErrors(), nil
}
