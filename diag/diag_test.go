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

// TestProblemPlace: a problem names its file and, when known, the line.
func TestProblemPlace(t *testing.T) {
	md := Resource{APIVersion: "airunway.ai/v1alpha1", Kind: "ModelDeployment", Namespace: "ns", Name: "m"}
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Severity: Error, Resource: md, File: "m.yaml", Line: 12, Field: "spec.env[1].value", Message: "must be a string"},
			"[error] airunway.ai/v1alpha1/ModelDeployment/ns/m spec.env[1].value: must be a string (file m.yaml, line 12)"},
		{Problem{Severity: Error, Resource: md, File: "m.yaml", Field: "spec.env[1].value", Message: "must be a string"},
			"[error] airunway.ai/v1alpha1/ModelDeployment/ns/m spec.env[1].value: must be a string (file m.yaml)"},
		{Problem{Severity: Warning, Code: IdleGPUs, Line: 3, Message: "no file"}, "[warning idle-gpus]: no file (line 3)"},
		{Problem{Severity: Error, Message: "nowhere"}, "[error]: nowhere"},
	} {
		require.Equal(t, tc.want, tc.p.String())
	}
}
