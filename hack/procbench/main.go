// Command procbench measures the KRM function as users run it: a process
// reading a ResourceList on stdin and writing one on stdout. For each size
// of the benchmark workload (internal/benchdata: ModelDeployments spread
// over the five providers) it runs the function binary several times and
// reports the median wall time, CPU time (user + system) and peak RSS; it
// then runs the floor (hack/procbench/noop: kyaml reading and writing the
// same output ResourceList, nothing else) the same way and reports the
// ratio. At the comparison sizes it also times `kubectl kustomize` of the
// rendered objects and `kpt fn eval` with the function. Last, it runs the
// inputs at the input budget's limits, and just past them, through
// `render` and the function (hostile.go): their peak RSS is the memory
// bound docs/security.md states.
//
// make bench runs it; BENCHMARKS.md explains the numbers.
package main

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airunway-render/airunway-render/internal/benchdata"
)

func main() {
	bin := flag.String("bin", "bin/airunway-render", "the function binary")
	floor := flag.String("floor", "bin/kyaml-noop", "the floor binary (hack/procbench/noop)")
	sizes := flag.String("sizes", "1,100,1000,10000", "ModelDeployments per ResourceList")
	compare := flag.String("compare", "1000", "sizes at which to time kubectl kustomize and kpt fn eval (empty: none)")
	work := flag.String("work", "", "directory for inputs and outputs (default: a temporary one, removed)")
	hostileToo := flag.Bool("hostile", true, "also run the inputs at the input budget's limits through `render` and the function")
	cliToo := flag.Bool("cli", true, "also measure `plan --fleet`, `render` and `plan` at scale")
	writeWorkload := flag.String("write-hostile", "", "only write the hostile workload of this name to -file and -list (the benchmark runs itself so)")
	file := flag.String("file", "", "with -write-hostile: the stream of documents to write")
	list := flag.String("list", "", "with -write-hostile: the ResourceList to write")
	flag.StringVar(&runner, "runner", runner, "the runner that starts each measured program (hack/procbench/runner)")
	flag.Parse()
	if *writeWorkload != "" {
		if err := writeNamed(*writeWorkload, *file, *list, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "procbench:", err)
			os.Exit(1)
		}
		return
	}
	err := run(*bin, *floor, *sizes, *compare, *work, os.Stdout)
	if err == nil && *cliToo {
		err = inWork(*work, func(dir string) error { return commandLine(os.Stdout, dir, *bin) })
	}
	if err == nil && *hostileToo {
		err = hostileIn(*work, *bin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "procbench:", err)
		os.Exit(1)
	}
}

// hostileIn runs the hostile workloads in work (inWork).
func hostileIn(work, bin string, out io.Writer) error {
	return inWork(work, func(dir string) error { return hostile(out, dir, bin) })
}

// inWork runs f in work, or in a temporary directory, removed, when work
// is empty.
func inWork(work string, f func(dir string) error) error {
	if work == "" {
		dir, err := os.MkdirTemp("", "procbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	return f(work)
}

// sample is one process run.
type sample struct {
	wall, cpu time.Duration
	rssBytes  int64
}

// measurement is the median of several runs.
type measurement struct {
	runs int
	sample
}

func run(bin, floor, sizeList, compareList, work string, out io.Writer) error {
	ns, err := parseSizes(sizeList)
	if err != nil {
		return err
	}
	compareAt, err := parseSizes(compareList)
	if err != nil {
		return err
	}
	if work == "" {
		if work, err = os.MkdirTemp("", "procbench-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(out, "Whole-process runs of %s; floor: %s over the function's output.\n\n", bin, floor)
	fmt.Fprintln(out, "| models | output | function wall | CPU | peak RSS | floor wall | CPU | peak RSS | function / floor (wall, CPU, RSS) |")
	fmt.Fprintln(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	fn := map[int]measurement{}
	for _, n := range ns {
		input := filepath.Join(work, fmt.Sprintf("in-%d.yaml", n))
		if err := os.WriteFile(input, benchdata.ResourceList(n), 0o644); err != nil {
			return err
		}
		output := filepath.Join(work, fmt.Sprintf("out-%d.yaml", n))
		f, err := measure(runsFor(n), output, input, bin)
		if err != nil {
			return err
		}
		floorOut := filepath.Join(work, fmt.Sprintf("floor-%d.yaml", n))
		fl, err := measure(runsFor(n), floorOut, output, floor)
		if err != nil {
			return err
		}
		if err := sameBytes(output, floorOut); err != nil {
			return err
		}
		size, objects, err := outputSize(output)
		if err != nil {
			return err
		}
		fn[n] = f
		fmt.Fprintf(out, "| %d | %s, %d objects | %s | %s | %s | %s | %s | %s | %.2f×, %.2f×, %.2f× |\n", n, mib(size), objects,
			ms(f.wall), ms(f.cpu), mib(f.rssBytes), ms(fl.wall), ms(fl.cpu), mib(fl.rssBytes),
			ratio(f.wall, fl.wall), ratio(f.cpu, fl.cpu), float64(f.rssBytes)/float64(fl.rssBytes))
	}
	fmt.Fprintf(out, "\nMedians of %s runs each (after one warm-up run).\n", runsNote(ns))
	targets(out, fn)
	for _, n := range compareAt {
		if err := comparisons(out, work, bin, n, fn[n]); err != nil {
			return err
		}
	}
	return nil
}

func parseSizes(list string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("size %q must be a positive number", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// runsFor is how many runs a size gets: short runs vary most. (Variables,
// so that the test's smoke run of the whole benchmark takes one of each.)
var runsFor = func(n int) int {
	switch {
	case n <= 1:
		return 21
	case n <= 100:
		return 11
	case n <= 1000:
		return 5
	}
	return 3
}

func runsNote(ns []int) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, fmt.Sprintf("%d (%d models)", runsFor(n), n))
	}
	return strings.Join(parts, ", ")
}

// measure runs argv with stdin from input and stdout to output, once to
// warm the page cache and then runs times, and returns the medians.
func measure(runs int, output, input string, argv ...string) (measurement, error) {
	var samples []sample
	for i := 0; i <= runs; i++ {
		s, err := once(output, input, "", argv...)
		if err != nil {
			return measurement{}, err
		}
		if i > 0 {
			samples = append(samples, s)
		}
	}
	return median(samples), nil
}

// once runs argv once, in dir when set; a failure is an error.
func once(output, input, dir string, argv ...string) (sample, error) {
	s, stderr, err := execute(output, input, dir, argv...)
	if err != nil {
		return sample{}, fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, stderr)
	}
	return s, nil
}

// execute runs argv once, in dir when set, with stdin from input and
// stdout to output when they are set, and returns what the run cost, its
// stderr and its error (an *exec.ExitError when it exited non-zero). It
// runs argv through the runner, a small program of its own, not from this
// process: Linux counts the memory of the process that starts a program
// in the program's peak RSS (the kernel carries the old address space's
// high-water mark over exec), and this process holds outputs of tens of
// MiB, which showed as the peak of every small run measured after them.
func execute(output, input, dir string, argv ...string) (sample, string, error) {
	cmd := exec.Command(runner, argv...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if input != "" {
		in, err := os.Open(input)
		if err != nil {
			return sample{}, "", err
		}
		defer in.Close()
		cmd.Stdin = in
	}
	if output != "" {
		o, err := os.Create(output)
		if err != nil {
			return sample{}, "", err
		}
		defer o.Close()
		cmd.Stdout = o
	}
	usage, report, err := os.Pipe()
	if err != nil {
		return sample{}, "", err
	}
	defer usage.Close()
	cmd.ExtraFiles = []*os.File{report}
	err = cmd.Start()
	report.Close()
	if err != nil {
		return sample{}, "", err
	}
	err = cmd.Wait()
	line, readErr := io.ReadAll(usage)
	var wall, cpu, maxrss int64
	if _, scanErr := fmt.Sscan(string(line), &wall, &cpu, &maxrss); readErr != nil || scanErr != nil {
		return sample{}, stderr.String(), fmt.Errorf("%s: no usage from the runner (%v)", strings.Join(argv, " "), cmp.Or(err, readErr, scanErr))
	}
	return sample{wall: time.Duration(wall), cpu: time.Duration(cpu), rssBytes: maxrss * 1024}, stderr.String(), err
}

// runner is the path of hack/procbench/runner, which execute starts each
// measured program through.
var runner = "bin/procbench-runner"

func median(samples []sample) measurement {
	pick := func(key func(sample) int64) int64 {
		vs := make([]int64, len(samples))
		for i, s := range samples {
			vs[i] = key(s)
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	return measurement{runs: len(samples), sample: sample{
		wall:     time.Duration(pick(func(s sample) int64 { return int64(s.wall) })),
		cpu:      time.Duration(pick(func(s sample) int64 { return int64(s.cpu) })),
		rssBytes: pick(func(s sample) int64 { return s.rssBytes }),
	}}
}

// sameBytes checks that the floor wrote back what it read: it is only a
// floor if it handles the same bytes.
func sameBytes(a, b string) error {
	x, err := os.ReadFile(a)
	if err != nil {
		return err
	}
	y, err := os.ReadFile(b)
	if err != nil {
		return err
	}
	if !bytes.Equal(x, y) {
		return fmt.Errorf("the floor's output %s differs from its input %s", b, a)
	}
	return nil
}

func outputSize(path string) (int64, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	return int64(len(b)), countItems(b), nil
}

// countItems counts the entries of the top-level `items:` sequence: the
// lines starting with "- " after `items:` and before the next top-level
// key (the encoder writes the sequence at column 0).
func countItems(rl []byte) int {
	_, rest, ok := bytes.Cut(rl, []byte("\nitems:\n"))
	if !ok {
		return 0
	}
	n := 0
	for _, line := range bytes.Split(rest, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("- ")):
			n++
		case len(line) > 0 && line[0] != ' ' && line[0] != '#':
			return n // the next top-level key
		}
	}
	return n
}

// targets prints the targets against the measurements taken.
func targets(out io.Writer, fn map[int]measurement) {
	type target struct {
		name     string
		measured string
		met      bool
	}
	var ts []target
	if m, ok := fn[1]; ok {
		ts = append(ts, target{"1 model: wall < 20 ms", ms(m.wall), m.wall < 20*time.Millisecond})
	}
	if m, ok := fn[1000]; ok {
		ts = append(ts, target{"1,000 models: wall < 1 s", ms(m.wall), m.wall < time.Second},
			target{"1,000 models: peak RSS < 300 MiB", mib(m.rssBytes), m.rssBytes < 300<<20})
	}
	if m, ok := fn[10000]; ok {
		ts = append(ts, target{"10,000 models: wall < 10 s", ms(m.wall), m.wall < 10*time.Second},
			target{"10,000 models: peak RSS < 1 GiB", mib(m.rssBytes), m.rssBytes < 1<<30})
	}
	one, ok1 := fn[1]
	hundred, ok100 := fn[100]
	tenK, ok10k := fn[10000]
	if ok1 && ok100 && ok10k {
		// Cost per model beyond the fixed cost of a process (1 model).
		per100 := float64(hundred.wall-one.wall) / 99
		per10k := float64(tenK.wall-one.wall) / 9999
		ts = append(ts, target{"per-model wall at 10,000 ≤ 1.3× per-model wall at 100",
			fmt.Sprintf("%.2f ms vs %.2f ms (%.2f×)", per10k/1e6, per100/1e6, per10k/per100), per10k <= 1.3*per100})
	}
	fmt.Fprintln(out, "\n| target | measured | met |")
	fmt.Fprintln(out, "|---|---|---|")
	for _, t := range ts {
		fmt.Fprintf(out, "| %s | %s | %s |\n", t.name, t.measured, map[bool]string{true: "yes", false: "**no**"}[t.met])
	}
}

// comparisons times the tools a platform team already runs over the same
// workload: kubectl kustomize over the rendered objects as plain files,
// and kpt fn eval running the function over the ModelDeployments.
// comparisonRuns is how many runs each comparison gets.
var comparisonRuns = 3

func comparisons(out io.Writer, work, bin string, n int, fn measurement) error {
	dir := filepath.Join(work, fmt.Sprintf("compare-%d", n))
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	models := filepath.Join(dir, "models")
	rendered := filepath.Join(dir, "rendered")
	for _, d := range []string{models, rendered} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	caps := filepath.Join(dir, "capabilities.yaml")
	if err := os.WriteFile(caps, []byte(benchdata.Capabilities), 0o644); err != nil {
		return err
	}
	freshModels := func() error {
		// kpt writes the generated objects beside the models: start each
		// run from the models alone.
		if err := os.RemoveAll(models); err != nil {
			return err
		}
		if err := os.MkdirAll(models, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(models, "models.yaml"), benchdata.Models(n), 0o644)
	}
	if err := freshModels(); err != nil {
		return err
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if _, err := once(filepath.Join(rendered, "objects.yaml"), "", "", abs, "render", "--capabilities", caps, models); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(rendered, "kustomization.yaml"), []byte("resources:\n- objects.yaml\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nAt %d models (function alone: %s wall, %s CPU, %s):\n\n", n, ms(fn.wall), ms(fn.cpu), mib(fn.rssBytes))
	fmt.Fprintln(out, "| command | wall | CPU | peak RSS | wall vs the function alone |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|")
	rows := []struct {
		name string
		argv []string
		prep func() error
	}{
		{"`kubectl kustomize` of the rendered objects", []string{"kubectl", "kustomize", rendered}, nil},
		{"`kpt fn eval --exec` the function over the models", []string{"kpt", "fn", "eval", models, "--exec", abs, "--fn-config", caps},
			freshModels},
	}
	for _, r := range rows {
		if _, err := exec.LookPath(r.argv[0]); err != nil {
			fmt.Fprintf(out, "| %s | not run: %s is not on the PATH | | | |\n", r.name, r.argv[0])
			continue
		}
		var samples []sample
		for range comparisonRuns {
			if r.prep != nil {
				if err := r.prep(); err != nil {
					return err
				}
			}
			s, err := once(os.DevNull, "", "", r.argv...)
			if err != nil {
				return err
			}
			samples = append(samples, s)
		}
		m := median(samples)
		fmt.Fprintf(out, "| %s | %s | %s | %s | %.1f× |\n", r.name, ms(m.wall), ms(m.cpu), mib(m.rssBytes), ratio(m.wall, fn.wall))
	}
	fmt.Fprintf(out, "\nMedians of %d runs each.\n", comparisonRuns)
	return nil
}

func ms(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(cmp.Or(b, 1)) }
