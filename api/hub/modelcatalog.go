package hub

import (
	"fmt"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
)

// ModelCatalog is a model catalog kept in Git beside the models: the facts
// of models the shipped catalog does not know (a private fine-tune, a
// house model), for the memory fit. Like a capability file it is local
// configuration, read by the renderer and never applied to a cluster
// (no CRD serves it). `airunway-render catalog add` writes its rows from
// a model's config.json and safetensors index.
type ModelCatalog struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ModelCatalogSpec `json:"spec"`
}

// ModelCatalogSpec lists the models.
type ModelCatalogSpec struct {
	// Models are the rows, one per model id.
	Models []CatalogModel `json:"models,omitempty"`
}

// CatalogModel is one row: exactly fit.Model's facts, in its JSON names,
// and where they came from.
type CatalogModel struct {
	fit.Model `json:",inline"`
	// Source says where the facts came from (free text: the files, their
	// revision and checksums), for review and for the fit's messages.
	Source string `json:"source,omitempty"`
}

// maxCatalogSource bounds a row's source text.
const maxCatalogSource = 1024

// ValidateModelCatalog checks a decoded ModelCatalog: a name, and rows the
// memory fit can use (fit.Model.Check), each id once (without regard to
// case, as the Hugging Face Hub matches ids). Ids shared by several
// catalogs of one run are the caller's to refuse.
func ValidateModelCatalog(c *ModelCatalog) diag.List {
	var l diag.List
	if c.Name == "" {
		l.Errorf("metadata.name", "is required: the catalog's name, which the messages that use its facts name")
	}
	seen := map[string]int{}
	for i := range c.Spec.Models {
		row := &c.Spec.Models[i]
		at := fmt.Sprintf("spec.models[%d]", i)
		for _, p := range row.Check() {
			field := at
			if p.Field != "" {
				field += "." + p.Field
			}
			l.Errorf(field, "%s", p.Message)
		}
		switch {
		case len(row.Source) > maxCatalogSource:
			l.Errorf(at+".source", "is %d bytes long: must be at most %d", len(row.Source), maxCatalogSource)
		case strings.ContainsFunc(row.Source, unicode.IsControl):
			l.Errorf(at+".source", "must be one line of text without control characters: messages quote it")
		}
		if row.ID == "" {
			continue
		}
		key := strings.ToLower(row.ID)
		if prev, dup := seen[key]; dup {
			l.Errorf(at+".id", "%q is also the id of spec.models[%d]: each model's facts must be given once (ids match without regard to case, as on the Hugging Face Hub)", row.ID, prev)
			continue
		}
		seen[key] = i
	}
	return l
}

// Facts is the row as the memory fit reads it, its Source saying where
// it came from: from, then the row's own source when it has one.
func (r *CatalogModel) Facts(from string) fit.Model {
	m := r.Model
	m.Source = from
	if r.Source != "" {
		m.Source += ": " + r.Source
	}
	return m
}
