package schemacheck

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
	Channel    string          `json:"channel"` // Gateway API release channel; "" for other kinds
	Source     string          `json:"source"`
	Served     bool            `json:"served"`
	Storage    bool            `json:"storage"`
	Deprecated bool            `json:"deprecated"`
	Schema     json.RawMessage `json:"openAPIV3Schema"`

	// What CRD needs besides the schema to rebuild an installable CRD.
	Names            apiextensionsv1.CustomResourceDefinitionNames    `json:"names"`
	Scope            apiextensionsv1.ResourceScope                    `json:"scope"`
	Annotations      map[string]string                                `json:"annotations"`
	Subresources     *apiextensionsv1.CustomResourceSubresources      `json:"subresources"`
	PrinterColumns   []apiextensionsv1.CustomResourceColumnDefinition `json:"additionalPrinterColumns"`
	SelectableFields []apiextensionsv1.SelectableField                `json:"selectableFields"`

	path string
}

type gvk struct{ group, kind, version string }

func (k gvk) String() string {
	if k.group == "" {
		return k.version + " " + k.kind
	}
	return k.group + "/" + k.version + " " + k.kind
}

// key names one schema lineage: a GVK in one release channel. Gateway API
// publishes each release in a standard and an experimental channel whose
// schemas differ (experimental has more fields), so the channel is part of
// what a cluster would accept.
type key struct {
	gvk
	channel string
}

func (k key) String() string {
	if k.channel == "" {
		return k.gvk.String()
	}
	return k.gvk.String() + " (" + k.channel + " channel)"
}

var (
	indexOnce sync.Once
	index     map[key][]*schemaFile // each slice sorted oldest to newest release
	indexErr  error
)

func loadIndex() (map[key][]*schemaFile, error) {
	indexOnce.Do(func() {
		index, indexErr = buildIndex(schemas.FS)
	})
	return index, indexErr
}

func buildIndex(fsys fs.FS) (map[key][]*schemaFile, error) {
	paths, err := fs.Glob(fsys, "*/*.json")
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("schemacheck: no embedded schemas; run hack/derive-schemas")
	}
	idx := map[key][]*schemaFile{}
	for _, p := range paths {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		f := &schemaFile{path: p}
		if err := json.Unmarshal(data, f); err != nil {
			return nil, fmt.Errorf("schemacheck: %s: %w", p, err)
		}
		k := key{gvk{f.Group, f.Kind, f.Version}, f.Channel}
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

// The standard channel is what a Gateway API installation has unless it
// opted into experimental, so it is the default for channelled kinds.
const defaultChannel = "standard"

// resolveChannel turns the API's channel argument into an index key: ""
// means the kind's default, which is no channel for kinds published without
// channels and the standard channel for those published with them.
func resolveChannel(idx map[key][]*schemaFile, k gvk, channel string) key {
	if channel == "" {
		if _, ok := idx[key{k, ""}]; !ok {
			channel = defaultChannel
		}
	}
	return key{k, channel}
}

// Releases lists the embedded releases for a group/kind/version in its
// default channel (standard for Gateway API kinds), oldest first (the
// order used to pick the newest); nil if the GVK is unknown.
func Releases(group, kind, version string) []string {
	return ChannelReleases(group, kind, version, "")
}

// ChannelReleases is Releases for one release channel ("standard",
// "experimental"; "" = the kind's default); nil if there is none.
func ChannelReleases(group, kind, version, channel string) []string {
	idx, err := loadIndex()
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range idx[resolveChannel(idx, gvk{group, kind, version}, channel)] {
		out = append(out, f.Release)
	}
	return out
}

// lookup finds the schema file for a GVK in a channel ("" = default) at a
// release ("" = newest).
func lookup(k gvk, release, channel string) (*schemaFile, error) {
	idx, err := loadIndex()
	if err != nil {
		return nil, err
	}
	kc := resolveChannel(idx, k, channel)
	files := idx[kc]
	if len(files) == 0 {
		if have := channels(idx, k); len(have) > 0 {
			return nil, fmt.Errorf("schemacheck: no schema known for %s in channel %q (have %s)", k, kc.channel, strings.Join(have, ", "))
		}
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
	return nil, fmt.Errorf("schemacheck: no schema for %s at release %s (have %s)", kc, release, strings.Join(have, ", "))
}

// channels lists the channels embedded for a GVK, quoted, for error messages.
func channels(idx map[key][]*schemaFile, k gvk) []string {
	var out []string
	for kc := range idx {
		if kc.gvk == k {
			out = append(out, fmt.Sprintf("%q", kc.channel))
		}
	}
	sort.Strings(out)
	return out
}
