package hub

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseRelease(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  bool
	}{
		{in: "1.2.3", want: "1.2.3"},
		{in: "v1.2.3", want: "1.2.3"},
		{in: "0.10.0", want: "0.10.0"},
		{in: "1.2", want: "1.2.0"},
		{in: "v0.6", want: "0.6.0"},
		{in: "0.0.0", want: "0.0.0"},
		{in: "10.200.3000", want: "10.200.3000"},
		{in: "", err: true},
		{in: "v", err: true},
		{in: "1", err: true},
		{in: "1.2.3.4", err: true},
		{in: "01.2.3", err: true},
		{in: "1.02.3", err: true},
		{in: "1.2.03", err: true},
		{in: "1.2.3-rc.1", err: true},
		{in: "1.2.3+build", err: true},
		{in: "1.2.x", err: true},
		{in: "1..3", err: true},
		{in: "-1.2.3", err: true},
		{in: "+1.2.3", err: true},
		{in: "1.+2.3", err: true},
		{in: " 1.2.3", err: true},
		{in: "vv1.2.3", err: true},
		{in: "V1.2.3", err: true},
		{in: "1.2.3 ", err: true},
		{in: "1.2.3\n", err: true},
	} {
		t.Run(fmt.Sprintf("%q", tc.in), func(t *testing.T) {
			got, err := ParseRelease(tc.in)
			if tc.err {
				require.Error(t, err)
				require.Contains(t, err.Error(), "is not a release version of the form MAJOR.MINOR.PATCH")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got.String())
		})
	}
}

func TestReleaseOrderAndString(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{
		{"1.2.3", "1.2.4", true},
		{"1.2.9", "1.10.0", true},
		{"0.99.99", "1.0.0", true},
		{"1.2.3", "1.2.3", false},
		{"2.0.0", "1.9.9", false},
	} {
		t.Run(tc.a+"<"+tc.b, func(t *testing.T) {
			a, err := ParseRelease(tc.a)
			require.NoError(t, err)
			b, err := ParseRelease(tc.b)
			require.NoError(t, err)
			require.Equal(t, tc.less, a.LessThan(b))
			require.Equal(t, tc.a, a.String())
		})
	}
}

func TestVersionRangeContains(t *testing.T) {
	r := MustVersionRange("1.1.0", "1.5.0")
	require.Equal(t, ">= 1.1.0, < 1.5.0", r.String())
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"1.0.9", false},
		{"0.99.0", false},
		{"1.1.0", true},
		{"1.1", true},
		{"1.4.99", true},
		{"1.5.0", false},
		{"1.5.1", false},
		{"2.0.0", false},
	} {
		t.Run(tc.v, func(t *testing.T) {
			v, err := ParseRelease(tc.v)
			require.NoError(t, err)
			require.Equal(t, tc.want, r.Contains(v))
		})
	}
	require.Panics(t, func() { MustVersionRange("1.x", "2.0.0") })
}
