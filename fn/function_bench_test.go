package fn

import (
	"fmt"
	"testing"

	"github.com/airunway-render/airunway-render/internal/benchdata"
)

// BenchmarkFunction measures the KRM function in process over the
// benchmark workload: read the ResourceList, render, write the
// ResourceList. It is what `make profile` profiles; hack/procbench
// measures the same work as a process (start-up, page faults and peak RSS
// included).
func BenchmarkFunction(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		in := benchdata.ResourceList(n)
		b.Run(fmt.Sprintf("models=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := (&Processor{}).Run(in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e3, "µs/model")
		})
	}
}
