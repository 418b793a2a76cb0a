package schemacheck

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// httpRoute is a minimal route; mutate edits its only rule.
func httpRoute(mutate func(rule obj)) obj {
	rule := obj{"backendRefs": []any{obj{"name": "svc", "port": 8000}}}
	if mutate != nil {
		mutate(rule)
	}
	return obj{
		"apiVersion": gatewayGroup + "/v1",
		"kind":       "HTTPRoute",
		"metadata":   obj{"name": "route"},
		"spec": obj{
			"parentRefs": []any{obj{"name": "gw"}},
			"rules":      []any{rule},
		},
	}
}

// withTimeout sets spec.rules[0].timeouts.request, a field the experimental
// channel has from v1.0.0 and the standard channel only from v1.2.0.
func withTimeout(rule obj) { rule["timeouts"] = obj{"request": "300s"} }

func TestChannelReleases(t *testing.T) {
	all := []string{"v1.0.0", "v1.1.0", "v1.2.0", "v1.3.0", "v1.4.0", "v1.5.0", "v1.5.1", "v1.6.0", "v1.6.1", "v1.7.0"}
	for _, tc := range []struct {
		name, group, kind, version, channel string
		want                                []string
	}{
		{"route default is standard", gatewayGroup, "HTTPRoute", "v1", "", all},
		{"route standard", gatewayGroup, "HTTPRoute", "v1", "standard", all},
		{"route experimental", gatewayGroup, "HTTPRoute", "v1", "experimental", all},
		{"route v1beta1 only from ../shared/crds", gatewayGroup, "HTTPRoute", "v1beta1", "standard", []string{"v1.5.1", "v1.6.1"}},
		{"route v1beta1 has no experimental", gatewayGroup, "HTTPRoute", "v1beta1", "experimental", nil},
		{"reference grant covers the oldest release", gatewayGroup, "ReferenceGrant", "v1beta1", "", []string{"v1.0.0", "v1.6.1"}},
		{"unknown channel", gatewayGroup, "HTTPRoute", "v1", "beta", nil},
		{"channel-less kind", "kaito.sh", "Workspace", "v1beta1", "", []string{"v0.6.2", "v0.8.1", "v0.10.0", "v0.12.0"}},
		{"channel-less kind has no standard channel", "kaito.sh", "Workspace", "v1beta1", "standard", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, ChannelReleases(tc.group, tc.kind, tc.version, tc.channel))
			if tc.channel == "" {
				require.Equal(t, tc.want, Releases(tc.group, tc.kind, tc.version))
			}
		})
	}
}

func TestCheckAtChannel(t *testing.T) {
	for _, tc := range []struct {
		name            string
		obj             obj
		atMost, channel string
		want            []string // substrings; none = must pass
	}{
		{name: "experimental v1.0.0 has timeouts", obj: httpRoute(withTimeout), atMost: "v1.0.0", channel: "experimental"},
		{
			// A standard v1.1.0 cluster would prune the field: the bug the
			// channel-aware check exists to catch.
			name: "standard v1.1.0 prunes timeouts", obj: httpRoute(withTimeout), atMost: "v1.1.0", channel: "standard",
			want: []string{"spec.rules[0].timeouts: Unknown field"},
		},
		{name: "default channel is standard", obj: httpRoute(withTimeout), atMost: "1.1.0", want: []string{"spec.rules[0].timeouts: Unknown field"}},
		{name: "standard v1.2.0 has timeouts", obj: httpRoute(withTimeout), atMost: "v1.2.0", channel: "standard"},
		{name: "newest standard", obj: httpRoute(withTimeout), channel: "standard"},
		{name: "oldest standard, plain route", obj: httpRoute(nil), atMost: "v1.0.0", channel: "standard"},
		{
			name: "unknown field in experimental", obj: httpRoute(func(r obj) { r["bogus"] = true }), atMost: "v1.7.0", channel: "experimental",
			want: []string{"spec.rules[0].bogus: Unknown field"},
		},
		{
			name: "schema errors still reported", obj: httpRoute(func(r obj) { r["timeouts"] = obj{"request": "soon"} }), atMost: "v1.0.0", channel: "experimental",
			want: []string{"spec.rules[0].timeouts.request: Invalid value"},
		},
		{
			name: "release before the oldest", obj: httpRoute(nil), atMost: "0.8.0", channel: "experimental",
			want: []string{"no gateway.networking.k8s.io/v1 HTTPRoute (experimental channel) schema at or below release 0.8.0"},
		},
		{
			name: "unknown channel", obj: httpRoute(nil), atMost: "1.2.0", channel: "beta",
			want: []string{`no schema known for gateway.networking.k8s.io/v1 HTTPRoute in channel "beta" (have "experimental", "standard")`},
		},
		{
			name: "channel-less kind in a channel", obj: workspace(nil), atMost: "0.12.0", channel: "experimental",
			want: []string{`no schema known for kaito.sh/v1beta1 Workspace in channel "experimental" (have "")`},
		},
		{name: "channel-less kind, default channel", obj: workspace(nil), atMost: "0.12.0"},
		{name: "built-in kinds ignore the channel", obj: deployment(nil), atMost: "1.0.0", channel: "experimental"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireProblems(t, CheckAtChannel(tc.obj, tc.atMost, tc.channel), tc.want...)
		})
	}
}

// Check and CheckAtVersion keep using the standard channel for Gateway API
// kinds and no channel for the others.
func TestCheckUsesDefaultChannel(t *testing.T) {
	requireProblems(t, Check(httpRoute(withTimeout)))
	requireProblems(t, CheckAtVersion(httpRoute(withTimeout), "1.1.0"), "spec.rules[0].timeouts: Unknown field")
	requireProblems(t, CheckAtVersion(workspace(nil), "0.8.1"))

	for _, tc := range []struct {
		name, group, kind, version, channel string
		wantChannel, wantRelease            string
	}{
		{"route default", gatewayGroup, "HTTPRoute", "v1", "", "standard", "v1.7.0"},
		{"route experimental", gatewayGroup, "HTTPRoute", "v1", "experimental", "experimental", "v1.7.0"},
		{"workspace", "kaito.sh", "Workspace", "v1beta1", "", "", "v0.12.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := LoadChannel(tc.group, tc.kind, tc.version, "", tc.channel)
			require.NoError(t, err)
			require.Equal(t, tc.wantChannel, v.Channel())
			require.Equal(t, tc.wantRelease, v.Release())
		})
	}
}

func TestHasField(t *testing.T) {
	timeouts := []string{"spec", "rules", "[]", "timeouts"}
	for _, tc := range []struct {
		name, group, kind, version, release, channel string
		path                                         []string
		want                                         bool
		wantErr                                      string
	}{
		{name: "standard v1.1.0 lacks timeouts", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.1.0", channel: "standard", path: timeouts},
		{name: "standard v1.2.0 has timeouts", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.2.0", channel: "standard", path: timeouts, want: true},
		{name: "experimental v1.0.0 has timeouts", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.0.0", channel: "experimental", path: timeouts, want: true},
		{name: "default channel is standard", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.1.0", path: timeouts},
		{name: "newest release", group: gatewayGroup, kind: "HTTPRoute", version: "v1", channel: "standard", path: timeouts, want: true},
		{name: "leaf below items", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.0.0", channel: "standard",
			path: []string{"spec", "rules", "[]", "backendRefs", "[]", "port"}, want: true},
		{name: "array itself", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.0.0", channel: "standard",
			path: []string{"spec", "rules"}, want: true},
		{name: "undeclared", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.7.0", channel: "experimental",
			path: []string{"spec", "bogus"}},
		{name: "channel-less kind", group: "kaito.sh", kind: "Workspace", version: "v1beta1", release: "v0.6.2",
			path: []string{"resource", "labelSelector"}, want: true},
		{name: "name into an array", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.2.0", channel: "standard",
			path: []string{"spec", "rules", "timeouts"}, wantErr: `at "spec.rules" is an array; the path must step into its items with "[]" before "timeouts"`},
		{name: "items of an object", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.2.0", channel: "standard",
			path: []string{"spec", "[]"}, wantErr: `at "spec" must be an array to step into "[]", but is "object"`},
		{name: "empty path", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.2.0", channel: "standard",
			wantErr: "path must not be empty"},
		{name: "release not embedded", group: gatewayGroup, kind: "HTTPRoute", version: "v1", release: "v1.2.1", channel: "standard",
			path: timeouts, wantErr: "no schema for gateway.networking.k8s.io/v1 HTTPRoute (standard channel) at release v1.2.1 (have v1.0.0,"},
		{name: "channel not embedded", group: "kaito.sh", kind: "Workspace", version: "v1beta1", release: "v0.6.2", channel: "standard",
			path: []string{"resource"}, wantErr: `in channel "standard"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := HasField(tc.group, tc.kind, tc.version, tc.release, tc.channel, tc.path...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestBuildIndexChannels(t *testing.T) {
	file := func(release, channel string) *fstest.MapFile {
		ch := ""
		if channel != "" {
			ch = `"channel": "` + channel + `", `
		}
		return &fstest.MapFile{Data: []byte(`{` + ch + `"group": "g", "kind": "K", "version": "v1", "release": "` + release + `", "openAPIV3Schema": {"type": "object"}}`)}
	}
	for _, tc := range []struct {
		name    string
		fsys    fstest.MapFS
		want    map[key][]string
		wantErr string
	}{
		{
			name: "same release in two channels",
			fsys: fstest.MapFS{"a/std.json": file("v1.0.0", "standard"), "a-experimental/exp.json": file("v1.0.0", "experimental")},
			want: map[key][]string{{gvk{"g", "K", "v1"}, "standard"}: {"v1.0.0"}, {gvk{"g", "K", "v1"}, "experimental"}: {"v1.0.0"}},
		},
		{
			name:    "same release twice in one channel",
			fsys:    fstest.MapFS{"a/one.json": file("v1.0.0", "standard"), "b/two.json": file("v1.0.0", "standard")},
			wantErr: "g/v1 K (standard channel) release v1.0.0 is embedded twice",
		},
		{
			name: "channel-less",
			fsys: fstest.MapFS{"a/new.json": file("v1.1.0", ""), "a/old.json": file("v1.0.0", "")},
			want: map[key][]string{{gvk{"g", "K", "v1"}, ""}: {"v1.0.0", "v1.1.0"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, err := buildIndex(tc.fsys)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			got := map[key][]string{}
			for k, files := range idx {
				for _, f := range files {
					got[k] = append(got[k], f.Release)
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
}
