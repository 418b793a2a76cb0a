package discover

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// What says a cluster can autoscale a model server.
const (
	// kedaCRD is KEDA's ScaledObject, which the renderer writes.
	kedaCRD = "scaledobjects.keda.sh"
	// customMetricsSuffix ends the name of the APIService of every
	// version of custom.metrics.k8s.io (v1beta1.custom.metrics.k8s.io).
	customMetricsSuffix = "." + hub.MetricsAPICustom
)

// keda is KEDA's operator, as its Helm chart deploys it.
var keda = operator{provider: "keda", Detection: providers.Detection{CRD: kedaCRD, Images: []string{"/kedacore/keda"}, Names: []string{"keda-operator"}, Chart: "keda"}}

// discoverAutoscaling finds KEDA (its ScaledObject CRD, the release from
// its operator's Deployment) and a custom metrics API (its APIService).
// Where Prometheus is, no cluster says: a note asks for it.
func discoverAutoscaling(c *Cluster) (*hub.AutoscalingCapability, []Note) {
	var a hub.AutoscalingCapability
	var notes []Note
	if c.HasCRD(kedaCRD) {
		a.KEDA = &hub.KEDACapability{}
		found, r, _ := keda.findRelease(c.Deployments)
		switch {
		case found && r.version != "":
			a.KEDA.Version = r.version
			notes = append(notes, Note{Field: "spec.autoscaling.keda.version", Text: "from " + r.from})
		default:
			notes = append(notes, Note{Field: "spec.autoscaling.keda", Text: fmt.Sprintf("CRD %s is installed, but no KEDA operator Deployment with a release was recognised", kedaCRD)})
		}
		notes = append(notes, Note{Field: "spec.autoscaling.keda", Text: "set `prometheus.serverAddress`, the Prometheus KEDA's triggers query for vLLM's metrics: no cluster says where it is, and autoscaled models are refused until it is set"})
	}
	if s := customMetrics(c.APIServices); s != nil {
		a.MetricsAPI = hub.MetricsAPICustom
		notes = append(notes, Note{Field: "spec.autoscaling.metricsAPI", Text: fmt.Sprintf("APIService %s is registered; HorizontalPodAutoscalers read vLLM's gauges from it as Pods metrics named with '_' for ':' (vllm_num_requests_waiting)", s.Name)})
	}
	if a.KEDA == nil && a.MetricsAPI == "" {
		return nil, nil
	}
	return &a, notes
}

// customMetrics returns the APIService of custom.metrics.k8s.io, nil when
// none is registered.
func customMetrics(services []metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
	i := slices.IndexFunc(services, func(s metav1.PartialObjectMetadata) bool { return strings.HasSuffix(s.Name, customMetricsSuffix) })
	if i < 0 {
		return nil
	}
	return &services[i]
}

// compareAutoscaling holds the declared autoscaling against the cluster:
// KEDA's CRD and release. The metrics API is not compared: the status
// reporter, which compares without Read, does not watch APIServices.
func compareAutoscaling(a *hub.AutoscalingCapability, c *Cluster) []Difference {
	if a == nil || a.KEDA == nil {
		return nil
	}
	const field = "spec.autoscaling.keda"
	if !c.HasCRD(kedaCRD) {
		return []Difference{{Field: field, Declared: "installed", Live: "none", Message: fmt.Sprintf("CRD %s is not installed: KEDA is gone, and the ScaledObjects of autoscaled models do nothing", kedaCRD)}}
	}
	if a.KEDA.Version == "" {
		return nil
	}
	found, r, _ := keda.findRelease(c.Deployments)
	if found && r.version != "" && !SameRelease(r.version, a.KEDA.Version) {
		return []Difference{{Field: field + ".version", Declared: a.KEDA.Version, Live: r.version, Message: "KEDA runs release " + r.version + " (" + r.from + ")"}}
	}
	return nil
}
