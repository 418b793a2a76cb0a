package ownci

import "testing"

func TestEnabledReadsOnlyTheProjectsVariable(t *testing.T) {
	for _, tc := range []struct {
		ci, own string
		want    bool
	}{
		{ci: "true", own: "", want: false},
		{ci: "", own: "1", want: true},
		{ci: "true", own: "0", want: false},
	} {
		t.Setenv("CI", tc.ci)
		t.Setenv(Variable, tc.own)
		if got := Enabled(); got != tc.want {
			t.Errorf("CI=%q %s=%q: Enabled() = %v, want %v", tc.ci, Variable, tc.own, got, tc.want)
		}
	}
}
