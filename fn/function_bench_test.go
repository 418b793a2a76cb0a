package fn

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airunway-render/airunway-render/internal/benchdata"
	"github.com/airunway-render/airunway-render/render"
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

// BenchmarkOutputEncoding compares ways of writing the same output
// ResourceList (1,000 models: 2,399 objects, 2.9 MiB): the SDK's
// ResourceList.ToYAML and kyaml's kio.ByteWriter, both of which encode the
// whole list as one YAML document, and the function's resourceListWriter,
// which encodes item by item (the bytes are the same;
// TestResourceListWriterMatchesSDK). This is the measurement behind the
// choice (BENCHMARKS.md).
func BenchmarkOutputEncoding(b *testing.B) {
	out, err := (&Processor{}).Run(benchdata.ResourceList(1000))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sdk-ToYAML", func(b *testing.B) {
		rl, err := sdk.ParseResourceList(out)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := rl.ToYAML(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kio.ByteWriter", func(b *testing.B) {
		r := &kio.ByteReader{Reader: bytes.NewReader(out), OmitReaderAnnotations: true}
		nodes, err := r.Read()
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			w := kio.ByteWriter{Writer: io.Discard, KeepReaderAnnotations: true, FunctionConfig: r.FunctionConfig,
				WrappingAPIVersion: kio.ResourceListAPIVersion, WrappingKind: kio.ResourceListKind}
			if err := w.Write(nodes); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("resourceListWriter", func(b *testing.B) {
		rl, err := readResourceList(out)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			w := &resourceListWriter{functionConfig: rl.functionConfig}
			for _, n := range rl.items {
				y, key, err := encodeItem(n)
				if err != nil {
					b.Fatal(err)
				}
				w.items = append(w.items, render.Encoded{CallerKey: key, YAML: y})
			}
			if _, err := w.write(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
