package diag

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListSortedAttachAndString(t *testing.T) {
	var l List
	l.Warnf(IdleGPUs, "spec.b", "second %s", "warning")
	l.Infof("", "note")
	l.Errorf("spec.z", "must be set")
	l.Errorf("spec.a", "must be %d", 1)
	md := Resource{APIVersion: "airunway.ai/v1alpha1", Kind: "ModelDeployment", Namespace: "ns", Name: "m"}
	l.Attach(md, "m.yaml")
	l = append(l, Problem{Severity: Error, File: "a.yaml", Message: "first by file"})

	require.True(t, l.HasErrors())
	require.Len(t, l.Errors(), 3)
	sorted := l.Sorted()
	var got []string
	for _, p := range sorted {
		got = append(got, p.String())
	}
	require.Equal(t, []string{
		"[error]: first by file (file a.yaml)",
		"[error] airunway.ai/v1alpha1/ModelDeployment/ns/m spec.a: must be 1 (file m.yaml)",
		"[error] airunway.ai/v1alpha1/ModelDeployment/ns/m spec.z: must be set (file m.yaml)",
		"[warning idle-gpus] airunway.ai/v1alpha1/ModelDeployment/ns/m spec.b: second warning (file m.yaml)",
		"[info] airunway.ai/v1alpha1/ModelDeployment/ns/m: note (file m.yaml)",
	}, got)
	require.False(t, List{{Severity: Warning}}.HasErrors())
}
