package fn

import (
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/render"
	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
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
	caps, problems := functionConfigCapabilities(rl.FunctionConfig)
	if !problems.HasErrors() {
		res := render.Render(rl.Items.CopyToResourceNodes(), render.Options{Capabilities: caps})
		problems = append(problems, res.Problems...)
		if !res.Problems.HasErrors() {
			rl.Items = sdk.MoveToKubeObjects(res.Items)
		}
	}
	p.Problems = problems.Sorted()
	for _, pr := range p.Problems {
		rl.Results = append(rl.Results, toResult(pr))
	}
	return !problems.HasErrors(), nil
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
