package render

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
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
// hand Render its input, on one worker and on several: the output, every
// problem with its line, and the memory fit's verdicts must be the same.
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
			// Render's workers (render/inorder.go): one, or more than
			// the models, each encoding as it renders.
			for _, workers := range []int{1, 3, 16} {
				for _, how := range []howRead{itemsHeld, itemsReleased, modelsDeferred} {
					require.Equal(t, want, renderCaseOn(t, dir, caps, how, nil, nil, workers, workers > 1), "on %d workers, how %d", workers, how)
				}
			}
		})
	}
	require.Positive(t, lined, "no case has a problem with a line: the comparison does not reach the lines")
}

// TestRenderLetsGoOfEachModel checks that a model's tree is garbage once
// it is rendered, read either way that lets go of it: while the last
// model is encoded, every model before it must be collectable.
func TestRenderLetsGoOfEachModel(t *testing.T) {
	for _, how := range []howRead{itemsReleased, modelsDeferred} {
		for _, workers := range []int{1, 3} {
			type tree struct {
				name string
				node weak.Pointer[yaml.Node]
			}
			var trees []tree
			var heldAtLast int
			encode := func(n *yaml.RNode) ([]byte, string, error) {
				if n.GetKind() == hub.KindModelDeployment && n.GetName() == "m-9" {
					runtime.GC()
					for _, p := range trees {
						if p.name != "m-9" && p.node.Value() != nil {
							heldAtLast++
						}
					}
				}
				return []byte("-"), "", nil
			}
			parsed := func(n *yaml.RNode) { trees = append(trees, tree{n.GetName(), weak.Make(n.YNode())}) }
			// The encoder runs in the queue's order: on one goroutine.
			res := renderCaseOn(t, "testdata/deferred-many", nil, how, parsed, encode, workers, false)
			require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
			// Deferred models are parsed twice: when read, and when rendered.
			require.Len(t, trees, map[howRead]int{itemsReleased: 10, modelsDeferred: 20}[how], "how %d", how)
			require.Zero(t, heldAtLast, "models still held while the last is encoded (how %d, %d workers)", how, workers)
		}
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
	return renderCaseOn(t, dir, caps, how, parsed, encode, 0, false)
}

// renderCaseOn is renderCase on workers goroutines (Options.Workers), the
// encoder among them with encodeOnWorkers (Options.EncodeConcurrently).
func renderCaseOn(t *testing.T, dir string, caps *capabilities.Resolved, how howRead, parsed func(*yaml.RNode), encode func(*yaml.RNode) ([]byte, string, error), workers int, encodeOnWorkers bool) Result {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	sort.Strings(files)
	// Deferred models are parsed again on Render's workers.
	var lock sync.Mutex
	from := map[weak.Pointer[yaml.Node]]string{}
	source := func(n *yaml.RNode) string {
		lock.Lock()
		defer lock.Unlock()
		return from[weak.Make(n.YNode())]
	}
	read := func(file string, nodes []*yaml.RNode) {
		lock.Lock()
		defer lock.Unlock()
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
	opts := Options{Capabilities: caps, Encode: encode, SourceFile: source, ReleaseItems: how == itemsReleased, Deferred: deferred,
		Workers: workers, EncodeConcurrently: encodeOnWorkers}
	res := Render(items, opts)
	if how == itemsReleased {
		require.Equal(t, make([]*yaml.RNode, len(items)), items, "the items are let go of")
	}
	res.Problems = res.Problems.Sorted()
	return res
}
