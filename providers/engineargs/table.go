package engineargs

import (
	_ "embed"
	"encoding/json"
	"fmt"
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

var tableOrder []*Release

var table = func() map[string]*Release {
	var t Table
	if err := json.Unmarshal(vllmJSON, &t); err != nil {
		panic(fmt.Sprintf("engineargs: vllm.json: %v", err))
	}
	m := map[string]*Release{}
	for i := range t.Releases {
		r := &t.Releases[i]
		m[r.Engine+"@"+r.Release] = r
		tableOrder = append(tableOrder, r)
	}
	return m
}()
