package fntest

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
)

// ResourceListSeeds builds ResourceLists from the golden cases (input and
// expected output) and the example directories of the repository at root:
// the seeds of the function's fuzz target and of the ResourceList parity
// suite (internal/manifest).
func ResourceListSeeds(tb testing.TB, root string) [][]byte {
	tb.Helper()
	var seeds [][]byte
	cases, err := filepath.Glob(filepath.Join(root, "golden/testdata/*"))
	if err != nil || len(cases) == 0 {
		tb.Fatalf("no golden cases to seed from: %v", err)
	}
	for _, dir := range cases {
		var items []*yaml.RNode
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, file := range files {
			if filepath.Base(file) == "expected.yaml" {
				continue
			}
			items = append(items, readItems(tb, file)...)
		}
		var config *yaml.RNode
		if cfgs, _ := filepath.Glob(filepath.Join(dir, "functionConfig", "*.yaml")); len(cfgs) == 1 {
			if nodes := readItems(tb, cfgs[0]); len(nodes) == 1 {
				config = nodes[0]
			}
		}
		seeds = append(seeds, resourceListText(items, config))
		if out, err := os.ReadFile(filepath.Join(dir, "expected.yaml")); err == nil && len(out) > 0 {
			seeds = append(seeds, out)
		}
	}
	return append(seeds, exampleSeeds(tb, root)...)
}

// exampleSeeds are every example directory holding a ModelDeployment, alone
// and with each example capability file as the function config.
func exampleSeeds(tb testing.TB, root string) [][]byte {
	byDir := map[string][]*yaml.RNode{}
	var capsFiles []*yaml.RNode
	_ = filepath.WalkDir(filepath.Join(root, "examples"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		for _, n := range readItems(tb, path) {
			if n.GetKind() == hub.KindClusterCapabilities {
				capsFiles = append(capsFiles, n)
			}
			byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], n)
		}
		return nil
	})
	dirs := make([]string, 0, len(byDir))
	for dir := range byDir {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	var seeds [][]byte
	for _, dir := range dirs {
		hasModel := false
		for _, n := range byDir[dir] {
			hasModel = hasModel || n.GetKind() == hub.KindModelDeployment
		}
		if !hasModel {
			continue
		}
		seeds = append(seeds, resourceListText(byDir[dir], nil))
		for _, c := range capsFiles {
			seeds = append(seeds, resourceListText(byDir[dir], c))
		}
	}
	return seeds
}

// readItems reads the YAML documents of a file that look like objects,
// with the kpt path annotation the function sees in a package.
func readItems(tb testing.TB, file string) []*yaml.RNode {
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), SetAnnotations: map[string]string{kioutil.PathAnnotation: filepath.Base(file)}}).Read()
	if err != nil {
		return nil // not every example YAML is a KRM stream
	}
	var out []*yaml.RNode
	for _, n := range nodes {
		if n.GetKind() != "" {
			out = append(out, n)
		}
	}
	return out
}

func resourceListText(items []*yaml.RNode, config *yaml.RNode) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, n := range items {
		b.WriteString(indent(n.MustString(), "- ", "  "))
	}
	if config != nil {
		b.WriteString("functionConfig:\n" + indent(config.MustString(), "  ", "  "))
	}
	return []byte(b.String())
}

func indent(s, first, rest string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
