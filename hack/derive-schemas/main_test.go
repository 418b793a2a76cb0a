package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/testing/ownci"
)

const fixtureCRDs = "testdata/crds"

func TestReleaseFromFilename(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"workspace-v0.10.0.yaml", "v0.10.0"},
		{"workspace-v0.6.2.yaml", "v0.6.2"},
		{"dynamographdeployment-main-2a6da14c.yaml", "main-2a6da14c"},
		{"inferencepool-inference.networking.k8s.io-v1-v1.5.0.yaml", "v1.5.0"},
		{"inferencepool-inference.networking.x-k8s.io-v1alpha2-v0.5.1.yaml", "v0.5.1"},
		{"httproute-standard-v1.5.1.yaml", "v1.5.1"},
		{"inferenceobjective-llm-d.ai-v1alpha2-router-v0.10.0.yaml", "v0.10.0"},
		// "-deprecated" is a local marker, not part of the upstream tag.
		{"modelservice-llm-d.ai-v1alpha1-v0.0.15-deprecated.yaml", "v0.0.15"},
		{"thing-v1.0.0-rc.1.yaml", "v1.0.0-rc.1"},
		{"widget-example.com-v1-v1.2.3.yaml", "v1.2.3"},
	} {
		got, err := releaseFromFilename(tc.name)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	for _, bad := range []string{"workspace.yaml", "inferencepool-v1.yaml", "thing-v1alpha2.yaml", "x-main.yaml"} {
		_, err := releaseFromFilename(bad)
		require.Error(t, err, bad)
	}
}

// TestSchemasUpToDate always checks the derivation itself on a small
// fixture; when the upstream CRDs are present next to the repository (as on
// the machine that generated schemas/), it also checks that the committed
// schemas/ is exactly what the program produces.
func TestSchemasUpToDate(t *testing.T) {
	t.Run("fixture", testFixture)
	t.Run("drift", func(t *testing.T) {
		root := filepath.Join("..", "..")
		crds := filepath.Join(root, "..", "shared", "crds")
		if _, err := os.Stat(crds); err != nil {
			ownci.Skip(t, "upstream CRDs not available at %s (they live outside the repository); drift check skipped", crds)
		}
		// Module sources included: this runs `go mod download`, which
		// needs the Go module proxy (or a warm module cache).
		absRoot, err := filepath.Abs(root)
		require.NoError(t, err)
		absCRDs, err := filepath.Abs(crds)
		require.NoError(t, err)
		// In an empty directory with the repository's relative paths, but
		// for the pinned Git files, which only a -pinned directory can
		// re-derive: they (and the README rows they keep) are carried over.
		t.Chdir(t.TempDir())
		keepPinned(t, filepath.Join(absRoot, "schemas"), "schemas")
		var stderr bytes.Buffer
		require.Equal(t, 0, run([]string{"-crds", absCRDs, "-out", "schemas"}, &bytes.Buffer{}, &stderr), stderr.String())
		files := readTree(t, "schemas")
		diffs, err := compare(filepath.Join(absRoot, "schemas"), files, nil)
		require.NoError(t, err)
		require.Empty(t, diffs, "schemas/ is out of date; run: %s", regenerateCommand)
	})
}

func decodeNumbers(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m))
	return m
}

func testFixture(t *testing.T) {
	useFixtureModules(t)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", out}, &stdout, &stderr), stderr.String())

	files := readTree(t, out)
	require.ElementsMatch(t, []string{
		"README.md",
		"example/example.com_widget_v1_v1.2.3.json",
		"example/example.com_widget_v1beta1_v1.2.3.json",
		"example/example.com_sprocket_v1_v2.0.0.json",
		// Module sources: only the declared v1, experimental in its own directory.
		"example/example.com_gadget_v1_v1.0.0.json",
		"example-experimental/example.com_gadget_v1_v1.0.0.json",
	}, keys(files))

	raw := files["example/example.com_widget_v1_v1.2.3.json"]
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Equal(t, "example.com", doc["group"])
	require.Equal(t, "Widget", doc["kind"])
	require.Equal(t, "v1", doc["version"])
	require.Equal(t, "v1.2.3", doc["release"])
	require.Equal(t, "example/widget-example.com-v1-v1.2.3.yaml", doc["source"])
	require.Equal(t, true, doc["served"])
	require.Equal(t, true, doc["storage"])
	require.Equal(t, false, doc["deprecated"])
	require.NotContains(t, doc, "channel", "channel-less files must keep their bytes")

	// What an installable CRD is rebuilt from: kept without prose or
	// tooling annotations.
	require.Equal(t, map[string]any{
		"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget",
		"shortNames": []any{"wdg"}, "categories": []any{"examples"},
	}, doc["names"])
	require.Equal(t, "Cluster", doc["scope"])
	require.Equal(t, map[string]any{"api-approved.kubernetes.io": "unapproved, test fixture"}, doc["annotations"])
	require.Equal(t, map[string]any{
		"status": map[string]any{},
		"scale":  map[string]any{"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"},
	}, doc["subresources"])
	require.Equal(t, []any{map[string]any{"name": "Size", "type": "integer", "jsonPath": ".spec.size", "priority": json.Number("1")}},
		decodeNumbers(t, raw)["additionalPrinterColumns"], "printer column descriptions are prose and must be stripped")
	require.Equal(t, []any{map[string]any{"jsonPath": ".spec.description"}}, doc["selectableFields"])
	require.NotContains(t, string(raw), "How big the widget is")

	schema := doc["openAPIV3Schema"].(map[string]any)
	require.Zero(t, countDescriptionKeywords(schema), "description keywords left in %s", raw)
	spec := schema["properties"].(map[string]any)["spec"].(map[string]any)
	props := spec["properties"].(map[string]any)
	require.Equal(t, map[string]any{"type": "string"}, props["description"], "the property named description must survive")
	require.Equal(t, []any{"description"}, spec["required"])
	require.Equal(t, []any{map[string]any{"rule": "self.size <= 10", "message": "size must be at most 10"}}, spec["x-kubernetes-validations"])
	require.Equal(t, map[string]any{"description": "default data, not a keyword"}, props["info"].(map[string]any)["default"])
	require.Equal(t, map[string]any{"type": "string"}, props["labels"].(map[string]any)["additionalProperties"])
	require.Equal(t, []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}, props["port"].(map[string]any)["anyOf"])
	require.Contains(t, string(raw), `"maximum": 4294967295000`, "numbers must not be reformatted")
	require.Contains(t, string(raw), `"rule": "self.size <= 10"`, "CEL must not be HTML-escaped")
	require.True(t, strings.HasPrefix(string(raw), "{\n  \""), "2-space indented")

	var old map[string]any
	require.NoError(t, json.Unmarshal(files["example/example.com_widget_v1beta1_v1.2.3.json"], &old))
	require.Equal(t, true, old["deprecated"])
	require.Equal(t, false, old["storage"])
	require.Equal(t, map[string]any{"type": "object"}, old["openAPIV3Schema"])
	for _, k := range []string{"subresources", "additionalPrinterColumns", "selectableFields", "deprecationWarning"} {
		require.NotContains(t, old, k, "unset or prose keys are left out")
	}
	require.Equal(t, doc["names"], old["names"])
	require.NotContains(t, string(files["example/example.com_widget_v1beta1_v1.2.3.json"]), "old prose")

	readme := string(files["README.md"])
	require.Contains(t, readme, regenerateCommand)
	require.Contains(t, readme, "Apache License 2.0")
	require.Contains(t, readme, "`example/widget-example.com-v1-v1.2.3.yaml`")
	src, err := os.ReadFile(filepath.Join(fixtureCRDs, "example", "widget-example.com-v1-v1.2.3.yaml"))
	require.NoError(t, err)
	require.Contains(t, readme, sha256hex(src))
	require.Contains(t, readme, "| Release | Channel |")
	require.Contains(t, readme, "| `example/example.com_sprocket_v1_v2.0.0.json` | `example/sprocket-standard-v2.0.0.yaml` | `example.com` | Sprocket | v1 | v2.0.0 | standard |")

	// Channels: from the file name for ../shared/crds, from the table for
	// module sources, written only when set.
	for _, tc := range []struct{ file, channel, source string }{
		{"example/example.com_sprocket_v1_v2.0.0.json", "standard", "example/sprocket-standard-v2.0.0.yaml"},
		{"example/example.com_gadget_v1_v1.0.0.json", "standard", "example.com/gadgets@v1.0.0 crds/standard/gadgets.yaml"},
		{"example-experimental/example.com_gadget_v1_v1.0.0.json", "experimental", "example.com/gadgets@v1.0.0 crds/experimental/gadgets.yaml"},
	} {
		var d map[string]any
		require.NoError(t, json.Unmarshal(files[tc.file], &d), tc.file)
		require.Equal(t, tc.channel, d["channel"], tc.file)
		require.Equal(t, tc.source, d["source"], tc.file)
		require.Equal(t, "v1", d["version"], tc.file)
		require.Zero(t, countDescriptionKeywords(d["openAPIV3Schema"].(map[string]any)), tc.file)
		require.Contains(t, readme, "| `"+tc.file+"` | `"+tc.source+"` |")
	}
	exp := string(files["example-experimental/example.com_gadget_v1_v1.0.0.json"])
	require.Contains(t, exp, `"color"`, "the experimental file must come from the experimental CRD")
	require.NotContains(t, string(files["example/example.com_gadget_v1_v1.0.0.json"]), `"color"`)
	modSrc, err := os.ReadFile("testdata/modules/example.com/gadgets@v1.0.0/crds/experimental/gadgets.yaml")
	require.NoError(t, err)
	require.Contains(t, readme, sha256hex(modSrc))
	require.Contains(t, readme, "- `example.com/gadgets`: Apache-2.0 data from example.com/gadgets-upstream.")
	require.Contains(t, readme, "`-modules=false`")
	require.Contains(t, readme, "`additionalPrinterColumns` (descriptions removed)")

	// Idempotent: a second run writes the same bytes and -check agrees.
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", out}, &stdout, &stderr), stderr.String())
	require.Equal(t, files, readTree(t, out))
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", out, "-check"}, &stdout, &stderr), stderr.String())

	// -check reports edited, missing and stale files and exits 1, without
	// touching hand-written files such as embed.go.
	handWritten := filepath.Join(out, "embed.go")
	require.NoError(t, os.WriteFile(handWritten, []byte("package schemas\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "example/example.com_widget_v1_v1.2.3.json"), []byte("{}\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(out, "README.md")))
	require.NoError(t, os.WriteFile(filepath.Join(out, "example/old.json"), []byte("{}\n"), 0o644))
	stderr.Reset()
	require.Equal(t, 1, run([]string{"-crds", fixtureCRDs, "-out", out, "-check"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "differs: example/example.com_widget_v1_v1.2.3.json")
	require.Contains(t, stderr.String(), "missing: README.md")
	require.Contains(t, stderr.String(), "stale:   example/old.json")
	require.NotContains(t, stderr.String(), "embed.go")

	// Writing repairs all of it and removes the stale file, keeping embed.go.
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", out}, &stdout, &stderr), stderr.String())
	require.NoFileExists(t, filepath.Join(out, "example/old.json"))
	require.FileExists(t, handWritten)
	require.Equal(t, 0, run([]string{"-crds", fixtureCRDs, "-out", out, "-check"}, &stdout, &stderr), stderr.String())
}

func TestMissingCRDDir(t *testing.T) {
	var stderr bytes.Buffer
	code := run([]string{"-crds", filepath.Join(t.TempDir(), "nope"), "-out", t.TempDir()}, &bytes.Buffer{}, &stderr)
	require.NotZero(t, code)
	require.Contains(t, stderr.String(), "is not available")
}

func countDescriptionKeywords(s map[string]any) int {
	n := 0
	if _, ok := s["description"]; ok {
		n++
	}
	for _, key := range []string{"properties", "patternProperties", "definitions"} {
		if m, ok := s[key].(map[string]any); ok {
			for _, sub := range m {
				n += countDescriptionKeywords(sub.(map[string]any))
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := s[key].(map[string]any); ok {
			n += countDescriptionKeywords(sub)
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := s[key].([]any); ok {
			for _, sub := range l {
				n += countDescriptionKeywords(sub.(map[string]any))
			}
		}
	}
	return n
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !isGenerated(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = data
		return err
	})
	require.NoError(t, err)
	return files
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// keepPinned copies the files derived from pinned Git files, and the README
// that describes them, from the schemas directory from to to.
func keepPinned(t *testing.T, from, to string) {
	t.Helper()
	files := []string{"README.md"}
	for _, j := range moduleJobs(moduleSources) {
		if j.pinned() {
			files = append(files, j.outputs()...)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(from, filepath.FromSlash(f)))
		require.NoError(t, err)
		p := filepath.Join(to, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
}
