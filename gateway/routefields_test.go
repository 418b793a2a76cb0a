package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
	"github.com/airunway-render/airunway-render/providers"
)

// TestRouteFieldsMatchSchemas holds RouteFields to the real HTTPRoute CRDs
// of every embedded Gateway API release and channel: a listed field is in
// the schema exactly when Served says so, and every other field the
// renderer writes is in every schema.
func TestRouteFieldsMatchSchemas(t *testing.T) {
	req := request(t, "", vllmSpec, "vllm", gatewayCaps("inference.networking.k8s.io/v1", "v1.7.0", "experimental"))
	objs, l := Render(req, vllmBackend)
	require.Empty(t, l)
	written := leafPaths(find(t, objs, "HTTPRoute")["spec"], []string{"spec"})
	require.NotEmpty(t, written)

	checked := 0
	for _, channel := range []string{ChannelStandard, ChannelExperimental} {
		releases := schemacheck.ChannelReleases(GatewayGroup, "HTTPRoute", "v1", channel)
		require.NotEmpty(t, releases, channel)
		for _, release := range releases {
			v, err := hub.ParseRelease(release)
			require.NoError(t, err)
			if !capabilities.GatewayAPIVersions.Contains(v) {
				continue
			}
			for _, f := range RouteFields {
				has, err := schemacheck.HasField(GatewayGroup, "HTTPRoute", "v1", release, channel, f.Path...)
				require.NoError(t, err)
				require.Equal(t, has, f.Served(v, channel), "%s at %s (%s): RouteFields says served=%v, the CRD says %v", pathString(f.Path), release, channel, f.Served(v, channel), has)
			}
			for _, p := range written {
				if underRouteField(p) {
					continue
				}
				has, err := schemacheck.HasField(GatewayGroup, "HTTPRoute", "v1", release, channel, p...)
				require.NoError(t, err)
				require.True(t, has, "%s is rendered but Gateway API %s (%s) does not serve it: list it in RouteFields", pathString(p), release, channel)
				checked++
			}
		}
	}
	require.Greater(t, checked, 0)
}

// TestSupportedGatewayReleasesHaveSchemas keeps the supported range and the
// embedded schemas together: every minor release in the range has an
// HTTPRoute schema in both channels to validate against.
func TestSupportedGatewayReleasesHaveSchemas(t *testing.T) {
	for minor := 0; minor < 20; minor++ {
		v := version.MajorMinor(1, uint(minor)).WithPatch(0)
		if !capabilities.GatewayAPIVersions.Contains(v) {
			continue
		}
		for _, channel := range []string{ChannelStandard, ChannelExperimental} {
			found := slices.ContainsFunc(schemacheck.ChannelReleases(GatewayGroup, "HTTPRoute", "v1", channel), func(r string) bool {
				return strings.HasPrefix(r, "v"+v.String()[:strings.LastIndex(v.String(), ".")]+".")
			})
			require.True(t, found, "no %s HTTPRoute schema for Gateway API %d.%d", channel, v.Major(), v.Minor())
		}
	}
}

func underRouteField(p []string) bool {
	for _, f := range RouteFields {
		if len(p) >= len(f.Path) && slices.Equal(p[:len(f.Path)], f.Path) {
			return true
		}
	}
	return false
}

// leafPaths lists the path of every scalar in a rendered value, list items
// as "[]".
func leafPaths(v any, prefix []string) [][]string {
	switch t := v.(type) {
	case map[string]any:
		var out [][]string
		for k, child := range t {
			out = append(out, leafPaths(child, append(slices.Clone(prefix), k))...)
		}
		return out
	case []any:
		var out [][]string
		for _, item := range t {
			out = append(out, leafPaths(item, append(slices.Clone(prefix), "[]"))...)
		}
		return out
	default:
		return [][]string{prefix}
	}
}

// TestMatchLimitsMatchSchemas holds the route size limits to the real
// HTTPRoute CRDs of every supported release: a model with as many LoRA
// adapters as the limits allow renders a route the release's schema (its
// maxItems and CEL rules) accepts, and one more adapter is refused at
// render time with the limit named, instead of by the API server.
func TestMatchLimitsMatchSchemas(t *testing.T) {
	checked := 0
	for _, release := range schemacheck.ChannelReleases(GatewayGroup, "HTTPRoute", "v1", ChannelStandard) {
		v, err := hub.ParseRelease(release)
		require.NoError(t, err)
		if !capabilities.GatewayAPIVersions.Contains(v) {
			continue
		}
		for _, objectives := range []bool{false, true} {
			most := 0
			for n := 1; n <= hub.MaxAdapters; n++ {
				objs, l := Render(adapterRequest(t, release, n, objectives), vllmBackend)
				if l.HasErrors() {
					require.Contains(t, messages(l, diag.Error)[0], "spec.adapters: the HTTPRoute would have")
					break
				}
				most = n
				route := find(t, objs, "HTTPRoute")
				require.Empty(t, schemacheck.CheckAtChannel(route, release, ChannelStandard), "%d adapters at %s", n, release)
			}
			if most == hub.MaxAdapters {
				continue // every adapter count fits
			}
			// The first count refused is refused by the schema too.
			objs, _ := renderUnchecked(t, adapterRequest(t, release, most+1, objectives))
			require.NotEmpty(t, schemacheck.CheckAtChannel(find(t, objs, "HTTPRoute"), release, ChannelStandard), "%d adapters at %s", most+1, release)
			checked++
		}
	}
	require.Greater(t, checked, 0)
}

// adapterRequest is a vLLM model with n LoRA adapters on a cluster with
// Gateway API release; objectives: the Inference Extension release gives
// each adapter a rule of its own.
func adapterRequest(t *testing.T, release string, n int, objectives bool) *providers.Request {
	t.Helper()
	caps := gatewayCaps("inference.networking.k8s.io/v1", release, ChannelStandard)
	if objectives {
		caps.InferenceExtensionVersion = "v1.5.0"
	}
	req := request(t, "", vllmSpec, "vllm", caps)
	for i := range n {
		req.MD.Spec.Adapters = append(req.MD.Spec.Adapters, hub.Adapter{Name: fmt.Sprintf("lora-%d", i), Source: fmt.Sprintf("hf://org/lora-%d", i)})
	}
	return req
}

// renderUnchecked renders the route without the limit check, to show the
// schema refuses what the check refuses.
func renderUnchecked(t *testing.T, req *providers.Request) ([]providers.Object, diag.List) {
	t.Helper()
	var l diag.List
	pl, ok := newPlan(req, vllmBackend, &l)
	require.True(t, ok, "%v", l)
	route, _ := pl.httpRoute()
	return []providers.Object{route}, l
}
