package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// TestChangeRulesNameWhatIsRendered holds each provider's ChangeRules to
// what it renders in the golden cases: every kind a provider's rules name
// is one of its objects there, and every field they name is set in at
// least one of them (of an exclusive pair, one). A rule on a kind or a
// path the provider never writes would flag nothing in `preview`.
func TestChangeRulesNameWhatIsRendered(t *testing.T) {
	rendered := goldenObjectsByProvider(t)
	for _, p := range builtin.Providers() {
		r, ok := p.(providers.ChangeRules)
		if !ok {
			continue
		}
		for kind, rules := range r.ChangeRules() {
			objs := rendered[p.Name()][kind]
			require.NotEmpty(t, objs, "%s states change rules of %s, which no golden case renders with it", p.Name(), kind)
			for _, f := range rules.Immutable {
				require.True(t, anySets(objs, f.Path), "%s: no rendered %s sets immutable `%s`", p.Name(), kind, f.Path)
			}
			for _, path := range rules.Restarts {
				require.True(t, anySets(objs, path), "%s: no rendered %s sets restarting `%s`", p.Name(), kind, path)
			}
			for _, f := range rules.NotRolledOut {
				require.True(t, anySets(objs, f.Path), "%s: no rendered %s sets `%s`, which is not rolled out", p.Name(), kind, f.Path)
			}
			if pair := rules.Exclusive; pair[0] != "" {
				require.True(t, anySets(objs, pair[0]) || anySets(objs, pair[1]), "%s: no rendered %s sets `%s` or `%s`", p.Name(), kind, pair[0], pair[1])
			}
		}
	}
}

// goldenObjectsByProvider reads every golden case's output: per provider
// and kind, the objects rendered from the ModelDeployments that chose it.
func goldenObjectsByProvider(t *testing.T) map[string]map[string][]map[string]any {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join("..", "..", "golden", "testdata", "*", "expected.yaml"))
	require.NoError(t, err)
	out := map[string]map[string][]map[string]any{}
	for _, file := range cases {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var list struct {
			Items []map[string]any `json:"items"`
		}
		require.NoError(t, yaml.Unmarshal(data, &list), file)
		chosen := map[string]string{} // namespace/name of a ModelDeployment → its provider
		for _, item := range list.Items {
			if item["kind"] == "ModelDeployment" {
				chosen[metadata(item, "namespace")+"/"+metadata(item, "name")] = annotation(item, "render.airunway.ai/provider")
			}
		}
		for _, item := range list.Items {
			provider := chosen[metadata(item, "namespace")+"/"+annotation(item, "render.airunway.ai/generated-from")]
			if provider == "" || item["kind"] == "ModelDeployment" {
				continue
			}
			kind, _ := item["kind"].(string)
			if out[provider] == nil {
				out[provider] = map[string][]map[string]any{}
			}
			out[provider][kind] = append(out[provider][kind], item)
		}
	}
	return out
}

// metadata is a string field of an item's metadata, "" when absent.
func metadata(item map[string]any, field string) string {
	meta, _ := item["metadata"].(map[string]any)
	v, _ := meta[field].(string)
	return v
}

func annotation(item map[string]any, key string) string {
	meta, _ := item["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	v, _ := annotations[key].(string)
	return v
}

// anySets reports whether one of objs has a value at the dotted path.
func anySets(objs []map[string]any, path string) bool {
	for _, obj := range objs {
		var v any = obj
		for _, key := range strings.Split(path, ".") {
			m, _ := v.(map[string]any)
			v = m[key]
		}
		if v != nil {
			return true
		}
	}
	return false
}
