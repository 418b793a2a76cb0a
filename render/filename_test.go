package render

import (
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzObjectFileName: whatever an object's namespace, kind and name, the
// file name built from them is refused or is a local path of one or two
// segments, the object's own: it stays inside the output directory on any
// system, and gives back the namespace and name it was built from.
func FuzzObjectFileName(f *testing.F) {
	for _, seed := range [][3]string{
		{"ml", "Deployment", "qwen"},
		{"", "ClusterRole", "system:aggregate-to-edit"},
		{"..", "ConfigMap", "x"},
		{"ml", "ConfigMap", "x/../../.github/workflows/pwned"},
		{"ml", "../ConfigMap", "x"},
		{"ml", "ConfigMap", `x\..\..\pwned`},
		{"ml", "ConfigMap", ".."},
		{"ml", "ConfigMap", "a\x00b"},
		{"ml", "ConfigMap", "%2e%2e"},
		{"ml", "Job", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, namespace, kind, name string) {
		file, err := ObjectFileName(namespace, kind, name)
		if err != nil {
			if _, ok := err.(*FieldError); !ok || err.Error() == "" {
				t.Fatalf("not a field error with a message: %#v", err)
			}
			return
		}
		if !filepath.IsLocal(filepath.FromSlash(file)) || !path.IsAbs("/"+file) || path.Clean(file) != file {
			t.Fatalf("%q (from %q, %q, %q) is not a clean local path", file, namespace, kind, name)
		}
		if strings.ContainsAny(file, `\`) || strings.ContainsFunc(file, func(r rune) bool { return r < 0x20 }) {
			t.Fatalf("%q holds a separator of another system or a control character", file)
		}
		segments := strings.Split(file, "/")
		want := 1
		if namespace != "" {
			want = 2
			if segments[0] != namespace {
				t.Fatalf("%q is not in the namespace's directory %q", file, namespace)
			}
		}
		base := segments[len(segments)-1]
		if len(segments) != want || base != strings.ToLower(kind)+"_"+name+".yaml" {
			t.Fatalf("%q is not <namespace>/<kind>_<name>.yaml for %q, %q, %q", file, namespace, kind, name)
		}
	})
}
