package golden

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/fn"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
)

var update = flag.Bool("update", false, "rewrite the expected files from the actual output")

// repeats is how many times each case runs with its items shuffled; any
// ordering dependency shows up as a byte difference.
const repeats = 5

type run struct {
	stdout, stderr string
	exit           int
}

func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			items, config := readCase(t, dir)
			got := runFunction(t, items, config)
			if *update {
				writeExpected(t, dir, got)
			}
			assertExpected(t, dir, got)

			rng := rand.New(rand.NewSource(int64(len(items))))
			for i := 0; i < repeats; i++ {
				shuffled := append([]*yaml.RNode(nil), items...)
				rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
				again := runFunction(t, shuffled, config)
				require.Equal(t, got, again, "run %d with shuffled input differs", i+1)
			}
			if got.exit != 0 {
				return
			}
			// Rendering the output again must change nothing.
			out, err := kio.FromBytes([]byte(got.stdout))
			require.NoError(t, err)
			// Models a cluster of a fleet leaves to others are not in its
			// output, so the note that says so is not in the output's.
			require.Equal(t, withoutResult(t, got.stdout, "fleet-skipped"), runFunction(t, out, config).stdout, "the output is not a fixed point")
			validateSchemas(t, out, declaredCapabilities(t, items, config))
		})
	}
}

// readCase reads the input items with kpt-style path annotations.
func readCase(t *testing.T, dir string) ([]*yaml.RNode, *yaml.RNode) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	sort.Strings(files)
	var items []*yaml.RNode
	for _, f := range files {
		if filepath.Base(f) == "expected.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), SetAnnotations: map[string]string{kioutil.PathAnnotation: filepath.Base(f)}}).Read()
		require.NoError(t, err)
		items = append(items, nodes...)
	}
	var config *yaml.RNode
	cfgs, _ := filepath.Glob(filepath.Join(dir, "functionConfig", "*.yaml"))
	if len(cfgs) == 1 {
		data, err := os.ReadFile(cfgs[0])
		require.NoError(t, err)
		config, err = yaml.Parse(string(data))
		require.NoError(t, err)
	}
	return items, config
}

// runFunction runs the KRM function in-process, exactly as the binary's
// main does, on a ResourceList built from items.
func runFunction(t *testing.T, items []*yaml.RNode, config *yaml.RNode) run {
	t.Helper()
	var in bytes.Buffer
	in.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, n := range items {
		s, err := n.Copy().String()
		require.NoError(t, err)
		in.WriteString(indentItem(s))
	}
	if config != nil {
		s, err := config.String()
		require.NoError(t, err)
		in.WriteString("functionConfig:\n" + indent(s, "  "))
	}
	var stdout, stderr bytes.Buffer
	code := fn.Run(&in, &stdout, &stderr)
	return run{stdout: stdout.String(), stderr: stderr.String(), exit: code}
}

func indentItem(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = "- " + lines[i]
		} else {
			lines[i] = "  " + lines[i]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

func writeExpected(t *testing.T, dir string, got run) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "expected.yaml"), []byte(got.stdout), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "expected.stderr"), []byte(got.stderr), 0o644))
	exitFile := filepath.Join(dir, "expected.exit")
	if got.exit == 0 {
		_ = os.Remove(exitFile)
	} else {
		require.NoError(t, os.WriteFile(exitFile, []byte(strconv.Itoa(got.exit)+"\n"), 0o644))
	}
}

func assertExpected(t *testing.T, dir string, got run) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
	require.NoError(t, err, "missing expected.yaml: run `make golden`")
	require.Equal(t, string(want), got.stdout, "stdout differs from expected.yaml (run `make golden` and review the diff if the change is intended)")
	wantErr, err := os.ReadFile(filepath.Join(dir, "expected.stderr"))
	require.NoError(t, err)
	require.Equal(t, string(wantErr), got.stderr, "stderr differs from expected.stderr")
	wantExit := 0
	if data, err := os.ReadFile(filepath.Join(dir, "expected.exit")); err == nil {
		wantExit, err = strconv.Atoi(strings.TrimSpace(string(data)))
		require.NoError(t, err)
	}
	require.Equal(t, wantExit, got.exit, "exit code")
}

// declaredCapabilities returns the capability file the case renders with:
// the function config, else an input item, else the embedded default.
func declaredCapabilities(t *testing.T, items []*yaml.RNode, config *yaml.RNode) *capabilities.Resolved {
	t.Helper()
	node := config
	if node == nil || node.GetKind() != "ClusterCapabilities" {
		node = nil
		for _, n := range items {
			if n.GetKind() == "ClusterCapabilities" {
				node = n
				break
			}
		}
	}
	if node == nil {
		var err error
		node, err = yaml.Parse(string(capabilities.DefaultYAML()))
		require.NoError(t, err)
	}
	caps, problems := capabilities.ResolveNode(node)
	require.False(t, problems.HasErrors(), "%v", problems)
	return caps
}

// validateSchemas checks every object bound for a cluster against the real
// schema of its kind: the provider CRDs of the release the capability file
// declares, the Gateway API CRDs of the declared bundle release and
// channel, every embedded Inference Extension release of the pool's API
// version (the capability file names the version, not the release), and
// the Kubernetes types for built-in kinds.
func validateSchemas(t *testing.T, items []*yaml.RNode, caps *capabilities.Resolved) {
	t.Helper()
	for _, n := range items {
		if n.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
			continue
		}
		var obj map[string]any
		js, err := n.MarshalJSON()
		require.NoError(t, err)
		require.NoError(t, sigsyaml.Unmarshal(js, &obj))
		problems := schemacheck.Rendered(obj, caps)
		require.Empty(t, problems, "%s/%s %s fails schema validation", n.GetKind(), n.GetNamespace(), n.GetName())
	}
}

// TestGoldenCasesAreComplete keeps the case directories honest: a case must
// have input, and an error case must say why it fails.
func TestGoldenCasesAreComplete(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*")
	require.NoError(t, err)
	for _, dir := range dirs {
		inputs, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		require.Greater(t, len(inputs), 1, "%s needs input files besides expected.yaml", dir)
		if _, err := os.Stat(filepath.Join(dir, "expected.exit")); err == nil {
			stderr, err := os.ReadFile(filepath.Join(dir, "expected.stderr"))
			require.NoError(t, err)
			require.Contains(t, string(stderr), "[error]", fmt.Sprintf("%s fails without an error message", dir))
		}
	}
}

// withoutResult is a ResourceList without its results tagged code.
func withoutResult(t *testing.T, resourceList, code string) string {
	t.Helper()
	rl, err := yaml.Parse(resourceList)
	require.NoError(t, err)
	results := rl.Field("results")
	if results == nil {
		return resourceList
	}
	var kept []*yaml.Node
	for _, r := range results.Value.YNode().Content {
		if yaml.NewRNode(r).Field("tags") != nil {
			if c, _ := yaml.NewRNode(r).GetString("tags.code"); c == code {
				continue
			}
		}
		kept = append(kept, r)
	}
	if len(kept) == len(results.Value.YNode().Content) {
		return resourceList
	}
	results.Value.YNode().Content = kept
	if len(kept) == 0 {
		require.NoError(t, rl.PipeE(yaml.Clear("results")))
	}
	out, err := rl.String()
	require.NoError(t, err)
	return out
}
