package manifest_test

import (
	"bytes"
	"io"
	"testing"

	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airunway-render/airunway-render/fn"
	"github.com/airunway-render/airunway-render/internal/benchdata"
	"github.com/airunway-render/airunway-render/internal/manifest"
)

// BenchmarkOutputEncoding compares ways of writing the same output
// ResourceList (the function's, for 1,000 models: 2,399 objects,
// 2.9 MiB): the SDK's ResourceList.ToYAML and kyaml's kio.ByteWriter, both
// of which encode the whole list as one YAML document, and
// manifest.ResourceListWriter, which encodes item by item (the bytes are
// the same; TestResourceListWriterMatchesSDK). This is the measurement
// behind the choice (BENCHMARKS.md).
func BenchmarkOutputEncoding(b *testing.B) {
	out, err := (&fn.Processor{}).Run(benchdata.ResourceList(1000))
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
	b.Run("ResourceListWriter", func(b *testing.B) {
		rl, err := manifest.ReadResourceList(out)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			w := &manifest.ResourceListWriter{FunctionConfig: rl.FunctionConfig}
			for _, n := range rl.Items {
				y, key, err := manifest.EncodeItem(n)
				if err != nil {
					b.Fatal(err)
				}
				w.Items = append(w.Items, manifest.Item{YAML: y, SortKey: key})
			}
			if _, err := w.Write(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
