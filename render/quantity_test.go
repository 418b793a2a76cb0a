package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
	"github.com/airunway-render/airunway-render/render"
)

// A ModelDeployment's quantities come from any contributor: each hostile
// one is refused at its field, fast, and nothing is rendered. Without
// hub.ParseQuantity the first takes more than ten minutes (validation
// compares it with the 4Ti ceiling), the second as long to parse.
func TestRenderRefusesHostileQuantities(t *testing.T) {
	hostile := []struct{ quantity, want, wantSize string }{
		{"1e1000000000", "has the exponent 1000000000; a quantity's exponent must be between -99 and 99", ""},
		{"1E-1000000000", "has the exponent -1000000000; a quantity's exponent must be between -99 and 99", ""},
		{"1e18Ki", `"1e18Ki" `, ""}, // not a quantity: each field has its words for that
		{strings.Repeat("9", 100000), "is 100000 characters long; a quantity must be at most 64", ""},
		// A field with a ceiling names it (4Ti of memory, 512 cpu); a
		// volume's size has none but int64 milli-units.
		{"9223372036854775808", `"9223372036854775808" exceeds the maximum of `, "is out of range; a quantity must be between -9223372036854775807m and 9223372036854775807m"},
	}
	models := map[string]string{
		"spec.resources.memory":              `model: {id: Qwen/Qwen3-0.6B}, resources: {gpu: {count: 1}, memory: "%s"}`,
		"spec.resources.cpu":                 `model: {id: Qwen/Qwen3-0.6B}, resources: {gpu: {count: 1}, cpu: "%s"}`,
		"spec.scaling.prefill.memory":        `model: {id: Qwen/Qwen3-0.6B}, provider: {name: dynamo}, serving: {mode: disaggregated}, scaling: {prefill: {gpu: {count: 1}, memory: "%s"}, decode: {gpu: {count: 1}}}`,
		"spec.model.storage.volumes[0].size": `model: {id: Qwen/Qwen3-0.6B, storage: {volumes: [{name: cache, purpose: modelCache, size: "%s"}]}}, resources: {gpu: {count: 1}}`,
	}
	caps := capabilities.Default()
	for field, spec := range models {
		for _, h := range hostile {
			t.Run(fmt.Sprintf("%s=%.20s", field, h.quantity), func(t *testing.T) {
				doc := "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: qwen, namespace: models}\nspec: {" + fmt.Sprintf(spec, h.quantity) + "}\n"
				items, err := kio.FromBytes([]byte(doc))
				require.NoError(t, err)
				var res render.Result
				fuzzcheck.Bounded(t, func() error {
					res = render.Render(items, render.Options{Capabilities: caps})
					return nil
				})
				require.Empty(t, res.Items, "bad input writes nothing")
				var got []string
				for _, p := range res.Problems {
					if p.Severity == diag.Error && p.Field == field {
						got = append(got, p.Message)
					}
				}
				require.Len(t, got, 1, "%v", res.Problems)
				want := h.want
				if strings.HasSuffix(field, ".size") && h.wantSize != "" {
					want = h.wantSize
				}
				require.Contains(t, got[0], want)
			})
		}
	}
}
