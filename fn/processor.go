package fn

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/internal/termsafe"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
	"github.com/airunway-render/airunway-render/render"
)

// Processor is the KRM function. It records the problems of its last run
// so the caller can print them.
type Processor struct {
	Problems diag.List
	// FromKpt is true when kpt sent the items: kpt shows a function's
	// results and then its stderr, so the problems need to be in only one
	// of them. kustomize shows only stderr.
	FromKpt bool
}

// kpt and kustomize both mark every item with a resource id
// (config.k8s.io/id); kustomize adds its own.
const (
	resourceIDAnnotation  = "config.k8s.io/id"
	kustomizeIDAnnotation = "kustomize.config.k8s.io/id"
)

// fromKpt reports whether kpt sent the items: they carry the resource id,
// and none carries kustomize's. A ResourceList written by hand has
// neither, and gets the problems on stderr as kustomize does.
func fromKpt(items []*yaml.RNode) bool {
	kpt := false
	for _, n := range items {
		if _, bad := versions.CheckShape(n); bad {
			continue // GetAnnotations would panic; the render refuses it
		}
		a := n.GetAnnotations()
		if a[kustomizeIDAnnotation] != "" {
			return false
		}
		kpt = kpt || a[resourceIDAnnotation] != ""
	}
	return kpt
}

// errFailed is returned with the output of a run that reported errors.
var errFailed = errors.New("error: function failure")

// Run reads a ResourceList, renders its items and returns the ResourceList
// to write. On error the items are written as they came, with the results
// saying why, and the error is errFailed; kpt and kustomize write nothing
// of a failed run.
//
// The ResourceList is read and written by package manifest, as the SDK
// would. Output objects are encoded as soon as they are rendered
// (render.Options.Encode), so a run holds YAML text rather than node
// trees.
func (p *Processor) Run(in []byte) ([]byte, error) {
	var out bytes.Buffer
	err := p.RunTo(in, &out)
	if out.Len() == 0 {
		return nil, err
	}
	return out.Bytes(), err
}

// RunTo is Run writing the ResourceList to out instead of returning it:
// at 10,000 models it is 50 MiB, which a run need not hold twice. An
// error writing to out is a *manifest.WriteError.
func (p *Processor) RunTo(in []byte, out io.Writer) error {
	rl, err := manifest.ReadResourceList(in)
	if err != nil {
		return err
	}
	items := rl.Items
	p.FromKpt = fromKpt(items)
	w := &manifest.ResourceListWriter{FunctionConfig: rl.FunctionConfig, Results: rl.Results}
	problems := danglingAliases(items)
	if problems.HasErrors() {
		// Items as they came would be written with aliases whose anchors
		// are gone, which no tool could read back, results included.
		return p.finish(out, w, nil, problems)
	}
	caps, problems := functionConfigCapabilities(rl.FunctionConfig)
	if !problems.HasErrors() {
		// Render lets go of each item once it is rendered (the output is
		// text), so a run holds the items' trees less and less.
		rl.Items = nil
		res := render.Render(items, render.Options{Capabilities: caps, Encode: manifest.EncodeItem, EncodeConcurrently: true,
			EncodeObject: manifest.EncodeObjectItem, KeepSkipped: p.FromKpt, ReleaseItems: true})
		problems = append(problems, res.Problems...)
		if !res.Problems.HasErrors() {
			w.Items = make([]manifest.Item, len(res.Encoded))
			for i, e := range res.Encoded {
				w.Items[i] = manifest.Item{YAML: e.YAML, SortKey: e.CallerKey}
			}
			return p.finish(out, w, nil, problems)
		}
		// The items as they came, read again: Render let them go.
		again, err := manifest.ReadResourceList(in)
		if err != nil {
			return err
		}
		items = again.Items
	}
	return p.finish(out, w, items, problems)
}

// finish records problems as results, encodes the items to write as they
// came (when the run failed) and writes the ResourceList to out.
func (p *Processor) finish(out io.Writer, w *manifest.ResourceListWriter, asTheyCame []*yaml.RNode, problems diag.List) error {
	p.Problems = problems.Sorted()
	for _, pr := range p.Problems {
		w.Results = append(w.Results, toResult(pr))
	}
	if err := encodeItems(w, asTheyCame); err != nil {
		return err
	}
	if err := w.Stream(out); err != nil {
		return err
	}
	if problems.HasErrors() {
		return errFailed
	}
	return nil
}

// danglingAliases refuses items that use a YAML alias whose anchor lies
// outside them, in another item or in the ResourceList around the items
// (found by FuzzResourceList): written back alone, the alias would name an
// anchor that is not there.
func danglingAliases(items []*yaml.RNode) diag.List {
	var l diag.List
	for _, n := range items {
		a := yamlerr.OutsideAlias(n.YNode())
		if a == nil {
			continue
		}
		var ref diag.Resource
		if _, bad := versions.CheckShape(n); !bad { // kyaml's accessors need a sound shape
			ref = diag.Resource{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
		}
		l = append(l, diag.Problem{Severity: diag.Error, Resource: ref,
			Message: fmt.Sprintf("uses the YAML alias *%s at line %d, whose anchor is outside this object; an item must not refer to anchors outside it (write the value out)", a.Value, a.Line)})
	}
	return l
}

// functionConfigCapabilities reads capabilities from the function config
// (a mapping, or nil) when it is a ClusterCapabilities object. Any other
// config (kpt's empty placeholder, the ConfigMap kustomize needs to
// declare the function) is ignored. Like the SDK's accessors, `kind`,
// `apiVersion` and `metadata.name` count only when they are strings.
func functionConfigCapabilities(cfg *yaml.Node) (*capabilities.Resolved, diag.List) {
	kind := manifest.StringScalar(manifest.Field(cfg, "kind"))
	if cfg == nil || len(cfg.Content) == 0 || kind != hub.KindClusterCapabilities {
		return nil, nil
	}
	caps, l := capabilities.ResolveNode(yaml.NewRNode(cfg).Copy())
	ref := diag.Resource{APIVersion: manifest.StringScalar(manifest.Field(cfg, "apiVersion")), Kind: kind,
		Name: manifest.StringScalar(manifest.Field(manifest.Field(cfg, "metadata"), "name"))}
	return caps, l.Attach(ref, "functionConfig")
}

// encodeItems adds items to w, as they are.
func encodeItems(w *manifest.ResourceListWriter, items []*yaml.RNode) error {
	for _, n := range items {
		b, key, err := manifest.EncodeItem(n)
		if err != nil {
			return err
		}
		w.Items = append(w.Items, manifest.Item{YAML: b, SortKey: key})
	}
	return nil
}

func toResult(p diag.Problem) *manifest.Result {
	// kpt prints results to a terminal: what a repository wrote in them is
	// escaped, as on stderr.
	r := &manifest.Result{Message: termsafe.Escape(p.Message), Severity: string(p.Severity)}
	if p.Resource != (diag.Resource{}) {
		r.ResourceRef = &manifest.ResultRef{APIVersion: p.Resource.APIVersion, Kind: p.Resource.Kind, Name: termsafe.Escape(p.Resource.Name), Namespace: termsafe.Escape(p.Resource.Namespace)}
		if p.Field != "" {
			r.Field = &manifest.ResultField{Path: p.Field}
		}
	}
	if p.File != "" {
		r.File = &manifest.ResultFile{Path: termsafe.Escape(p.File)}
	}
	if p.Code != (diag.Code{}) {
		r.Tags = map[string]string{"code": p.Code.String()}
	}
	return r
}
