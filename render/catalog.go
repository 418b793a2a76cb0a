package render

import (
	"fmt"
	"maps"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/manifest"
)

// CatalogFacts reads the model facts of every ModelCatalog among items
// (docs/will-it-run.md): each is decoded strictly and validated
// (hub.ValidateModelCatalog), and an id given by two of them is an error
// on the second, so that no run depends on which one it read first. It
// returns the facts by id, each saying where it came from (the catalog,
// its file, the row's own source), with models (the caller's, read from
// --model-dir) over them: what the memory fit reads, before the shipped
// catalog. models itself when items hold no ModelCatalog. source, when
// set, is Options.SourceFile: the problems get their field's line.
func CatalogFacts(items []*yaml.RNode, models map[string]fit.Model, source func(*yaml.RNode) string) (map[string]fit.Model, diag.List) {
	var catalogs []*yaml.RNode
	for _, n := range items {
		if _, bad := versions.CheckShape(n); bad || !isCatalog(n) {
			continue
		}
		catalogs = append(catalogs, n)
	}
	if len(catalogs) == 0 {
		return models, nil
	}
	// The order of the run's items is not the catalogs' order: kustomize,
	// kpt and a directory listing each have their own.
	sortBy(catalogs, func(n *yaml.RNode) string {
		s, _ := n.String()
		return identity(n).String() + "\x00" + fileOf(n) + "\x00" + s
	})
	type where struct {
		catalog *yaml.RNode
		row     int
	}
	var problems diag.List
	facts := map[string]fit.Model{}
	seen := map[string]where{}
	for _, n := range catalogs {
		ref, file := identity(n), fileOf(n)
		c, l := decodeCatalog(n)
		problems = append(problems, l.Attach(ref, file)...)
		if c == nil {
			continue
		}
		from := "the ModelCatalog " + catalogName(n)
		if file != "" {
			from += " (" + file + ")"
		}
		for i := range c.Spec.Models {
			row := &c.Spec.Models[i]
			if row.ID == "" {
				continue
			}
			key := strings.ToLower(row.ID)
			prev, dup := seen[key]
			switch {
			case dup && prev.catalog == n:
				continue // hub.ValidateModelCatalog said so
			case dup:
				other := "ModelCatalog " + catalogName(prev.catalog)
				if f := fileOf(prev.catalog); f != "" {
					other += " (file " + f + ")"
				}
				problems = append(problems, diag.Problem{Severity: diag.Error, Resource: ref, File: file, Field: fmt.Sprintf("spec.models[%d].id", i),
					Message: fmt.Sprintf("%q is also given by spec.models[%d] of %s: each model's facts must be given once across the run's ModelCatalogs (ids match without regard to case, as on the Hugging Face Hub)", row.ID, prev.row, other)})
				continue
			}
			seen[key] = where{catalog: n, row: i}
			facts[row.ID] = row.Facts(from)
		}
	}
	maps.Copy(facts, models)
	if source != nil {
		problems = withLines(problems, catalogs, source)
	}
	return facts, problems
}

// isCatalog reports whether n is a ModelCatalog of ours that is input,
// not an earlier run's output. CheckShape must have passed.
func isCatalog(n *yaml.RNode) bool {
	group, _, _ := strings.Cut(n.GetApiVersion(), "/")
	return group == hub.Group && n.GetKind() == hub.KindModelCatalog && n.GetAnnotations()[hub.AnnotationGeneratedFrom] == ""
}

// decodeCatalog decodes and validates one ModelCatalog; nil when it could
// not be decoded.
func decodeCatalog(n *yaml.RNode) (*hub.ModelCatalog, diag.List) {
	js, l := manifest.ObjectJSON(n)
	if l.HasErrors() {
		return nil, l
	}
	c, l := versions.DecodeModelCatalog(n.GetApiVersion(), js)
	if c == nil {
		if !l.HasErrors() {
			l.Errorf("", "cannot decode the model catalog")
		}
		return nil, l
	}
	return c, append(l, hub.ValidateModelCatalog(c)...)
}

// catalogName is a catalog's namespace/name, or its name without a
// namespace (a catalog is local configuration and needs none).
func catalogName(n *yaml.RNode) string {
	if ns := n.GetNamespace(); ns != "" {
		return ns + "/" + n.GetName()
	}
	return n.GetName()
}
