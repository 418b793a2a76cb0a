// Package autoscale renders the autoscaler of a model server whose
// ModelDeployment sets `spec.scaling.autoscaling`: a KEDA ScaledObject when
// the capability file declares KEDA, else a HorizontalPodAutoscaler on the
// declared metrics API. Both scale their target through its scale
// subresource, and the provider renders the target without the replica
// count they own, so Argo CD and Flux never write it back.
//
// The load signal is the engine's own Prometheus gauge (vLLM's names, which
// llm-d and Dynamo's vLLM workers export too):
//
//	queueDepth       vllm:num_requests_waiting   sum over the pods, per replica
//	runningRequests  vllm:num_requests_running   sum over the pods, per replica
//	kvCacheUsage     vllm:kv_cache_usage_perc    average over the pods, 0–1
//
// KEDA queries Prometheus with the `namespace` label a Prometheus scrape
// adds and vLLM's `model_name` label (the served model name). A Prometheus
// adapter serves the same gauges as Pods metrics with ':' as '_', the
// convention Dynamo's autoscaling guide uses.
package autoscale

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// Target is the object the autoscaler scales through its scale
// subresource.
type Target struct {
	APIVersion, Kind, Name string
	// ModelName is the `model_name` label of the engine's metrics: the
	// served model name.
	ModelName string
}

// gauge is the engine's metric for one load signal.
type gauge struct {
	prometheus, podsMetric string
	// average: the signal is a fraction per pod, averaged; otherwise a
	// count, summed and divided by the replicas.
	average bool
}

var gauges = map[string]gauge{
	hub.MetricQueueDepth:      {"vllm:num_requests_waiting", "vllm_num_requests_waiting", false},
	hub.MetricRunningRequests: {"vllm:num_requests_running", "vllm_num_requests_running", false},
	hub.MetricKVCacheUsage:    {"vllm:kv_cache_usage_perc", "vllm_kv_cache_usage_perc", true},
}

// Check reports what the cluster cannot autoscale: nothing declared, KEDA
// without the Prometheus it queries, or scale to zero without KEDA.
func Check(req *providers.Request, l *diag.List) { CheckFor(req, ServedName(req.MD), l) }

// CheckFor is Check for a model whose engine's metrics carry modelName as
// their `model_name` (a provider that names the served model itself):
// on the external metrics API the HPA selects the metric by it, so it
// must be a label value.
func CheckFor(req *providers.Request, modelName string, l *diag.List) {
	a := req.MD.Spec.Autoscaling()
	if a == nil {
		return
	}
	if c := req.Caps.Autoscaling; c != nil && c.KEDA == nil && c.MetricsAPI == hub.MetricsAPIExternal {
		if msgs := validation.IsValidLabelValue(modelName); len(msgs) > 0 {
			l.Errorf("spec.model.servedName", "the HorizontalPodAutoscaler selects the engine's External metric by `model_name=%s`, which is no label value (%s); set a served name of letters, digits, '-', '_' and '.'", modelName, strings.Join(msgs, "; "))
		}
	}
	caps := req.Caps.Autoscaling
	switch {
	case caps == nil:
		l.Errorf("spec.scaling.autoscaling", "the capability file declares nothing that autoscales (`spec.autoscaling`): declare `keda` (with the Prometheus it queries) or the `metricsAPI` a Prometheus adapter serves, or set a fixed `spec.scaling.replicas`")
	case caps.KEDA != nil && (caps.Prometheus == nil || caps.Prometheus.ServerAddress == ""):
		l.Errorf("spec.scaling.autoscaling", "the capability file declares KEDA but not the Prometheus its triggers query: set `spec.autoscaling.prometheus.serverAddress` (for example http://prometheus-operated.monitoring.svc:9090)")
	case caps.KEDA == nil && a.MinReplicas != nil && *a.MinReplicas == 0 && !caps.HPAScaleToZero:
		l.Errorf("spec.scaling.autoscaling.minReplicas", "is 0, but the capability file declares neither KEDA (`spec.autoscaling.keda`) nor HorizontalPodAutoscalers that scale to zero (`spec.autoscaling.hpaScaleToZero`, Kubernetes 1.37 and later, on External metrics); set 1 or more, or declare one of them")
	}
}

// Render returns the ScaledObject or HorizontalPodAutoscaler for target;
// nil when the model is not autoscaled. Check has passed.
func Render(req *providers.Request, target Target) providers.Object {
	a := req.MD.Spec.Autoscaling()
	if a == nil || req.Caps.Autoscaling == nil {
		return nil
	}
	meta := providers.GeneratedMeta(req.MD, req.Engine, target.Name)
	ref := map[string]any{"apiVersion": target.APIVersion, "kind": target.Kind, "name": target.Name}
	delay := int64(*a.ScaleDownDelaySeconds)
	scaleDown := map[string]any{"scaleDown": map[string]any{"stabilizationWindowSeconds": delay}}
	g := gauges[a.Metric]
	if req.Caps.Autoscaling.KEDA != nil {
		return providers.Object{
			"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": meta,
			"spec": map[string]any{
				"scaleTargetRef":  ref,
				"minReplicaCount": int64(*a.MinReplicas),
				"maxReplicaCount": int64(*a.MaxReplicas),
				// KEDA's cooldown applies to the last replica (to zero); the
				// HPA's stabilization window to the others.
				"cooldownPeriod": delay,
				"advanced":       map[string]any{"horizontalPodAutoscalerConfig": map[string]any{"behavior": scaleDown}},
				"triggers":       []any{prometheusTrigger(req, g, target, *a.Target)},
			},
		}
	}
	return providers.Object{
		"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta,
		"spec": map[string]any{
			"scaleTargetRef": ref,
			"minReplicas":    int64(*a.MinReplicas),
			"maxReplicas":    int64(*a.MaxReplicas),
			"behavior":       scaleDown,
			"metrics":        []any{hpaMetric(req.Caps.Autoscaling.MetricsAPI, g, target, *a.Target)},
		},
	}
}

// hpaMetric is the HPA's metric: the engine's gauge as a Pods metric of the
// model's pods, or, on the external metrics API, as an External metric of
// the model (`model_name`), which needs no pod to read and so lets the HPA
// wake a model at zero replicas. A count is divided by the replicas
// (AverageValue); a fraction is compared as the adapter averages it
// (Value).
func hpaMetric(api string, g gauge, target Target, value int32) map[string]any {
	if api != hub.MetricsAPIExternal {
		return map[string]any{"type": "Pods", "pods": map[string]any{
			"metric": map[string]any{"name": g.podsMetric},
			"target": map[string]any{"type": "AverageValue", "averageValue": quantity(g, value)},
		}}
	}
	goal := map[string]any{"type": "AverageValue", "averageValue": quantity(g, value)}
	if g.average {
		goal = map[string]any{"type": "Value", "value": quantity(g, value)}
	}
	return map[string]any{"type": "External", "external": map[string]any{
		"metric": map[string]any{"name": g.podsMetric, "selector": map[string]any{"matchLabels": map[string]any{"model_name": target.ModelName}}},
		"target": goal,
	}}
}

// prometheusTrigger queries the engine's gauge for this model. A count is
// summed and KEDA divides it by the replicas (AverageValue); a fraction is
// averaged and compared as it is (Value). Activation at 0: any load wakes a
// model scaled to zero.
func prometheusTrigger(req *providers.Request, g gauge, target Target, value int32) map[string]any {
	selector := fmt.Sprintf("{namespace=%q,model_name=%q}", req.MD.Namespace, target.ModelName)
	query, metricType := "sum("+g.prometheus+selector+")", "AverageValue"
	if g.average {
		query, metricType = "avg("+g.prometheus+selector+")", "Value"
	}
	return map[string]any{
		"type":       "prometheus",
		"metricType": metricType,
		"metadata": map[string]any{
			"serverAddress":       req.Caps.Autoscaling.Prometheus.ServerAddress,
			"query":               query,
			"threshold":           threshold(g, value),
			"activationThreshold": "0",
		},
	}
}

// threshold is the target as KEDA's string: a count, or a fraction for a
// percentage.
func threshold(g gauge, value int32) string {
	if g.average {
		return strconv.FormatFloat(float64(value)/100, 'f', -1, 64)
	}
	return strconv.Itoa(int(value))
}

// quantity is the target as a Kubernetes quantity: a count, or a
// percentage in thousandths (70 % is 700m).
func quantity(g gauge, value int32) string {
	if g.average {
		return strconv.Itoa(int(value)*10) + "m"
	}
	return strconv.Itoa(int(value))
}

// ServedName is the `model_name` label of vLLM's metrics: the served model
// name, else the model ID vLLM serves under.
func ServedName(md *hub.ModelDeployment) string {
	if n := md.Spec.Model.ServedName; n != "" {
		return n
	}
	return md.Spec.Model.ID
}
