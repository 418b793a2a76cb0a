package fn

import (
	"fmt"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/render"
	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Processor is the KRM function. It records the problems of its last run
// so the caller can print them.
type Processor struct {
	Problems diag.List
}

var _ sdk.ResourceListProcessor = &Processor{}

// Process implements sdk.ResourceListProcessor. On error it leaves
// rl.Items as they came and returns false, which makes the run exit 1.
func (p *Processor) Process(rl *sdk.ResourceList) (bool, error) {
	if problems := danglingAliases(rl); problems.HasErrors() {
		// Items as they came would be written with aliases whose anchors
		// are gone, which no tool could read back, results included; kpt
		// and kustomize write nothing of a failed run anyway.
		rl.Items = nil
		return p.finish(rl, problems)
	}
	caps, problems := functionConfigCapabilities(rl.FunctionConfig)
	if !problems.HasErrors() {
		res := render.Render(rl.Items.CopyToResourceNodes(), render.Options{Capabilities: caps})
		problems = append(problems, res.Problems...)
		if !res.Problems.HasErrors() {
			rl.Items = sdk.MoveToKubeObjects(res.Items)
		}
	}
	return p.finish(rl, problems)
}

// finish records problems as results and reports whether the run
// succeeded.
func (p *Processor) finish(rl *sdk.ResourceList, problems diag.List) (bool, error) {
	p.Problems = problems.Sorted()
	for _, pr := range p.Problems {
		rl.Results = append(rl.Results, toResult(pr))
	}
	return !problems.HasErrors(), nil
}

// danglingAliases refuses items that use a YAML alias whose anchor lies
// outside them, in another item or in the ResourceList around the items
// (found by FuzzResourceList): written back alone, the alias would name an
// anchor that is not there.
func danglingAliases(rl *sdk.ResourceList) diag.List {
	// The check needs the parsed nodes themselves: a copy's aliases still
	// point into the original.
	nodes := make([]*yaml.RNode, len(rl.Items))
	for i, item := range rl.Items {
		nodes[i] = item.MoveToResourceNode()
	}
	defer func() { rl.Items = sdk.MoveToKubeObjects(nodes) }()
	var l diag.List
	for _, n := range nodes {
		anchors := map[*yaml.Node]bool{}
		var aliases []*yaml.Node
		walkNodes(n.YNode(), func(y *yaml.Node) {
			if y.Anchor != "" {
				anchors[y] = true
			}
			if y.Kind == yaml.AliasNode {
				aliases = append(aliases, y)
			}
		})
		for _, a := range aliases {
			if !anchors[a.Alias] {
				var ref diag.Resource
				if _, bad := render.CheckShape(n); !bad { // kyaml's accessors need a sound shape
					ref = diag.Resource{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
				}
				l = append(l, diag.Problem{Severity: diag.Error, Resource: ref,
					Message: fmt.Sprintf("uses the YAML alias *%s at line %d, whose anchor is outside this object; an item must not refer to anchors outside it (write the value out)", a.Value, a.Line)})
				break
			}
		}
	}
	return l
}

// walkNodes visits every node below n once, without following aliases.
func walkNodes(n *yaml.Node, visit func(*yaml.Node)) {
	visit(n)
	for _, c := range n.Content {
		walkNodes(c, visit)
	}
}

// functionConfigCapabilities reads capabilities from the function config
// when it is a ClusterCapabilities object. Any other config (kpt's empty
// placeholder, the ConfigMap kustomize needs to declare the function) is
// ignored.
func functionConfigCapabilities(cfg *sdk.KubeObject) (*capabilities.Resolved, diag.List) {
	if cfg == nil || cfg.IsEmpty() || cfg.GetKind() != v1.KindClusterCapabilities {
		return nil, nil
	}
	node := cfg.CopyToResourceNode()
	caps, l := capabilities.ResolveNode(node)
	ref := diag.Resource{APIVersion: cfg.GetAPIVersion(), Kind: cfg.GetKind(), Name: cfg.GetName()}
	return caps, l.Attach(ref, "functionConfig")
}

func toResult(p diag.Problem) *sdk.Result {
	r := &sdk.Result{Message: p.Message, Severity: sdk.Severity(p.Severity)}
	if p.Resource != (diag.Resource{}) {
		r.ResourceRef = &sdk.ResourceRef{APIVersion: p.Resource.APIVersion, Kind: p.Resource.Kind, Name: p.Resource.Name, Namespace: p.Resource.Namespace}
		if p.Field != "" {
			r.Field = &sdk.Field{Path: p.Field}
		}
	}
	if p.File != "" {
		r.File = &sdk.File{Path: p.File}
	}
	return r
}
