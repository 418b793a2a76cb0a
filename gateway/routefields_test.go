package gateway

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
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
