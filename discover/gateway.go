package discover

import (
	"fmt"
	"strings"

	"github.com/airunway-render/airunway-render/api/hub"
)

// The CRDs and annotations of the Gateway API and its Inference Extension.
const (
	gatewayCRD          = "gateways.gateway.networking.k8s.io"
	gatewayGroup        = ".gateway.networking.k8s.io"
	bundleVersionKey    = "gateway.networking.k8s.io/bundle-version"
	channelKey          = "gateway.networking.k8s.io/channel"
	inferenceBundleKey  = "inference.networking.k8s.io/bundle-version"
	inferencePoolV1     = "inferencepools.inference.networking.k8s.io"
	inferencePoolAlpha2 = "inferencepools.inference.networking.x-k8s.io"
)

// inferencePoolVersions maps the InferencePool CRDs to the API version a
// capability file names, the served one first.
var inferencePoolVersions = []struct{ crd, apiVersion string }{
	{inferencePoolV1, "inference.networking.k8s.io/v1"},
	{inferencePoolAlpha2, "inference.networking.x-k8s.io/v1alpha2"},
}

// gatewayAPI is the Gateway API bundle the cluster's CRDs come from.
type gatewayAPI struct {
	version, channel string
	// mixed names the CRDs whose bundle differs from the Gateway CRD's.
	mixed []string
}

// readGatewayAPI reads the bundle version and channel from the Gateway
// CRD's annotations, and notes the Gateway API CRDs that say otherwise
// (conformance refuses such a mix; discovery reports it).
func readGatewayAPI(c *Cluster) (gatewayAPI, bool) {
	gw := c.CRD(gatewayCRD)
	if gw == nil {
		return gatewayAPI{}, false
	}
	g := gatewayAPI{version: gw.Annotations[bundleVersionKey], channel: gw.Annotations[channelKey]}
	for _, crd := range c.CRDs {
		if !strings.HasSuffix(crd.Name, gatewayGroup) {
			continue
		}
		if v, ch := crd.Annotations[bundleVersionKey], crd.Annotations[channelKey]; v != g.version || ch != g.channel {
			g.mixed = append(g.mixed, fmt.Sprintf("%s (%s, %s)", crd.Name, v, ch))
		}
	}
	return g, true
}

// inferencePoolVersion is the InferencePool API the cluster serves, and
// the Inference Extension bundle its CRD comes from ("" before v1.0).
func inferencePoolVersion(c *Cluster) (apiVersion, bundle string) {
	for _, v := range inferencePoolVersions {
		if crd := c.CRD(v.crd); crd != nil {
			return v.apiVersion, crd.Annotations[inferenceBundleKey]
		}
	}
	return "", ""
}

// discoverGateway describes the Inference Extension when the cluster
// serves an InferencePool and has a Gateway for routes to attach to.
func discoverGateway(c *Cluster) (*hub.GatewayCapability, []Note) {
	const field = "spec.gateway"
	poolVersion, bundle := inferencePoolVersion(c)
	api, haveAPI := readGatewayAPI(c)
	switch {
	case poolVersion == "":
		if haveAPI {
			return nil, []Note{{Field: "spec", Text: fmt.Sprintf("Gateway API %s is installed, but no InferencePool CRD: no gateway", api.version)}}
		}
		return nil, nil
	case !haveAPI:
		return nil, []Note{{Field: "spec", Text: fmt.Sprintf("%s is installed, but not the Gateway API: no gateway", poolVersion)}}
	case len(c.Gateways) == 0:
		return nil, []Note{{Field: "spec", Text: fmt.Sprintf("%s and Gateway API %s are installed, but no Gateway exists for routes to attach to: no gateway", poolVersion, api.version)}}
	}
	g := &hub.GatewayCapability{InferencePoolVersion: poolVersion, InferenceExtensionVersion: bundle, GatewayAPIVersion: api.version, Channel: api.channel}
	first := c.Gateways[0]
	g.ParentRef = &hub.GatewayRef{Name: first.Name, Namespace: first.Namespace}
	var notes []Note
	if bundle != "" {
		notes = append(notes, Note{Field: field + ".inferenceExtensionVersion", Text: "the InferencePool CRD's bundle-version"})
	} else if poolVersion == inferencePoolVersions[1].apiVersion {
		notes = append(notes, Note{Field: field + ".inferencePoolVersion", Text: "Inference Extension CRDs before v1.0 (no bundle-version annotation)"})
	}
	if api.version == "" || api.channel == "" {
		notes = append(notes, Note{Field: field, Text: fmt.Sprintf("CRD %s has no bundle-version or channel annotation: set gatewayAPIVersion and channel", gatewayCRD)})
	}
	if len(api.mixed) > 0 {
		notes = append(notes, Note{Field: field + ".gatewayAPIVersion", Text: "other Gateway API CRDs come from other bundles: " + strings.Join(api.mixed, ", ")})
	}
	if len(c.Gateways) > 1 {
		var others []string
		for _, gw := range c.Gateways[1:] {
			others = append(others, gw.Namespace+"/"+gw.Name)
		}
		notes = append(notes, Note{Field: field + ".parentRef", Text: "the first of several Gateways; the others: " + strings.Join(others, ", ")})
	}
	return g, notes
}
