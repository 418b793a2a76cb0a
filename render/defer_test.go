package render

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/manifest"
)

// howRead is how a test hands Render its input.
type howRead int

const (
	itemsHeld      howRead = iota // every tree among the items, kept by the caller
	itemsReleased                 // Options.ReleaseItems
	modelsDeferred                // models as Deferred, as `render` reads its files
)

// TestDeferredRendersAsItems renders every golden case (and a file of
// models that share names, files and lines) the three ways a caller can
// hand Render its input: the output, every problem with its line, and the
// memory fit's verdicts must be the same.
func TestDeferredRendersAsItems(t *testing.T) {
	dirs, err := filepath.Glob("../golden/testdata/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	dirs = append(dirs, "testdata/deferred", "testdata/deferred-twice", "testdata/deferred-many")
	lined := 0
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			caps := caseCapabilities(t, dir)
			want := renderCase(t, dir, caps, itemsHeld, nil, nil)
			for _, p := range want.Problems {
				if p.Line > 0 {
					lined++
				}
			}
			require.Equal(t, want, renderCase(t, dir, caps, itemsReleased, nil, nil), "with the items released")
			require.Equal(t, want, renderCase(t, dir, caps, modelsDeferred, nil, nil), "with the models deferred")
		})
	}
	require.Positive(t, lined, "no case has a problem with a line: the comparison does not reach the lines")
}

// TestRenderLetsGoOfEachModel checks that a model's tree is garbage once
// it is rendered, read either way that lets go of it: while the last
// model is encoded, every model before it must be collectable.
func TestRenderLetsGoOfEachModel(t *testing.T) {
	for _, how := range []howRead{itemsReleased, modelsDeferred} {
		var trees []weak.Pointer[yaml.Node]
		var heldAtLast int
		encode := func(n *yaml.RNode) ([]byte, string, error) {
			if n.GetKind() == hub.KindModelDeployment && n.GetName() == "m-9" {
				runtime.GC()
				for _, p := range trees[:len(trees)-1] {
					if p.Value() != nil {
						heldAtLast++
					}
				}
			}
			return []byte("-"), "", nil
		}
		res := renderCase(t, "testdata/deferred-many", nil, how, func(n *yaml.RNode) { trees = append(trees, weak.Make(n.YNode())) }, encode)
		require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
		// Deferred models are parsed twice: when read, and when rendered.
		require.Len(t, trees, map[howRead]int{itemsReleased: 10, modelsDeferred: 20}[how], "how %d", how)
		require.Zero(t, heldAtLast, "models still held while the last is encoded (how %d)", how)
	}
}

// caseCapabilities resolves a golden case's function config, if it is a
// capability file.
func caseCapabilities(t *testing.T, dir string) *capabilities.Resolved {
	t.Helper()
	cfgs, _ := filepath.Glob(filepath.Join(dir, "functionConfig", "*.yaml"))
	if len(cfgs) != 1 {
		return nil
	}
	data, err := os.ReadFile(cfgs[0])
	require.NoError(t, err)
	n, err := yaml.Parse(string(data))
	require.NoError(t, err)
	if n.GetKind() != hub.KindClusterCapabilities {
		return nil
	}
	caps, _ := capabilities.ResolveNode(n)
	return caps
}

// renderCase reads a case's YAML files (not expected.yaml) as the CLI
// does and renders them as how says. parsed, when set, sees every model
// tree as it is parsed; encode, when set, replaces the encoding.
func renderCase(t *testing.T, dir string, caps *capabilities.Resolved, how howRead, parsed func(*yaml.RNode), encode func(*yaml.RNode) ([]byte, string, error)) Result {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	sort.Strings(files)
	from := map[weak.Pointer[yaml.Node]]string{}
	source := func(n *yaml.RNode) string { return from[weak.Make(n.YNode())] }
	read := func(file string, nodes []*yaml.RNode) {
		for _, n := range nodes {
			from[weak.Make(n.YNode())] = file
			if parsed != nil && n.GetKind() == hub.KindModelDeployment {
				parsed(n)
			}
		}
	}
	var items []*yaml.RNode
	var deferred []Deferred
	for _, f := range files {
		if filepath.Base(f) == "expected.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		file := filepath.Base(f)
		require.NoError(t, manifest.EachDocument(data, file, budget.New(), func(nodes []*yaml.RNode, again manifest.Document) {
			read(file, nodes)
			if how == modelsDeferred && len(nodes) == 1 {
				parse := func() (*yaml.RNode, error) {
					nodes, err := again.Parse()
					read(file, nodes)
					return nodes[0], err
				}
				if d, ok := Defer(nodes[0], source, parse); ok {
					deferred = append(deferred, d)
					return
				}
			}
			items = append(items, nodes...)
		}))
	}
	if encode == nil {
		encode = func(n *yaml.RNode) ([]byte, string, error) {
			b, err := manifest.EncodeDocument(n)
			return b, "", err
		}
	}
	opts := Options{Capabilities: caps, Encode: encode, SourceFile: source, ReleaseItems: how == itemsReleased, Deferred: deferred}
	res := Render(items, opts)
	if how == itemsReleased {
		require.Equal(t, make([]*yaml.RNode, len(items)), items, "the items are let go of")
	}
	res.Problems = res.Problems.Sorted()
	return res
}
