package argocdcmp

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kubeyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// splitYAMLToString reproduces kube.SplitYAMLToString from gitops-engine
// (gitops-engine/pkg/utils/kube/kube.go, unchanged since Feb 2025 and so the
// code in v3.6.1), which the cmp-server applies to the trimmed generate
// output. It runs k8s.io/apimachinery's YAMLOrJSONDecoder (4096-byte sniff
// buffer) into runtime.RawExtension values; each document is TrimSpace'd and
// dropped when empty or "null" (empty documents, "---" runs, comment-only
// documents). The stream is JSON when it starts with '{' (a concatenation of
// JSON objects), YAML documents otherwise; YAML documents come back as JSON
// text. A top-level JSON array is not special: it goes down the YAML path
// and is kept as one array document, which the repo-server then fails to
// convert.
//
// Argo CD v3.6.1 builds with k8s.io/apimachinery v0.37.0; this module has
// v0.37.1.
func splitYAMLToString(data []byte) ([]string, error) {
	d := kubeyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []string
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return objs, fmt.Errorf("failed to unmarshal manifest: %w", err)
		}
		ext.Raw = bytes.TrimSpace(ext.Raw)
		if len(ext.Raw) == 0 || bytes.Equal(ext.Raw, []byte("null")) {
			continue
		}
		objs = append(objs, string(ext.Raw))
	}
	return objs, nil
}

// splitYAML reproduces kube.SplitYAML (same file): split, then
// sigs.k8s.io/yaml.Unmarshal each document into an Unstructured, which
// requires a JSON object with a non-empty "kind".
func splitYAML(data []byte) ([]*unstructured.Unstructured, error) {
	docs, err := splitYAMLToString(data)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), u); err != nil {
			return objs, fmt.Errorf("failed to unmarshal manifest: %w", err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// parseCMPManifests reproduces the tail of runConfigManagementPluginSidecars
// (reposerver/repository/repository.go): each string the cmp-server returned
// is re-split with kube.SplitYAML.
func parseCMPManifests(manifests []string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		parsed, err := splitYAML([]byte(m))
		if err != nil {
			return nil, fmt.Errorf("failed to convert CMP manifests to unstructured objects: %s", err.Error())
		}
		objs = append(objs, parsed...)
	}
	return objs, nil
}

// flattenTargets reproduces the target loop of GenerateManifests
// (reposerver/repository/repository.go): any object with an "items" array is
// treated as a list and replaced by its items (Unstructured.IsList /
// EachListItem), a list with "items: null" and no spec/status is dropped
// (isNullList), everything else is kept as is. Resource-tracking labels and
// annotations are not added (see doc.go).
func flattenTargets(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		if obj == nil {
			continue
		}
		switch {
		case obj.IsList():
			err := obj.EachListItem(func(o runtime.Object) error {
				u, ok := o.(*unstructured.Unstructured)
				if !ok {
					return errors.New("resource list item has unexpected type")
				}
				out = append(out, u)
				return nil
			})
			if err != nil {
				return nil, err
			}
		case isNullList(obj):
		default:
			out = append(out, obj)
		}
	}
	return out, nil
}

// isNullList mirrors isNullList in reposerver/repository/repository.go.
func isNullList(obj *unstructured.Unstructured) bool {
	if _, ok := obj.Object["spec"]; ok {
		return false
	}
	if _, ok := obj.Object["status"]; ok {
		return false
	}
	field, ok := obj.Object["items"]
	return ok && field == nil
}
