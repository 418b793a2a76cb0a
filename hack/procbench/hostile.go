package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/benchdata"
	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// hostileWorkload is an input a repository can hand the renderer: at the
// input budget's limits (internal/budget), the most it reads without
// refusing anything, or just past one, which must be refused at once.
type hostileWorkload struct {
	name string
	// objects are the workload's objects as YAML documents, without
	// separators: the files `render` reads, and the function's items.
	objects func() []string
	// refused are parts of the errors the entry points may print for it,
	// one of which each must; none when the input is within every limit
	// and renders.
	refused []string
}

// configMap is a ConfigMap named name with more YAML appended (indented by
// nothing: top-level fields).
func configMap(name, more string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n" + more
}

// denseList is a flow list of n ones: one node per two bytes, the densest
// a pass-through object is written in practice.
func denseList(n int) string {
	return "[" + strings.Repeat("1,", n-1) + "1]"
}

// aliasObject is a ConfigMap of a few hundred bytes whose aliases expand
// it to just under yamlerr.MaxExpandedNodes nodes: the most one object may
// stand for.
func aliasObject(name string) string {
	tree := func(top int) string {
		s := "  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n"
		for i := 1; i <= 3; i++ {
			p := fmt.Sprintf("*l%d", i-1)
			s += fmt.Sprintf("  l%d: &l%d [%s]\n", i, i, strings.Repeat(p+", ", 9)+p)
		}
		// l3 stands for about 12,000 nodes.
		return configMap(name, "data:\n"+s+"  top: ["+strings.Repeat("*l3, ", top-1)+"*l3]\n")
	}
	top := 1
	for objectNodes(tree(top+1)) <= mostObjectNodes {
		top++
	}
	return tree(top)
}

// objectNodes is what the budget charges for one object: its nodes with
// aliases expanded.
func objectNodes(doc string) int {
	var n yaml.Node
	if err := yaml.NewDecoder(strings.NewReader(doc)).Decode(&n); err != nil {
		panic(err)
	}
	return yamlerr.ExpandedNodes(n.Content[0])
}

// repeat makes count objects from one, named by their number.
func repeat(count int, object func(name string) string) []string {
	out := make([]string, count)
	for i := range out {
		out[i] = object(fmt.Sprintf("c%07d", i))
	}
	return out
}

// fill is as many objects as fit in nodes (counted as the budget counts
// them) and size bytes of a ResourceList, each made by object.
func fill(nodes, size int, object func(name string) string) []string {
	one := object("c0000000")
	count := min(nodes/objectNodes(one), size/(len(one)+itemOverhead(one)))
	return repeat(count, object)
}

// mostObjectNodes is the most nodes an object may have as it is written:
// the CLI adds its path annotation (up to six nodes) before render checks
// each object.
const mostObjectNodes = yamlerr.MaxExpandedNodes - 6

// denseObjects are objects of dense YAML, each of the most nodes an
// object may have but the last, which takes what is left: nodes in all.
func denseObjects(nodes int) []string {
	object := func(name string, list int) string {
		return configMap(name, "data: {v: "+denseList(list)+"}\n")
	}
	overhead := objectNodes(object("c0000000", 1)) - 1
	var out []string
	for nodes > overhead {
		list := min(mostObjectNodes, nodes) - overhead
		out = append(out, object(fmt.Sprintf("c%07d", len(out)), list))
		nodes -= list + overhead
	}
	return out
}

// itemOverhead is what an object costs in a ResourceList beyond its own
// bytes: the two characters before each of its lines. (In a stream of
// files, "---\n" between objects, less.)
func itemOverhead(object string) int { return 2 * strings.Count(object, "\n") }

// The room the workloads at the limits leave: the function's config (the
// capability file) is one more document of the run, and a little for its
// nodes and bytes.
const (
	roomDocuments = 2
	roomNodes     = 1000
	roomBytes     = 64 << 10
)

func hostileWorkloads() []hostileWorkload {
	tiny := func(name string) string { return configMap(name, "") }
	// An object of the most nodes an object may have, in dense YAML.
	denseObject := func(name string) string {
		return configMap(name, "data: {v: "+denseList(mostObjectNodes-20)+"}\n")
	}
	return []hostileWorkload{
		{name: "documents: the most, each the smallest shape", objects: func() []string {
			return repeat(budget.MaxDocuments-roomDocuments, tiny)
		}},
		{name: "nodes: the most, in dense YAML (objects of the most nodes)", objects: func() []string {
			return denseObjects(budget.MaxNodes - roomNodes)
		}},
		{name: "bytes: the most, in strings", objects: func() []string {
			blob := func(name string) string {
				return configMap(name, "data: {blob: "+strings.Repeat("x", 1<<20)+"}\n")
			}
			return fill(budget.MaxNodes, budget.MaxBytes-roomBytes, blob)
		}},
		{name: "aliases: objects just under the alias limit, as many as the nodes allow", objects: func() []string {
			return fill(budget.MaxNodes-roomNodes, budget.MaxBytes, aliasObject)
		}},
		{name: "all at once: the most documents, nodes and bytes", objects: func() []string {
			count := budget.MaxDocuments - roomDocuments
			nodesEach := (budget.MaxNodes - roomNodes) / count
			// The output holds the same objects, and may be no larger than
			// the input's bytes either (budget.MaxOutputBytes): written
			// again, these take up to 2% more bytes than they came in.
			bytesEach := (budget.MaxBytes - budget.MaxBytes/32 - roomBytes) / count
			object := func(name string, list int) string {
				head := configMap(name, "data: {v: "+denseList(list)+", pad: ")
				return head + strings.Repeat("x", max(bytesEach-len(head)-len("}\n")-itemOverhead(head+"}\n"), 1)) + "}\n"
			}
			list := nodesEach - (objectNodes(object("c0000000", 1)) - 1)
			return repeat(count, func(name string) string { return object(name, list) })
		}},
		{name: "past the documents: the issue's 20 MB of tiny documents", objects: func() []string {
			return repeat(20_000_000/len(tiny("c0000000")+"---\n"), tiny)
			// The function refuses the ResourceList by its nodes, counted
			// before it is parsed.
		}, refused: []string{"YAML documents", "YAML nodes"}},
		{name: "past the nodes, in dense YAML", objects: func() []string {
			return fill(budget.MaxNodes+budget.MaxNodes/2, budget.MaxBytes-roomBytes, denseObject)
		}, refused: []string{"YAML nodes"}},
		{name: "past the nodes of an object: a document of the largest size, in dense YAML", objects: func() []string {
			return []string{configMap("dense", "data: {v: "+denseList((budget.MaxDocumentBytes-100)/2)+"}\n")}
		}, refused: []string{"YAML nodes"}},
		{name: "past the size of a document, in dense YAML", objects: func() []string {
			return []string{configMap("dense", "data: {v: "+denseList(budget.MaxDocumentBytes/2)+"}\n")}
		}, refused: []string{"a document must be at most", "YAML nodes"}},
		{name: "past the bytes", objects: func() []string {
			return []string{configMap("big", "data: {blob: "+strings.Repeat("x", budget.MaxBytes)+"}\n")}
		}, refused: []string{hub.FormatBytes(budget.MaxBytes)}},
	}
}

// hostileResult is one entry point's run over a workload.
type hostileResult struct {
	sample
	ok     bool
	stderr string
}

// hostile runs every hostile workload through `render` and the function,
// once each (peak RSS varies by a few percent between runs), and prints a
// table of their cost. Each run must end as its workload says: rendered,
// or refused with the error expected.
func hostile(out io.Writer, work, bin string) error {
	dir := filepath.Join(work, "hostile")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	caps := filepath.Join(dir, "capabilities.yaml")
	if err := os.WriteFile(caps, []byte(benchdata.Capabilities), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nInputs at the input budget's limits (%d documents, %d nodes, %s; one document at most %s), and past them; one run each.\n\n",
		budget.MaxDocuments, budget.MaxNodes, hub.FormatBytes(budget.MaxBytes), hub.FormatBytes(budget.MaxDocumentBytes))
	fmt.Fprintln(out, "| workload | documents | nodes | input | `render` | wall | peak RSS | function | wall | peak RSS |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---|---:|---:|---|---:|---:|")
	file := filepath.Join(dir, "input.yaml")
	list := filepath.Join(dir, "input-list.yaml")
	for _, w := range hostileWorkloads() {
		in, err := writeApart(w.name, file, list)
		if err != nil {
			return err
		}
		r, err := runHostile(os.DevNull, "", bin, "render", "--capabilities", caps, "-f", file)
		if err != nil {
			return err
		}
		f, err := runHostile(os.DevNull, list, bin)
		if err != nil {
			return err
		}
		for _, res := range []hostileResult{r, f} {
			if err := w.check(res); err != nil {
				return err
			}
		}
		fmt.Fprintf(out, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", w.name, in.documents, nodeCount(in.nodes), mib(in.bytes),
			r.outcome(), ms(r.wall), mib(r.rssBytes), f.outcome(), ms(f.wall), mib(f.rssBytes))
	}
	fmt.Fprintln(out, "\nNodes as the budget counts them: each object's, aliases expanded.")
	return nil
}

// hostileInput is what a workload's files hold.
type hostileInput struct {
	documents, nodes int
	bytes            int64
}

// writeApart writes the workload named in a process of its own (this
// program, with -write-hostile): on Linux a child's peak RSS starts from
// the highest its parent ever had (exec folds the parent's high-water mark
// into it), so the benchmark must never hold a workload itself.
func writeApart(name, file, list string) (hostileInput, error) {
	self, err := os.Executable()
	if err != nil {
		return hostileInput{}, err
	}
	cmd := exec.Command(self, "-write-hostile", name, "-file", file, "-list", list)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return hostileInput{}, fmt.Errorf("writing %q: %v", name, err)
	}
	var in hostileInput
	_, err = fmt.Sscan(string(out), &in.documents, &in.nodes, &in.bytes)
	return in, err
}

// writeNamed is -write-hostile: it writes the workload named and prints
// what it holds.
func writeNamed(name, file, list string, out io.Writer) error {
	for _, w := range hostileWorkloads() {
		if w.name == name {
			in, err := writeHostile(w, file, list)
			if err == nil {
				_, err = fmt.Fprintln(out, in.documents, in.nodes, in.bytes)
			}
			return err
		}
	}
	return fmt.Errorf("no workload %q", name)
}

// writeHostile writes a workload as a stream of documents (file) and as a
// ResourceList (list).
func writeHostile(w hostileWorkload, file, list string) (hostileInput, error) {
	objects := w.objects()
	in := hostileInput{documents: len(objects)}
	for _, o := range objects {
		if in.nodes > budget.MaxNodes*2 {
			break
		}
		in.nodes += objectNodes(o)
	}
	stream := []byte(strings.Join(objects, "---\n"))
	in.bytes = int64(len(stream))
	if err := os.WriteFile(file, stream, 0o644); err != nil {
		return in, err
	}
	return in, os.WriteFile(list, resourceList(objects), 0o644)
}

func nodeCount(n int) string {
	if n > budget.MaxNodes*2 {
		return "more than " + fmt.Sprint(budget.MaxNodes*2)
	}
	return fmt.Sprint(n)
}

// check holds a run to what its workload expects.
func (w hostileWorkload) check(res hostileResult) error {
	switch {
	case w.refused == nil && !res.ok:
		return fmt.Errorf("%s: the run failed:\n%s", w.name, firstLines(res.stderr))
	case w.refused != nil && res.ok:
		return fmt.Errorf("%s: the run succeeded; it must be refused", w.name)
	case w.refused != nil && !slices.ContainsFunc(w.refused, func(s string) bool { return strings.Contains(res.stderr, s) }):
		return fmt.Errorf("%s: want an error with one of %q, got:\n%s", w.name, w.refused, firstLines(res.stderr))
	}
	return nil
}

func (r hostileResult) outcome() string {
	if r.ok {
		return "rendered"
	}
	return "refused"
}

func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	return strings.Join(lines[:min(len(lines), 3)], "\n")
}

// resourceList is the function's input: the objects as items, the
// workload's capability file as the function config.
func resourceList(objects []string) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, o := range objects {
		for j, line := range strings.SplitAfter(strings.TrimSuffix(o, "\n"), "\n") {
			b.WriteString(map[bool]string{true: "- ", false: "  "}[j == 0])
			b.WriteString(line)
		}
		b.WriteString("\n")
	}
	b.WriteString("functionConfig:\n")
	for _, line := range strings.SplitAfter(strings.TrimSuffix(benchdata.Capabilities, "\n"), "\n") {
		b.WriteString("  " + line)
	}
	b.WriteString("\n")
	return b.Bytes()
}

// runHostile runs argv once, with stdin from input when set, and reports
// whether it succeeded; exit code 1 is a refusal, not an error of the
// benchmark.
func runHostile(output, input string, argv ...string) (hostileResult, error) {
	s, stderr, err := execute(output, input, "", argv...)
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
		return hostileResult{}, fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, stderr)
	}
	return hostileResult{sample: s, ok: err == nil, stderr: stderr}, nil
}
