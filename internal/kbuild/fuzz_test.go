package kbuild_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/internal/kbuild"
)

// FuzzBuildRunsOnlyTheRenderer: whatever a kustomization and the file it
// lists under `transformers` hold, a build either fails with a message or
// succeeds, and no program but the renderer runs. The seeds are the
// hostile declarations of TestHostileDeclarationsNeverRun; @MARKER@ stands
// for a file the hostile program would create.
func FuzzBuildRunsOnlyTheRenderer(f *testing.F) {
	decl := func(key, body string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n    " + key + ": |\n" + indent(body, 6)
	}
	sh := "exec:\n  path: /bin/sh\n  args: [\"-c\", \"touch @MARKER@; cat\"]\n"
	for _, seed := range [][2]string{
		{"resources: [m.yaml]\ntransformers: [fn.yaml]\n", decl("config.kubernetes.io/function", "exec:\n  path: airunway-render\n")},
		{"resources: [m.yaml]\ntransformers: [fn.yaml]\n", decl("config.kubernetes.io/function", sh)},
		{"resources: [m.yaml]\ntransformers: [fn.yaml]\n", decl(`"config.kubernetes.io/\x66unction"`, sh)},
		{"resources: [m.yaml]\ntransformers:\n- |\n" + indent(decl("config.kubernetes.io/function", sh), 2), ""},
		{"resources: [m.yaml]\nTRANSFORMERS: [fn.yaml]\n", decl("config.k8s.io/function", sh)},
		{"resources: [m.yaml]\ngenerators: [fn.yaml]\n", "apiVersion: v1\nkind: List\nitems:\n- " + strings.TrimPrefix(indent(decl("config.kubernetes.io/function", sh), 2), "  ")},
		{"resources: [m.yaml]\nvalidators: [fn.yaml]\n", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  configFn:\n" + indent(sh, 4)},
		{"resources: [m.yaml]\ntransformers: [fn.yaml]\n", "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata: {name: p}\nprefix: a-\nfieldSpecs: [{path: metadata/name}]\n"},
	} {
		f.Add(seed[0], seed[1])
	}
	self, err := os.Executable()
	if err != nil {
		f.Fatal(err)
	}
	f.Setenv(asFunction, "1")
	f.Fuzz(func(t *testing.T, kustomization, file string) {
		dir := t.TempDir()
		marker := filepath.Join(t.TempDir(), "PWNED")
		put := func(name, content string) {
			p := filepath.Join(dir, "app", name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "@MARKER@", marker)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		put("kustomization.yaml", kustomization)
		put("fn.yaml", file)
		put("m.yaml", model)
		_, err := kbuild.Build(filepath.Join(dir, "app"), kbuild.Options{Function: self, Root: dir})
		if _, statErr := os.Stat(marker); !errors.Is(statErr, os.ErrNotExist) {
			t.Fatalf("a program other than the renderer ran (build error: %v)", err)
		}
		if err != nil && err.Error() == "" {
			t.Fatal("an error without a message")
		}
	})
}
