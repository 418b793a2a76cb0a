package fit

import (
	"fmt"
	"strings"
	"sync"
)

// The model catalog: facts derived from public model configurations by
// hack/derive-model-catalog into catalog.json, each row naming the file,
// repository and commit it came from (and that file's sha256).
//
// catalogTable (catalog_table.go) is catalog.json as Go source, written
// by go run ./hack/gentables: the linker lays it out, where parsing the
// JSON took a few milliseconds of every process that renders a model.

// Catalog is the shape of catalog.json.
type Catalog struct {
	Source string  `json:"source"`
	Models []Entry `json:"models"`
}

// Entry is one row: a model's facts, the ids it answers to, and where the
// facts came from.
type Entry struct {
	Model
	// Aliases are further ids with the same architecture and weights'
	// size (an instruct model of its base), with the reason in Note.
	Aliases []string `json:"aliases,omitempty"`
	Note    string   `json:"note,omitempty"`
	// From are the row's sources: the config.json copy (or a model list),
	// and what else a figure came from (a quantization config, a list's
	// checkpoint size, the evidence that the repository is gated).
	From []Origin `json:"sources"`
}

// Origin is one pinned public file, or a public page for a fact no file
// carries.
type Origin struct {
	// What the source gave: config, quantization, checkpoint-size,
	// list, gated.
	What       string `json:"what"`
	Repository string `json:"repository,omitempty"`
	Commit     string `json:"commit,omitempty"`
	Path       string `json:"path,omitempty"`
	SHA256     string `json:"sha256,omitempty"`
	// URL of a page, for a fact from one (gated).
	URL string `json:"url,omitempty"`
}

func (o Origin) String() string {
	if o.Repository == "" {
		return o.URL
	}
	return fmt.Sprintf("%s/blob/%s/%s", strings.TrimSuffix(o.Repository, ".git"), o.Commit, o.Path)
}

var catalog = sync.OnceValue(func() map[string]Model {
	byID := map[string]Model{}
	for _, e := range catalogTable.Models {
		m := e.Model
		m.Source = "the model catalog (fit/catalog.json)"
		for _, id := range append([]string{e.ID}, e.Aliases...) {
			m.ID = id
			byID[strings.ToLower(id)] = m
		}
	}
	return byID
})

// Lookup finds a model in the catalog by its Hugging Face id (case does
// not matter).
func Lookup(id string) (Model, bool) {
	m, ok := catalog()[strings.ToLower(id)]
	return m, ok
}
