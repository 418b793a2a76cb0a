package discover_test

import (
	"flag"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/capabilities"
	. "github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/discover/capsfile"
	"github.com/airunway-render/airunway-render/discover/discovertest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from this run")

// TestDiscover holds what each fixture cluster discovers to a golden file,
// checks that the file is one the renderer accepts, and that shuffling
// every list the API server returns changes no byte.
func TestDiscover(t *testing.T) {
	for name, c := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			caps, notes := Discover(c, name)
			out, err := capsfile.Encode(caps, notes, "discovered from fixture "+name)
			require.NoError(t, err)
			discovertest.Golden(t, name+".golden", out, *update)

			decoded, problems := capabilities.Decode(out)
			require.False(t, problems.HasErrors(), "%v", problems)
			_, problems = capabilities.Resolve(decoded)
			require.False(t, problems.HasErrors(), "the discovered file must resolve: %v", problems)
			require.Empty(t, Compare(decoded, c), "a discovered file has no differences from its cluster")

			r := rand.New(rand.NewPCG(1, 2))
			for range 5 {
				shuffled := *c
				shuffled.Nodes = slices.Clone(c.Nodes)
				shuffled.CRDs = slices.Clone(c.CRDs)
				shuffled.Deployments = slices.Clone(c.Deployments)
				shuffled.Gateways = slices.Clone(c.Gateways)
				shuffled.DeviceClasses = slices.Clone(c.DeviceClasses)
				shuffled.ResourceSlices = slices.Clone(c.ResourceSlices)
				r.Shuffle(len(shuffled.DeviceClasses), func(i, j int) {
					shuffled.DeviceClasses[i], shuffled.DeviceClasses[j] = shuffled.DeviceClasses[j], shuffled.DeviceClasses[i]
				})
				r.Shuffle(len(shuffled.ResourceSlices), func(i, j int) {
					shuffled.ResourceSlices[i], shuffled.ResourceSlices[j] = shuffled.ResourceSlices[j], shuffled.ResourceSlices[i]
				})
				r.Shuffle(len(shuffled.Nodes), func(i, j int) { shuffled.Nodes[i], shuffled.Nodes[j] = shuffled.Nodes[j], shuffled.Nodes[i] })
				r.Shuffle(len(shuffled.CRDs), func(i, j int) { shuffled.CRDs[i], shuffled.CRDs[j] = shuffled.CRDs[j], shuffled.CRDs[i] })
				r.Shuffle(len(shuffled.Deployments), func(i, j int) {
					shuffled.Deployments[i], shuffled.Deployments[j] = shuffled.Deployments[j], shuffled.Deployments[i]
				})
				shuffledCaps, shuffledNotes := Discover(&shuffled, name)
				again, err := capsfile.Encode(shuffledCaps, shuffledNotes, "discovered from fixture "+name)
				require.NoError(t, err)
				require.Equal(t, string(out), string(again), "the same cluster listed in another order")
			}
		})
	}
}
