package engineargs

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

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

//go:embed vllm.json
var vllmJSON []byte

// loaded is vllm.json, parsed once on first use (not at start-up: most
// commands never check an engine argument), with each release's options
// as a set, so that a render checks each model against it without
// rebuilding it.
type loaded struct {
	order   []*Release
	byKey   map[string]*Release
	options map[*Release]map[string]bool
}

var table = sync.OnceValue(func() loaded {
	var t Table
	if err := json.Unmarshal(vllmJSON, &t); err != nil {
		panic(fmt.Sprintf("engineargs: vllm.json: %v", err))
	}
	l := loaded{byKey: map[string]*Release{}, options: map[*Release]map[string]bool{}}
	for i := range t.Releases {
		r := &t.Releases[i]
		l.byKey[r.Engine+"@"+r.Release] = r
		l.order = append(l.order, r)
		set := make(map[string]bool, len(r.Options))
		for _, o := range r.Options {
			set[o] = true
		}
		l.options[r] = set
	}
	return l
})
