package golden

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// TestEveryProviderFollowsTheRecipe holds each provider to the steps of
// docs/architecture.md's "Adding a provider": a missed step fails here,
// naming it. (The list and the catalogue agree by name:
// providers/builtin's TestListMatchesTheCatalogue.)
func TestEveryProviderFollowsTheRecipe(t *testing.T) {
	recipe := readFile(t, "../docs/architecture.md")
	require.Contains(t, recipe, "## Adding a provider")
	providersDoc := readFile(t, "../docs/providers.md")
	schemas := schemaFiles(t)
	rendered := renderedProviders(t)
	for _, p := range builtin.Providers() {
		name := p.Name()
		t.Run(name, func(t *testing.T) {
			// Step 2: the catalogue entry, and the embedded default file.
			b := capabilities.BuiltinFor(name)
			require.NotNil(t, b, "step 2: no entry in capabilities.Builtins")
			require.NotEmpty(t, b.Engines, "step 2: the catalogue entry names no engine")
			require.NotEmpty(t, b.Renders, "step 2: the catalogue entry does not say what it renders")
			require.NotNil(t, capabilities.Default().Provider(name), "step 2: capabilities/default.yaml does not list it")
			// Step 3: status, routing and detection.
			_, reports := p.(providers.Reporter)
			require.True(t, reports, "step 3: does not implement providers.Reporter")
			_, routable := p.(providers.Routable)
			managed := false
			for _, e := range b.Engines {
				managed = managed || e.Gateway != nil && e.Gateway.ManagesInferencePool
			}
			require.True(t, routable || managed, "step 3: neither implements providers.Routable nor manages its own InferencePool")
			if d, ok := p.(providers.Detector); ok {
				det := d.Detection()
				require.True(t, det.CRD != "" || len(det.Images)+len(det.Names) > 0, "step 3: its Detection finds nothing")
				if det.CRD != "" {
					resource, group, _ := strings.Cut(det.CRD, ".")
					require.True(t, hasSchema(schemas, group, strings.TrimSuffix(resource, "s")),
						"step 4: no schema in schemas/ for the CRD %s (hack/derive-schemas)", det.CRD)
				}
			} else {
				// Without a Detector, discovery lists the provider in every
				// cluster: right only for one that needs nothing installed.
				require.Nil(t, b.Versions, "step 3: a provider with an operator release implements providers.Detector")
			}
			// Step 5: golden cases render it, at its newest release too
			// (TestNewestVersionIsTested).
			require.True(t, rendered[name], "step 5: no golden case under golden/testdata renders it")
			// Step 6: its section in docs/providers.md and its place in the
			// directory map.
			require.True(t, regexp.MustCompile(`(?m)^## `+regexp.QuoteMeta(name)+`: `).MatchString(providersDoc), "step 6: docs/providers.md has no section \"## %s: …\"", name)
			require.True(t, regexp.MustCompile(`providers/<name>/ +[^\n]*\b`+regexp.QuoteMeta(name)+`\b`).MatchString(recipe), "step 6: docs/architecture.md's directory map does not list it")
		})
	}
}

// renderedProviders are the providers some golden case's output carries
// in its render.airunway.ai/provider annotation.
func renderedProviders(t *testing.T) map[string]bool {
	files, err := filepath.Glob("testdata/*/expected.yaml")
	require.NoError(t, err)
	out := map[string]bool{}
	annotation := regexp.MustCompile(regexp.QuoteMeta(hub.AnnotationProvider) + `: "?([a-z0-9-]+)"?`)
	for _, f := range files {
		for _, m := range annotation.FindAllStringSubmatch(readFile(t, f), -1) {
			out[m[1]] = true
		}
	}
	return out
}

func schemaFiles(t *testing.T) []string {
	var names []string
	err := filepath.WalkDir("../schemas", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			names = append(names, filepath.Base(path))
		}
		return err
	})
	require.NoError(t, err)
	return names
}

// hasSchema: schemas/ holds a file <group>_<kind>_<version>_<release>.json.
func hasSchema(files []string, group, kind string) bool {
	for _, f := range files {
		if strings.HasPrefix(f, group+"_"+kind+"_") {
			return true
		}
	}
	return false
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
