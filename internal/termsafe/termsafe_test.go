package termsafe

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"models/qwen.yaml", "models/qwen.yaml"},
		{"modèle\tà/ü.yaml", "modèle\tà/ü.yaml"},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"name\n[error] all good", `name\n[error] all good`},
		{"x\r::error::y", `x\r::error::y`},
		{"\x7f\u009b\u0085", `\x7f\x9b\x85`},
		{"safe\u202etxt.exe", `safe\u202etxt.exe`},
		{"a\u200bb\u2066c\u2028d\ufeff", `a\u200bb\u2066c\u2028d\ufeff`},
		{"bad\xff\xfe", `bad\xff\xfe`},
		{"", ""},
	} {
		require.Equal(t, tc.want, Escape(tc.in), "%q", tc.in)
		require.Equal(t, tc.want, Escape(Escape(tc.in)) /* idempotent on its output */, "%q", tc.in)
	}
}

func FuzzEscape(f *testing.F) {
	f.Add("a\x1b[2Jb\n\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		require.Equal(t, out, Escape(out), "escaping its output changes nothing")
		require.False(t, needsEscape(out), "%q", out)
		if !needsEscape(s) {
			require.Equal(t, s, out)
		}
	})
}
