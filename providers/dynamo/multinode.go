package dynamo

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// shellNeutral matches a token that a POSIX shell reads as itself in any
// position: no whitespace, quote, `$`, backquote, glob, redirection or
// command separator.
var shellNeutral = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// checkMultinodeArgs refuses user strings a multinode worker cannot carry.
// For a worker that `spec.provider.overrides` spreads over several nodes
// (`multinode.nodeCount`), the operator rewrites the container into
// `sh -c "<command> <args> <its own flags>"` (the Ray leader always; data-
// and tensor-parallel workers where their node rank needs shell
// arithmetic). Releases before the operator quoted those arguments join
// them as they are, so a `;` or a `$(...)` runs in that shell; later ones
// put them in double quotes with `$` as `\$`, which the kubelet then reads
// as a `$(VAR)` reference again (the `$$` escape of
// providers.EscapeExpansion no longer pairs up), and the Hugging Face
// token reaches the engine's command line. No quoting the renderer adds
// survives both, so such a worker takes shell-neutral tokens only.
func checkMultinodeArgs(md *hub.ModelDeployment, l *diag.List) {
	service := multinodeWorker(md)
	if service == "" {
		return
	}
	refuse := func(field, value string) {
		if !shellNeutral.MatchString(value) {
			l.Errorf(field, "%q cannot be passed to %s, which `spec.provider.overrides` spreads over several nodes: the Dynamo operator then runs that worker's arguments through `sh -c`, where this value would not reach the engine as written (or would run as shell code); use only letters, digits and `_@%%+=:,./-`, or run the worker on one node", value, service)
		}
	}
	m := &md.Spec.Model
	if m.ID != "" {
		refuse("spec.model.id", m.ID)
	}
	if m.ServedName != "" {
		refuse("spec.model.servedName", m.ServedName)
	}
	e := md.Spec.Engine
	if e == nil || hub.IsMocker(md) {
		return // the mocker takes no engine arguments (warned)
	}
	for _, k := range slices.Sorted(maps.Keys(e.Args)) {
		if v := e.Args[k]; v != "" {
			refuse("spec.engine.args."+k, v)
		}
	}
	for i, tok := range e.ExtraArgs {
		refuse(fmt.Sprintf("spec.engine.extraArgs[%d]", i), tok)
	}
}

// MaxNodeCount bounds `multinode.nodeCount`: the nodes one worker replica
// spans. The largest systems Dynamo documents span a rack (18 nodes of a
// GB200 NVL72); the bound leaves room for more while keeping a plan's pod
// count (replicas × nodes) far inside what it can pack.
const MaxNodeCount = 64

// checkNodeCount refuses a worker spread over more nodes than MaxNodeCount.
func checkNodeCount(md *hub.ModelDeployment, l *diag.List) {
	for _, w := range workerServices(md) {
		if n := (Provider{}).NodesPerPod(md, w.component); n > MaxNodeCount {
			l.Errorf("spec.provider.overrides.spec.services."+w.service+".multinode.nodeCount", "is %d; a worker may span at most %d nodes", n, MaxNodeCount)
		}
	}
}

type workerService struct{ component, service string }

// workerServices are the model's worker services: one, or prefill and
// decode.
func workerServices(md *hub.ModelDeployment) []workerService {
	if md.Spec.Mode() == hub.ModeDisaggregated {
		return []workerService{{providers.ComponentPrefill, ServicePrefillWorker}, {providers.ComponentDecode, ServiceDecodeWorker}}
	}
	return []workerService{{providers.ComponentMain, ServiceWorker}}
}

// multinodeWorker names the first worker service spread over several
// nodes, "" when none is.
func multinodeWorker(md *hub.ModelDeployment) string {
	for _, w := range workerServices(md) {
		if (Provider{}).NodesPerPod(md, w.component) > 1 {
			return w.service
		}
	}
	return ""
}
