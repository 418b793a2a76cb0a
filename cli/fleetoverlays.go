package cli

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/plan"
)

// A fleet's cluster is usually a kustomization beside its capability file
// (examples/fleet/clusters/<name>): the fleet's models, maybe patched for
// that cluster, and the renderer. Argo CD and Flux deploy that overlay, so
// `plan --fleet` weighs each model on a cluster as the cluster's overlay
// hands it to the renderer, not as its file in the model paths says.

// clusterOverlay is what one cluster's overlay deploys.
type clusterOverlay struct {
	dir    string                               // the overlay's directory, as named
	models map[types.NamespacedName]*yaml.RNode // its ModelDeployments, by namespace and name
}

// readOverlays builds the overlay of every cluster whose capability file
// sits in a directory holding a kustomization, with build's guards, but
// with `airunway-render migrate` in place of the render function: the
// models as that cluster's renderer would receive them, patches included,
// moved to the newest form of their API version (which renders the same)
// and not rendered. A build that fails is an error naming the overlay.
func readOverlays(src files, clusters []plan.Cluster, where onDisk, stderr io.Writer) (map[string]clusterOverlay, diag.List) {
	overlays := map[string]clusterOverlay{}
	for _, c := range clusters {
		dir := filepath.Dir(c.File)
		if !isKustomization(src, dir) {
			continue
		}
		onDisk, root := where(dir)
		stop := stopAfter(defaultBuildTimeout, stderr, "the build of "+dir)
		res, err := buildKustomization(onDisk, root, "migrate")
		stop()
		if err != nil {
			return nil, diag.List{{Severity: diag.Error, File: dir, Message: fmt.Sprintf("holds cluster %q's kustomization, which `plan --fleet` builds (with the renderer left out) to weigh the models as the cluster deploys them, and the build failed: %v", c.Caps.Name, err)}}
		}
		models, err := overlayModels(res.YAML)
		if err != nil {
			return nil, diag.List{{Severity: diag.Error, File: dir, Message: fmt.Sprintf("cluster %q's kustomization built, but its output cannot be read: %v", c.Caps.Name, err)}}
		}
		overlays[c.Caps.Name] = clusterOverlay{dir: dir, models: models}
	}
	return overlays, nil
}

// overlayModels are the ModelDeployments of a build's output.
func overlayModels(out []byte) (map[types.NamespacedName]*yaml.RNode, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(out), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, err
	}
	models := map[types.NamespacedName]*yaml.RNode{}
	for _, n := range nodes {
		if plan.IsSourceModel(n) {
			models[types.NamespacedName{Namespace: n.GetNamespace(), Name: n.GetName()}] = n
		}
	}
	return models, nil
}

// modelOn is the model as cluster deploys it: its overlay's version when
// the cluster has an overlay, else the model's file. refused says why a
// cluster with an overlay can never run the model: the overlay does not
// include it.
func (in *fleetInputs) modelOn(cluster string, m plan.SourceModel) (node *yaml.RNode, refused string) {
	o, ok := in.overlays[cluster]
	if !ok {
		return m.Node, ""
	}
	if n, ok := o.models[types.NamespacedName{Namespace: m.Node.GetNamespace(), Name: m.Node.GetName()}]; ok {
		return n, ""
	}
	return nil, fmt.Sprintf("the cluster's kustomization (%s) does not include this model, so Argo CD or Flux never deploys it there", o.dir)
}

// unplannedModels warns about each model a cluster's overlay deploys that
// is not among the planned paths: the plan cannot weigh it, so that
// cluster's GPUs and costs leave it out.
func unplannedModels(overlays map[string]clusterOverlay, planned map[types.NamespacedName]string) diag.List {
	var l diag.List
	for _, name := range slices.Sorted(maps.Keys(overlays)) {
		o := overlays[name]
		var missing []string
		for key := range o.models {
			if _, ok := planned[key]; !ok {
				missing = append(missing, key.String())
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			l = append(l, diag.Problem{Severity: diag.Warning, Code: diag.UnplannedModels, File: o.dir,
				Message: fmt.Sprintf("cluster %q's kustomization deploys %s, which the planned paths do not hold: the plan leaves their GPUs and costs out; add the directory that holds them to the paths", name, firstOf(missing, 10))})
		}
	}
	return l
}
