package fn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// `airunway-render preview` renders the same paths against two capability
// files, the cluster before and after an upgrade (an operator release, the
// Inference Extension's API version), and shows what changes per object.
// It flags what the cluster will not take as an update: a field the API
// server or the operator's webhook refuses to change, an object whose API
// group changes (deleted and created anew), and what restarts model servers.

// exitBreaking is the --exit-code status when a change is breaking; 2
// (exitDifferent) when objects only differ.
const exitBreaking = 3

type previewArgs struct {
	from, to string
	format   string
	exitCode bool
	paths    []string
}

func runPreview(args []string, stdout, stderr io.Writer) int {
	a, err := parsePreviewArgs(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "airunway-render preview: %v\n\n%s", err, usage)
		return 1
	}
	var sides [2][]*yaml.RNode
	var warned [2]diag.List
	failed := false
	for i, caps := range []string{a.from, a.to} {
		objs, problems := renderFiles(caps, a.paths)
		warned[i] = problems
		var shown bytes.Buffer // errors and warnings; info stays quiet
		report(&shown, problems)
		if shown.Len() > 0 {
			fmt.Fprintf(stderr, "with %s:\n%s", caps, shown.Bytes())
		}
		failed = failed || problems.HasErrors()
		sides[i] = objs
	}
	if failed {
		return 1
	}
	changes, err := compareObjects(sides[0], sides[1])
	if err != nil {
		fmt.Fprintf(stderr, "airunway-render preview: %v\n", err)
		return 1
	}
	res := &diffResult{old: diffSide{ref: a.from}, new: diffSide{ref: a.to}, changes: changes, command: "airunway-render preview"}
	findings := append(upgradeNotes(a.from, a.to), objectFindings(changes)...)
	findings = append(findings, newWarnings(warned[0], warned[1])...)
	out := res.text() + findingsText(findings)
	if a.format == "markdown" {
		out = res.markdown() + findingsMarkdown(findings)
	}
	if _, err := io.WriteString(stdout, out); err != nil {
		fmt.Fprintf(stderr, "airunway-render preview: %v\n", err)
		return 1
	}
	switch {
	case !a.exitCode:
		return 0
	case slices.ContainsFunc(findings, func(f finding) bool { return f.breaking }):
		return exitBreaking
	case res.differs():
		return exitDifferent
	}
	return 0
}

func parsePreviewArgs(args []string, stderr io.Writer) (previewArgs, error) {
	var a previewArgs
	flags := pflag.NewFlagSet("preview", pflag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&a.from, "from", "", "ClusterCapabilities file of the cluster as it is")
	flags.StringVar(&a.to, "to", "", "ClusterCapabilities file of the cluster after the upgrade")
	flags.StringVar(&a.format, "format", "text", `output format: "text" or "markdown" (a pull-request comment)`)
	flags.BoolVar(&a.exitCode, "exit-code", false, "exit 2 when objects differ, 3 when a change is breaking")
	if err := flags.Parse(args); err != nil {
		return a, err
	}
	switch {
	case a.from == "" || a.to == "":
		return a, errors.New("`--from` and `--to` must both name a capability file")
	case a.format != "text" && a.format != "markdown":
		return a, fmt.Errorf("`--format` must be \"text\" or \"markdown\", got %q", a.format)
	case flags.NArg() == 0:
		return a, errors.New("at least one PATH is required")
	}
	a.paths = flags.Args()
	return a, nil
}

// finding is one thing a reviewer of the upgrade must know.
type finding struct {
	object   string // kind/namespace/name; "" for the cluster as a whole
	breaking bool   // the cluster refuses the update, or the object is recreated
	warning  bool   // a warning the upgrade brings, e.g. a field deprecated by the new release
	message  string
}

// newWarnings lists the warnings rendering gives after the upgrade and not
// before: a release that deprecates a field the models set warns here, and
// the reviewer of a pull request reads it in the preview, not only in the
// job's log.
func newWarnings(before, after diag.List) []finding {
	seen := map[string]bool{}
	for _, p := range before {
		seen[p.String()] = true
	}
	var out []finding
	for _, p := range after.Sorted() {
		if p.Severity != diag.Warning || seen[p.String()] {
			continue
		}
		r := p.Resource
		r.APIVersion = ""
		msg := p.Message
		if p.Field != "" {
			msg = "`" + p.Field + "` " + msg
		}
		out = append(out, finding{object: r.String(), warning: true, message: msg})
	}
	return out
}

// immutable lists, per kind, the fields the API server or the operator's
// admission webhook refuses to change: such a change fails to apply until
// the object is deleted and created again.
var immutable = map[string][]immutableField{
	"Deployment":            {{path: "spec.selector", why: "a Deployment's selector is immutable"}},
	"StatefulSet":           {{path: "spec.selector", why: "a StatefulSet's selector is immutable"}, {path: "spec.serviceName", why: "a StatefulSet's serviceName is immutable"}, {path: "spec.volumeClaimTemplates", why: "a StatefulSet's volumeClaimTemplates are immutable"}},
	"Job":                   {{path: "spec.template", why: "a Job's pod template is immutable"}, {path: "spec.selector", why: "a Job's selector is immutable"}},
	"PersistentVolumeClaim": {{path: "spec.accessModes", why: "a bound claim's accessModes are immutable"}, {path: "spec.storageClassName", why: "a claim's storageClassName is immutable"}},
	"Service":               {{path: "spec.clusterIP", why: "a Service's clusterIP is immutable"}},
	// KAITO's webhook (v1beta1): labelSelector is immutable, count and a
	// set instanceType cannot change, and inference and tuning cannot be
	// swapped (research/provider-crds.md 1.1).
	"Workspace": {
		{path: "resource.labelSelector", why: "KAITO's webhook refuses to change a Workspace's `resource.labelSelector`"},
		{path: "resource.count", why: "KAITO's webhook refuses to change a Workspace's `resource.count`"},
		{path: "resource.instanceType", why: "KAITO's webhook refuses to change a Workspace's `resource.instanceType` once set", onlyWhenSet: true},
	},
}

// exclusive lists, per kind, two fields of which an object has one for
// good: switching from one to the other is refused.
var exclusive = map[string][2]string{"Workspace": {"inference", "tuning"}}

type immutableField struct {
	path string
	why  string
	// onlyWhenSet: adding the field to an object that lacked it is allowed.
	onlyWhenSet bool
}

// restarts names, per kind, the fields whose change replaces the model
// server's pods (not breaking, but GPUs reload weights and, during a
// rolling update, need room for the new pods).
var restarts = map[string][]string{
	"Deployment":            {"spec.template"},
	"StatefulSet":           {"spec.template"},
	"LeaderWorkerSet":       {"spec.leaderWorkerTemplate"},
	"Workspace":             {"inference"},
	"RayService":            {"spec.rayClusterConfig"},
	"DynamoGraphDeployment": {"spec.services"},
}

// objectFindings checks every changed object for immutable fields and pod
// restarts, and pairs removed and added objects that differ only in their
// API group: the new one is a different resource, so the old is deleted.
func objectFindings(changes []objectChange) []finding {
	var out []finding
	for _, c := range changes {
		if c.op != '~' {
			continue
		}
		oldObj, newObj := yaml.MustParse(c.oldYAML), yaml.MustParse(c.newYAML)
		before := len(out)
		for _, f := range immutable[c.kind] {
			before, after := fieldText(oldObj, f.path), fieldText(newObj, f.path)
			if before == after || (f.onlyWhenSet && before == "") {
				continue
			}
			out = append(out, finding{object: c.id(), breaking: true,
				message: fmt.Sprintf("`%s` changes, and %s: the update fails until the object is deleted and created again (delete it, or let your GitOps tool replace it)", f.path, f.why)})
		}
		if pair, ok := exclusive[c.kind]; ok && switches(oldObj, newObj, pair) {
			out = append(out, finding{object: c.id(), breaking: true,
				message: fmt.Sprintf("switches between `%s` and `%s`, which the operator refuses once either is set: the object must be deleted and created again", pair[0], pair[1])})
		}
		if len(out) > before {
			continue // recreated anyway: its restart says nothing more
		}
		for _, p := range restarts[c.kind] {
			if fieldText(oldObj, p) != fieldText(newObj, p) {
				out = append(out, finding{object: c.id(), message: fmt.Sprintf("`%s` changes: its pods are replaced (a model server loads its model again)", p)})
				break
			}
		}
	}
	removed := map[string]objectChange{}
	for _, c := range changes {
		if c.op == '-' {
			removed[c.kind+"/"+c.ns+"/"+c.name] = c
		}
	}
	for _, c := range changes {
		old, ok := removed[c.kind+"/"+c.ns+"/"+c.name]
		if c.op != '+' || !ok || group(old.apiVersion) == group(c.apiVersion) {
			continue
		}
		out = append(out, finding{object: c.id(), breaking: true,
			message: fmt.Sprintf("moves from %s to %s, a different API group: the %s is deleted and created anew, and what routes to it switches over (apply the new one before pruning the old)", old.apiVersion, c.apiVersion, c.kind)})
	}
	return out
}

// switches reports an object that had one of the pair and has only the
// other now.
func switches(oldObj, newObj *yaml.RNode, pair [2]string) bool {
	has := func(o *yaml.RNode, f string) bool { return fieldText(o, f) != "" }
	return (has(oldObj, pair[0]) && !has(newObj, pair[0]) && has(newObj, pair[1])) ||
		(has(oldObj, pair[1]) && !has(newObj, pair[1]) && has(newObj, pair[0]))
}

func group(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

// fieldText is the YAML of the field at a dotted path, "" when absent.
func fieldText(obj *yaml.RNode, path string) string {
	n, err := obj.Pipe(yaml.Lookup(strings.Split(path, ".")...))
	if err != nil || n == nil {
		return ""
	}
	return n.MustString()
}

// upgradeNotes reports what an operator upgrade does to the objects it
// already runs, beyond what the rendered objects show: facts of the
// operators' releases, which the providers that know them state
// (providers.UpgradeNoter).
func upgradeNotes(from, to string) []finding {
	before, err1 := providerVersions(from)
	after, err2 := providerVersions(to)
	if err1 != nil || err2 != nil {
		return nil // the render already reported the file
	}
	var out []finding
	registry := builtin.ByName()
	for _, name := range slices.Sorted(maps.Keys(registry)) {
		noter, ok := registry[name].(providers.UpgradeNoter)
		b, a := before[name], after[name]
		if !ok || b == nil || a == nil {
			continue
		}
		for _, n := range noter.UpgradeNotes(b, a) {
			out = append(out, finding{breaking: n.Breaking, message: n.Message})
		}
	}
	return out
}

// providerVersions reads the declared release of each provider.
func providerVersions(capsFile string) (map[string]*version.Version, error) {
	caps, l := readCapabilities(capsFile)
	if l.HasErrors() {
		return nil, errors.New(l.Sorted()[0].Message)
	}
	out := map[string]*version.Version{}
	for _, p := range caps.Providers {
		if v, err := hub.ParseRelease(p.Version); err == nil {
			out[p.Name] = v
		}
	}
	return out, nil
}

func findingsText(fs []finding) string {
	changes, warnings := splitFindings(fs)
	var b strings.Builder
	if len(changes) == 0 {
		b.WriteString("No breaking change and no restart.\n")
	} else {
		b.WriteString("\n")
	}
	for _, f := range changes {
		b.WriteString(findingLine(f, f.object) + "\n")
	}
	if len(warnings) > 0 {
		b.WriteString("\n")
	}
	for _, f := range warnings {
		b.WriteString(findingLine(f, f.object) + "\n")
	}
	return b.String()
}

// splitFindings separates what the cluster will not take in place from
// the new warnings.
func splitFindings(fs []finding) (changes, warnings []finding) {
	for _, f := range fs {
		if f.warning {
			warnings = append(warnings, f)
		} else {
			changes = append(changes, f)
		}
	}
	return changes, warnings
}

func findingLine(f finding, object string) string {
	word := "restart"
	switch {
	case f.breaking:
		word = "BREAKING"
	case f.warning:
		word = "warning"
	}
	if object == "" {
		return word + ": " + f.message
	}
	return word + ": " + object + ": " + f.message
}

func findingsMarkdown(fs []finding) string {
	changes, warnings := splitFindings(fs)
	var b strings.Builder
	if len(changes) == 0 {
		b.WriteString("\nNo breaking change and no restart.\n")
	} else {
		b.WriteString("\n#### What the cluster will not take in place\n\n")
		writeFindingsMarkdown(&b, changes)
	}
	if len(warnings) > 0 {
		b.WriteString("\n#### New warnings\n\n")
		writeFindingsMarkdown(&b, warnings)
	}
	return b.String()
}

func writeFindingsMarkdown(b *strings.Builder, fs []finding) {
	for _, f := range fs {
		obj := ""
		if f.object != "" {
			obj = mdCode(f.object)
		}
		b.WriteString("- " + findingLine(f, obj) + "\n")
	}
}
