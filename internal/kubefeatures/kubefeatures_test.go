package kubefeatures

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func TestScan(t *testing.T) {
	for _, tc := range []struct {
		name, obj string
		want      []string
	}{
		{"core objects only", `{kind: Deployment, spec: {template: {spec: {containers: [{name: a, livenessProbe: {httpGet: {port: 8000}}}]}}}}`, nil},
		{"startupProbe", `{kind: Deployment, spec: {template: {spec: {containers: [{startupProbe: {httpGet: {port: 8000}}}]}}}}`, []string{"startupProbe"}},
		{"gRPC probe in a custom resource's pod template", `{kind: RayService, spec: {rayClusterConfig: {headGroupSpec: {template: {spec: {containers: [{readinessProbe: {grpc: {port: 9003}}}]}}}}}}`, []string{"gRPC probes"}},
		{"gRPC startup probe is both", `{spec: {containers: [{startupProbe: {grpc: {port: 1}}}]}}`, []string{"startupProbe", "gRPC probes"}},
		{"Service appProtocol", `{kind: Service, spec: {ports: [{port: 9002, appProtocol: kubernetes.io/h2c}]}}`, []string{"Service appProtocol"}},
		{"ReadWriteOncePod", `{kind: PersistentVolumeClaim, spec: {accessModes: [ReadWriteOncePod]}}`, []string{"ReadWriteOncePod access mode"}},
		{"ReadWriteMany is old", `{kind: PersistentVolumeClaim, spec: {accessModes: [ReadWriteMany]}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obj map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(tc.obj), &obj))
			require.Equal(t, tc.want, Scan(obj))
		})
	}
}

func TestDescribe(t *testing.T) {
	require.Equal(t, "any (core APIs only)", Describe(nil))
	require.Equal(t, "≥ 1.18 (startupProbe)", Describe([]string{"startupProbe"}))
	require.Equal(t, "≥ 1.24 (gRPC probes)", Describe([]string{"Service appProtocol", "gRPC probes", "startupProbe"}))
	require.Panics(t, func() { Describe([]string{"no such feature"}) })
	for _, f := range Features {
		require.Regexp(t, `^beta 1\.\d+( \(off by default\))?, GA 1\.\d+$`, f.History, f.Name)
		if strings.Contains(f.History, "off by default") {
			require.True(t, strings.HasSuffix(f.History, "GA "+f.Since.String()), "%s: Since is the release it went GA, the first on by default", f.Name)
		} else {
			require.Contains(t, f.History, "beta "+f.Since.String(), "%s: Since is the release it went beta, on by default", f.Name)
		}
	}
}

// TestCheckedReleases keeps the releases the matrix names equal to the
// ones the tests really use.
func TestCheckedReleases(t *testing.T) {
	gomod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/api v0\.(\d+)\.\d+`).FindSubmatch(gomod)
	require.NotNil(t, m, "go.mod requires no k8s.io/api")
	require.Equal(t, fmt.Sprint(int(SchemaRelease)), string(m[1]), "k8s.io/api in go.mod")

	install, err := os.ReadFile("../../hack/install-envtest.sh")
	require.NoError(t, err)
	m = regexp.MustCompile(`k8s=\$\{K8S_VERSION:-([0-9.]+)\}`).FindSubmatch(install)
	require.NotNil(t, m, "hack/install-envtest.sh has no default K8S_VERSION")
	require.Equal(t, ReporterTested, string(m[1]))
}
