package schemacheck

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/schemas"
)

// schemaFile is one embedded file as written by hack/derive-schemas. The
// schema stays raw until a validator for it is actually requested, because
// most tests only touch a few of the ~50 files.
type schemaFile struct {
	Group      string          `json:"group"`
	Kind       string          `json:"kind"`
	Version    string          `json:"version"`
	Release    string          `json:"release"`
	Source     string          `json:"source"`
	Served     bool            `json:"served"`
	Storage    bool            `json:"storage"`
	Deprecated bool            `json:"deprecated"`
	Schema     json.RawMessage `json:"openAPIV3Schema"`
	path       string
}

type gvk struct{ group, kind, version string }

func (k gvk) String() string {
	if k.group == "" {
		return k.version + " " + k.kind
	}
	return k.group + "/" + k.version + " " + k.kind
}

var (
	indexOnce sync.Once
	index     map[gvk][]*schemaFile // each slice sorted oldest to newest release
	indexErr  error
)

func loadIndex() (map[gvk][]*schemaFile, error) {
	indexOnce.Do(func() {
		index, indexErr = buildIndex(schemas.FS)
	})
	return index, indexErr
}

func buildIndex(fsys fs.FS) (map[gvk][]*schemaFile, error) {
	paths, err := fs.Glob(fsys, "*/*.json")
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("schemacheck: no embedded schemas; run hack/derive-schemas")
	}
	idx := map[gvk][]*schemaFile{}
	for _, p := range paths {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		f := &schemaFile{path: p}
		if err := json.Unmarshal(data, f); err != nil {
			return nil, fmt.Errorf("schemacheck: %s: %w", p, err)
		}
		k := gvk{f.Group, f.Kind, f.Version}
		idx[k] = append(idx[k], f)
	}
	for k, files := range idx {
		sort.Slice(files, func(i, j int) bool { return releaseLess(files[i].Release, files[j].Release) })
		for i := 1; i < len(files); i++ {
			if files[i].Release == files[i-1].Release {
				return nil, fmt.Errorf("schemacheck: %s release %s is embedded twice (%s, %s)", k, files[i].Release, files[i-1].path, files[i].path)
			}
		}
	}
	return idx, nil
}

// releaseLess orders releases by semver; releases that do not parse as
// semver (branch snapshots such as "main-2a6da14c") sort after all tagged
// releases, since they are newer than any tag they were cut from.
func releaseLess(a, b string) bool {
	va, errA := version.ParseSemantic(a)
	vb, errB := version.ParseSemantic(b)
	switch {
	case errA == nil && errB == nil:
		if va.EqualTo(vb) {
			return a < b
		}
		return va.LessThan(vb)
	case errA == nil:
		return true
	case errB == nil:
		return false
	default:
		return a < b
	}
}

// Releases lists the embedded releases for a group/kind/version, oldest
// first (the order used to pick the newest); nil if the GVK is unknown.
func Releases(group, kind, version string) []string {
	idx, err := loadIndex()
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range idx[gvk{group, kind, version}] {
		out = append(out, f.Release)
	}
	return out
}

// lookup finds the schema file for a GVK at a release ("" = newest).
func lookup(k gvk, release string) (*schemaFile, error) {
	idx, err := loadIndex()
	if err != nil {
		return nil, err
	}
	files := idx[k]
	if len(files) == 0 {
		return nil, fmt.Errorf("schemacheck: no schema known for %s", k)
	}
	if release == "" {
		return files[len(files)-1], nil
	}
	var have []string
	for _, f := range files {
		if f.Release == release {
			return f, nil
		}
		have = append(have, f.Release)
	}
	return nil, fmt.Errorf("schemacheck: no schema for %s at release %s (have %s)", k, release, strings.Join(have, ", "))
}
