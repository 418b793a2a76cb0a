package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/airunway-render/airunway-render/internal/benchdata"
)

// The command line at scale (issue 51's table): `plan --fleet` over a
// fleet of alike clusters (benchdata.FleetCluster: one H100 pool and one
// CPU pool each), and `render` and `plan` of many models with the
// workload's capability file, each as a process: wall, CPU and peak RSS.

// fleetSize is a fleet workload: models over clusters of nodes H100 nodes.
type fleetSize struct{ models, clusters, nodes int }

// fleetSizes are measured by make bench; TestRun measures a small one.
var fleetSizes = []fleetSize{{2000, 10, 200}, {10000, 20, 500}}

// cliSizes are the models `render` and `plan` are measured at.
var cliSizes = []int{10000}

func commandLine(out io.Writer, work, bin string) error {
	fmt.Fprintln(out, "\n`plan --fleet`, `render` and `plan` as processes:")
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| command | models | clusters | wall | CPU | peak RSS |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---:|")
	for _, size := range fleetSizes {
		dir := filepath.Join(work, fmt.Sprintf("fleet-%d-%d", size.models, size.clusters))
		if err := writeFleet(dir, size); err != nil {
			return err
		}
		m, err := measurePlan(runsFor(size.models), bin, "plan", "--fleet", filepath.Join(dir, "clusters"), "-f", filepath.Join(dir, "models.yaml"))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "| `plan --fleet` | %d | %d | %s | %s | %s |\n", size.models, size.clusters, ms(m.wall), ms(m.cpu), mib(m.rssBytes))
	}
	for _, n := range cliSizes {
		dir := filepath.Join(work, fmt.Sprintf("cli-%d", n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		models, caps := filepath.Join(dir, "models.yaml"), filepath.Join(dir, "capabilities.yaml")
		if err := os.WriteFile(models, benchdata.Models(n), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(caps, []byte(benchdata.Capabilities), 0o644); err != nil {
			return err
		}
		for _, command := range []string{"render", "plan"} {
			m, err := measurePlan(runsFor(n), bin, command, "--capabilities", caps, "-f", models)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "| `%s` | %d | 1 | %s | %s | %s |\n", command, n, ms(m.wall), ms(m.cpu), mib(m.rssBytes))
		}
	}
	fmt.Fprintln(out, "\nExit code 4 of a plan is its verdict (some cluster's rolling updates would stall), not a failure.")
	return nil
}

// writeFleet writes a fleet's capability files and models into dir.
func writeFleet(dir string, size fleetSize) error {
	if err := os.MkdirAll(filepath.Join(dir, "clusters"), 0o755); err != nil {
		return err
	}
	for i := range size.clusters {
		if err := os.WriteFile(filepath.Join(dir, "clusters", fmt.Sprintf("cluster-%02d.yaml", i)), []byte(benchdata.FleetCluster(i, size.nodes)), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "models.yaml"), benchdata.Models(size.models), 0o644)
}

// measurePlan is measure for a command whose exit code 4 is a verdict:
// `plan` says "does not fit" so.
func measurePlan(runs int, argv ...string) (measurement, error) {
	var samples []sample
	for i := 0; i <= runs; i++ {
		s, stderr, err := execute(os.DevNull, "", "", argv...)
		var exit *exec.ExitError
		verdict := errors.As(err, &exit) && exit.ExitCode() == 4
		if err != nil && !verdict {
			return measurement{}, fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, firstLines(stderr))
		}
		if i > 0 {
			samples = append(samples, s)
		}
	}
	return median(samples), nil
}
