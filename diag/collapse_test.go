package diag

import (
	"fmt"
	"strings"
	"testing"
)

// TestCollapsed: past CollapseAbove warnings of one code on one cluster
// and pool make one line, in the first one's place, that counts them and
// names the first few; fewer, other clusters and pools, errors and
// uncoded problems stay.
func TestCollapsed(t *testing.T) {
	warn := func(code Code, cluster, name string) Problem {
		return Problem{Severity: Warning, Code: code, Cluster: cluster, Field: "spec.resources",
			Resource: Resource{APIVersion: "airunway.ai/v1alpha1", Kind: "ModelDeployment", Namespace: "ml", Name: name},
			Message:  fmt.Sprintf("(cluster %q) %s idles GPUs", cluster, name)}
	}
	var l List
	l = append(l, Problem{Severity: Error, Message: "boom"})
	for i := range 5 {
		l = append(l, warn(IdleGPUs, "east", fmt.Sprintf("m%d", i)))
	}
	l = append(l, warn(IdleGPUs, "west", "w0"), warn(NoModelCache, "east", "c0"))
	for i := range 3 {
		l = append(l, warn(IdleGPUs, "north", fmt.Sprintf("n%d", i)))
	}
	// One code on one cluster, two pools: a line for each.
	for i := range 4 {
		w := warn(IdleGPUs, "south", fmt.Sprintf("s%d", i))
		w.Pool = []string{"h100", "l4"}[i%2]
		l = append(l, w)
		w.Resource.Name, w.Message, w.Pool = fmt.Sprintf("t%d", i), "(cluster \"south\") idles GPUs of pool h100", "h100"
		l = append(l, w)
	}
	got := l.Collapsed("-v prints each")
	var lines []string
	for _, p := range got {
		lines = append(lines, p.String())
	}
	want := []string{
		"[error]: boom",
		`[warning idle-gpus]: 5 ModelDeployments on cluster "east": ml/m0, ml/m1, ml/m2 and 2 more; the first: spec.resources m0 idles GPUs; -v prints each`,
		`[warning idle-gpus] airunway.ai/v1alpha1/ModelDeployment/ml/w0 spec.resources: (cluster "west") w0 idles GPUs`,
		`[warning no-model-cache] airunway.ai/v1alpha1/ModelDeployment/ml/c0 spec.resources: (cluster "east") c0 idles GPUs`,
	}
	for i := range 3 {
		want = append(want, fmt.Sprintf(`[warning idle-gpus] airunway.ai/v1alpha1/ModelDeployment/ml/n%d spec.resources: (cluster "north") n%d idles GPUs`, i, i))
	}
	want = append(want,
		`[warning idle-gpus]: 6 ModelDeployments on cluster "south", pool "h100": ml/s0, ml/t0, ml/t1 and 3 more; the first: spec.resources s0 idles GPUs; -v prints each`,
		`[warning idle-gpus] airunway.ai/v1alpha1/ModelDeployment/ml/s1 spec.resources: (cluster "south") s1 idles GPUs`,
		`[warning idle-gpus] airunway.ai/v1alpha1/ModelDeployment/ml/s3 spec.resources: (cluster "south") s3 idles GPUs`)
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("collapsed:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if n := len(l.Collapsed("")); n != len(want) {
		t.Errorf("%d problems", n)
	}
}
