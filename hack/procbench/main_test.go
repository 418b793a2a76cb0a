package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/testing/ownci"
)

// TestRun runs the benchmark end to end on small sizes, so `make bench`
// cannot rot unnoticed: it builds the function and the floor, measures
// both, checks that the floor passes the function's output through
// unchanged, prints the targets and, when kubectl and kpt are on the PATH,
// times them too. One run of each measurement: the test checks that the
// benchmark works, not what it measures.
func TestRun(t *testing.T) {
	defaultRuns, defaultComparisonRuns := runsFor, comparisonRuns
	runsFor, comparisonRuns = func(int) int { return 1 }, 1
	t.Cleanup(func() { runsFor, comparisonRuns = defaultRuns, defaultComparisonRuns })
	dir := t.TempDir()
	bin := os.Getenv("AIRUNWAY_RENDER_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "airunway-render")
		build(t, bin, "../../cmd/airunway-render")
	}
	floor := filepath.Join(dir, "kyaml-noop")
	build(t, floor, "./noop")
	useRunner(t)
	var out bytes.Buffer
	if err := run(bin, floor, "1,100", "100", filepath.Join(dir, "work"), &out); err != nil {
		t.Fatal(err)
	}
	defaultFleets, defaultCLI := fleetSizes, cliSizes
	fleetSizes, cliSizes = []fleetSize{{20, 3, 10}}, []int{30}
	t.Cleanup(func() { fleetSizes, cliSizes = defaultFleets, defaultCLI })
	if err := commandLine(&out, filepath.Join(dir, "work"), bin); err != nil {
		t.Fatal(err)
	}
	report := out.String()
	t.Log("\n" + report)
	for _, want := range []string{
		"| 1 | 0.0 MiB, 3 objects |",
		"| 100 | 0.4 MiB, 240 objects |",
		"| 1 model: wall < 20 ms |",
		"At 100 models",
		"`kubectl kustomize` of the rendered objects",
		"`kpt fn eval --exec` the function over the models",
		"| `plan --fleet` | 20 | 3 |",
		"| `render` | 30 | 1 |",
		"| `plan` | 30 | 1 |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if ownci.Enabled() && strings.Contains(report, "not on the PATH") {
		t.Errorf("kubectl or kpt is missing, so the comparison did not run; this repository's CI (%s=1) has both", ownci.Variable)
	}
}

func TestMedian(t *testing.T) {
	m := median([]sample{{wall: 3}, {wall: 1, cpu: 9}, {wall: 2, cpu: 1, rssBytes: 5}})
	if m.wall != 2 || m.cpu != 1 || m.rssBytes != 0 || m.runs != 3 {
		t.Fatalf("median = %+v, want wall 2, cpu 1, rss 0 (each field on its own), runs 3", m)
	}
	if got := ms(1500 * time.Microsecond); got != "1.5 ms" {
		t.Fatalf("ms = %q", got)
	}
}

func TestCountItems(t *testing.T) {
	rl := []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: A\n  list:\n  - x\n- kind: B\nfunctionConfig:\n  a: b\nresults:\n- message: m\n")
	if n := countItems(rl); n != 2 {
		t.Fatalf("countItems = %d, want 2 (nested lists and results are not items)", n)
	}
}

func TestParseSizes(t *testing.T) {
	if ns, err := parseSizes("1, 100,,10000"); err != nil || len(ns) != 3 || ns[2] != 10000 {
		t.Fatalf("parseSizes = %v, %v", ns, err)
	}
	for _, bad := range []string{"0", "x", "-5"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q) must fail", bad)
		}
	}
}

// useRunner builds hack/procbench/runner for the test's measurements.
func useRunner(t *testing.T) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runner")
	build(t, path, "./runner")
	defaultRunner := runner
	runner = path
	t.Cleanup(func() { runner = defaultRunner })
}

// TestRunnerMeasuresTheProgram: a small program run while procbench holds
// 256 MiB is measured at its own size, not procbench's, and its exit
// status comes through.
func TestRunnerMeasuresTheProgram(t *testing.T) {
	useRunner(t)
	held := make([]byte, 256<<20)
	for i := range held {
		held[i] = 1 // touched: resident
	}
	s, _, err := execute("", "", "", "sh", "-c", "exit 3")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("the program's exit 3 came through as %v", err)
	}
	if s.rssBytes <= 0 || s.rssBytes > 64<<20 {
		t.Errorf("a shell that exits at once peaked at %d MiB while procbench held %d MiB: the caller's memory is counted", s.rssBytes>>20, len(held)>>20)
	}
	runtime.KeepAlive(held)
}

func build(t *testing.T, out, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// TestHostileWorkloadsAtTheLimits: the workloads whose peak RSS is the
// stated memory bound sit at the input budget's limits, each charged as
// the budget charges it: within every limit, and near the one it is
// about. A workload that drifted inside the limits would understate the
// bound.
func TestHostileWorkloadsAtTheLimits(t *testing.T) {
	dir := t.TempDir()
	file, list := filepath.Join(dir, "in.yaml"), filepath.Join(dir, "list.yaml")
	near := func(got, limit int) bool { return got <= limit && got >= limit-limit/10 }
	for _, w := range hostileWorkloads() {
		if w.refused != nil {
			continue // run, and checked refused, by the benchmark itself
		}
		in, err := writeHostile(w, file, list)
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(list)
		if err != nil {
			t.Fatal(err)
		}
		if in.documents > budget.MaxDocuments-1 || in.nodes > budget.MaxNodes || info.Size() > budget.MaxBytes {
			t.Errorf("%s: %d documents, %d nodes, a ResourceList of %d bytes: past a limit", w.name, in.documents, in.nodes, info.Size())
		}
		if !near(in.documents, budget.MaxDocuments) && !near(in.nodes, budget.MaxNodes) && !near(int(info.Size()), budget.MaxBytes) {
			t.Errorf("%s: %d documents, %d nodes, %d bytes: near no limit", w.name, in.documents, in.nodes, info.Size())
		}
	}
}
