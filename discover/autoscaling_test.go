package discover_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	. "github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/discover/capsfile"
	"github.com/airunway-render/airunway-render/discover/discovertest"
)

// KEDA and a custom metrics API are found; the file declares them, a note
// asks for the Prometheus address, and Compare holds KEDA to the cluster.
func TestDiscoverAutoscaling(t *testing.T) {
	const prod = "../examples/kustomize/clusters/prod/capabilities.yaml"
	declared, c := discovertest.Example(t, prod)
	require.Nil(t, declared.Spec.Autoscaling)
	found, _ := Discover(c, "prod")
	require.Nil(t, found.Spec.Autoscaling, "no KEDA, no metrics API: nothing")

	c.CRDs = append(c.CRDs, discovertest.CRD("scaledobjects.keda.sh", nil))
	c.Deployments = append(c.Deployments, discovertest.Deployment("keda", "keda-operator", discovertest.KV{"app.kubernetes.io/name": "keda-operator"}, "ghcr.io/kedacore/keda:2.21.0"))
	c.APIServices = append(c.APIServices, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.custom.metrics.k8s.io"}})
	found, notes := Discover(c, "prod")
	require.Equal(t, &hub.AutoscalingCapability{KEDA: &hub.KEDACapability{Version: "2.21.0"}, MetricsAPI: hub.MetricsAPICustom}, found.Spec.Autoscaling)
	require.Contains(t, notes, Note{Field: "spec.autoscaling.keda.version", Text: "from Deployment keda/keda-operator"})
	var prometheus bool
	for _, n := range notes {
		prometheus = prometheus || n.Field == "spec.autoscaling.keda" && strings.HasPrefix(n.Text, "set `prometheus.serverAddress`")
	}
	require.True(t, prometheus, "a note asks for the Prometheus address: %v", notes)

	// Merged into the hand-written file: added; merged again: nothing.
	text, err := os.ReadFile(prod)
	require.NoError(t, err)
	merged, changes, err := capsfile.Merge(text, declared, c)
	require.NoError(t, err)
	require.Contains(t, changes, Note{Field: "spec.autoscaling", Text: "added: the cluster can autoscale (KEDA, custom.metrics.k8s.io)"})
	require.Contains(t, string(merged), "autoscaling:\n    keda:\n      version: 2.21.0\n    metricsAPI: custom.metrics.k8s.io\n")

	declared.Spec.Autoscaling = &hub.AutoscalingCapability{KEDA: &hub.KEDACapability{Version: "2.20.0"}, Prometheus: &hub.PrometheusServer{ServerAddress: "http://prometheus:9090"}}
	require.Equal(t, []Difference{{Field: "spec.autoscaling.keda.version", Declared: "2.20.0", Live: "2.21.0", Message: "KEDA runs release 2.21.0 (Deployment keda/keda-operator)"}}, Compare(declared, c))
	c.CRDs = slices.DeleteFunc(c.CRDs, func(crd metav1.PartialObjectMetadata) bool { return crd.Name == "scaledobjects.keda.sh" })
	diffs := Compare(declared, c)
	require.Len(t, diffs, 1)
	require.Equal(t, "spec.autoscaling.keda", diffs[0].Field)
}
