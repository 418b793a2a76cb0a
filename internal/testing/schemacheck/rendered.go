package schemacheck

import (
	"encoding/json"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
)

// gatewayGroup is the Gateway API group, whose kinds are validated at the
// declared bundle release and channel. (The gateway package names it too;
// importing it here would make a cycle with its tests.)
const gatewayGroup = "gateway.networking.k8s.io"

// providerOfGroup maps a provider API group to the provider whose declared
// release selects the schema.
var providerOfGroup = map[string]string{"kaito.sh": "kaito", "nvidia.com": "dynamo", "ray.io": "kuberay"}

// Rendered validates one rendered object as the cluster a capability file
// describes would see it: provider kinds at the provider's declared release
// (at the oldest embedded one when the declared release is older still),
// Gateway API kinds at the declared bundle and channel, InferencePools at
// every embedded release of their version, built-in kinds by strict
// decoding. The golden tests and the fuzz targets share it.
func Rendered(obj map[string]any, caps *capabilities.Resolved) []string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group, version, _ := strings.Cut(apiVersion, "/")
	switch {
	case group == hub.Group && kind == hub.KindModelDeployment:
		v, err := Own(kind, version)
		if err != nil {
			return []string{err.Error()}
		}
		return v.Validate(obj)
	case group == gatewayGroup:
		if caps.Gateway == nil {
			return []string{"a Gateway API object was rendered without a declared gateway"}
		}
		channel := caps.Gateway.Channel
		if kind != "HTTPRoute" || channel == "" {
			channel = defaultChannel
		}
		return CheckAtChannel(obj, release(caps.Gateway.GatewayAPIVersion), channel)
	case kind == "InferencePool":
		releases := Releases(group, kind, version)
		if len(releases) == 0 {
			return []string{"no schema for " + apiVersion}
		}
		var problems []string
		for _, r := range releases {
			problems = append(problems, CheckAtVersion(obj, r)...)
		}
		return problems
	}
	declared := ""
	if p := caps.Provider(providerOfGroup[group]); p != nil {
		declared = release(p.Version)
	}
	problems := CheckAtVersion(obj, declared)
	// The oldest embedded schema of a kind can be newer than the oldest
	// release the renderer supports (KAITO: schema v0.6.2, support from
	// 0.6.0); validate against that closest schema then.
	if len(problems) == 1 && strings.Contains(problems[0], "schema at or below release") {
		if releases := Releases(group, kind, version); len(releases) > 0 {
			return CheckAtVersion(obj, releases[0])
		}
	}
	return problems
}

// RenderedNode is Rendered for a YAML node.
func RenderedNode(n *yaml.RNode, caps *capabilities.Resolved) []string {
	js, err := n.MarshalJSON()
	if err != nil {
		return []string{err.Error()}
	}
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil {
		return []string{err.Error()}
	}
	return Rendered(obj, caps)
}

// release spells a capability file's version as the schemas name releases:
// capability files may write "1.3" for "1.3.0".
func release(version string) string {
	if v, err := hub.ParseRelease(version); err == nil {
		return v.String()
	}
	return version
}
