package engineargs

import "sync"

// Table is vllm.json's shape (hack/derive-engine-args writes it).
type Table struct {
	Source   string    `json:"source"`
	Releases []Release `json:"releases"`
}

// Release is one engine release's server options and the files they were
// read from.
type Release struct {
	Engine     string   `json:"engine"`
	Release    string   `json:"release"`
	Repository string   `json:"repository"`
	Commit     string   `json:"commit"`
	Files      []File   `json:"files"`
	Options    []string `json:"options,omitempty"`
}

// File is one pinned source file of a release.
type File struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// vllmTable (vllm_table.go) is vllm.json as Go source, written by go run
// ./hack/gentables: the linker lays it out, where parsing the JSON took a
// few milliseconds of every process that checks an engine argument.

// loaded indexes vllmTable's releases by "engine@release", once, on
// first use.
type loaded struct {
	order []*Release
	byKey map[string]*Release
}

var table = sync.OnceValue(func() loaded {
	l := loaded{byKey: map[string]*Release{}}
	for i := range vllmTable.Releases {
		r := &vllmTable.Releases[i]
		l.byKey[r.Engine+"@"+r.Release] = r
		l.order = append(l.order, r)
	}
	return l
})
