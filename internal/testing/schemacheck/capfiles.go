package schemacheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// CapabilityFile is one ClusterCapabilities object found in the
// repository, and where.
type CapabilityFile struct {
	Source string
	Object map[string]any
}

// CapabilityFiles returns every distinct ClusterCapabilities object under
// the repository root's examples/ and golden/, and capabilities/default.yaml:
// whole documents, and the functionConfig and items of ResourceLists. Fewer
// than 20 means root is not the repository's, and is an error.
func CapabilityFiles(root string) ([]CapabilityFile, error) {
	files := []string{filepath.Join(root, "capabilities", "default.yaml")}
	for _, dir := range []string{"examples", "golden"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	var out []CapabilityFile
	seen := map[string]bool{}
	add := func(source string, o any) error {
		m, ok := o.(map[string]any)
		if !ok || m["kind"] != "ClusterCapabilities" {
			return nil
		}
		key, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if !seen[string(key)] {
			seen[string(key)] = true
			out = append(out, CapabilityFile{source, m})
		}
		return nil
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(data, []byte("kind: ClusterCapabilities")) {
			continue
		}
		rel, _ := filepath.Rel(root, name)
		if err := eachDocument(data, func(o map[string]any) error {
			if err := add(rel, o); err != nil || o["kind"] != "ResourceList" {
				return err
			}
			if err := add(rel+" functionConfig", o["functionConfig"]); err != nil {
				return err
			}
			items, _ := o["items"].([]any)
			for _, item := range items {
				if err := add(rel+" items", item); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
	}
	if len(out) < 20 {
		return nil, fmt.Errorf("only %d capability files under %s: is it the repository root?", len(out), root)
	}
	return out, nil
}

// eachDocument decodes every document of a YAML stream.
func eachDocument(data []byte, fn func(map[string]any) error) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
		var o map[string]any
		if err := utiljson.Unmarshal(js, &o); err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
		if err := fn(o); err != nil {
			return err
		}
	}
}
