package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/internal/benchdata"
)

// BenchmarkPlanFleet is `plan --fleet` as a user runs it, in process: n
// new models of the benchmarks' workload over c clusters of one H100 pool
// and one CPU pool each (benchdata.FleetCluster), from reading the files
// to the table. hack/procbench measures the same as a process (wall, peak
// RSS); this one is what `make profile` profiles.
func BenchmarkPlanFleet(b *testing.B) {
	for _, size := range []struct{ models, clusters, nodes int }{{2000, 10, 200}, {10000, 20, 500}} {
		dir := b.TempDir()
		writeFleetWorkload(b, dir, size.models, size.clusters, size.nodes)
		b.Run(fmt.Sprintf("models=%d/clusters=%d", size.models, size.clusters), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if code := Execute([]string{"plan", "--fleet", filepath.Join(dir, "clusters"), "-f", filepath.Join(dir, "models.yaml")}, strings.NewReader(""), io.Discard, io.Discard); code != 0 && code != 4 {
					b.Fatalf("plan --fleet exited %d", code)
				}
			}
		})
	}
}

func writeFleetWorkload(b *testing.B, dir string, models, clusters, nodes int) {
	b.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "clusters"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range clusters {
		if err := os.WriteFile(filepath.Join(dir, "clusters", fmt.Sprintf("cluster-%02d.yaml", i)), []byte(benchdata.FleetCluster(i, nodes)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "models.yaml"), benchdata.Models(models), 0o644); err != nil {
		b.Fatal(err)
	}
}
