package cli

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/plan"
	"github.com/airunway-render/airunway-render/render"
)

// `plan --fleet DIR --write`: each model the plan placed gets its cluster
// as annotation airunway.ai/cluster, in the file it was read from, with
// comments and layout kept and the file replaced as migrate replaces one
// (cli/migrate_files.go), so that the assignment is a reviewed diff.
// Nothing is written when some model fits no cluster: the run fails as a
// whole.
func writeAssignments(f *plan.Fleet, in *fleetInputs, paths []string, s streams) error {
	if !f.Fits {
		fmt.Fprintf(s.errOut, "airunway-render plan --fleet --write: nothing was written: the fleet does not fit\n")
		return exitCode(exitShort)
	}
	assign := map[types.NamespacedName]string{}
	var names []string
	seen := map[string]bool{}
	for _, m := range f.Models {
		if m.Kept {
			continue
		}
		key := types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
		assign[key] = m.Cluster
		if file := in.files[key]; !seen[file] {
			seen[file] = true
			names = append(names, file)
		}
	}
	if len(names) == 0 {
		fmt.Fprintf(s.errOut, "airunway-render plan --fleet --write: every model is already assigned; no file was changed\n")
		return nil
	}
	scope, err := newNamedScope(paths)
	if err != nil {
		return fail(err)
	}
	defer scope.close()
	pending, problems := planEdits(scope, names, assignEdit(assign), true)
	problems.Report(s.errOut, "no file was changed")
	if problems.HasErrors() {
		return exitCode(1)
	}
	if err := writeMigrations(pending, "needed a cluster recorded", s.errOut, s.errOut); err != nil {
		return err
	}
	fmt.Fprintf(s.errOut, "airunway-render plan --fleet --write: recorded the cluster of %d model(s) in %d file(s); review and commit them\n", len(assign), len(pending))
	return nil
}

// assignEdit records the cluster of each model of assign on its object.
func assignEdit(assign map[types.NamespacedName]string) itemEdit {
	return func(n *yaml.RNode) ([]string, error) {
		if n.GetKind() != hub.KindModelDeployment {
			return nil, nil
		}
		cluster, ok := assign[types.NamespacedName{Namespace: n.GetNamespace(), Name: n.GetName()}]
		if !ok || n.GetAnnotations()[hub.AnnotationCluster] == cluster {
			return nil, nil
		}
		if err := render.SetAnnotation(n, hub.AnnotationCluster, cluster); err != nil {
			return nil, err
		}
		return []string{fmt.Sprintf("assigned to cluster %q (annotation %s)", cluster, hub.AnnotationCluster)}, nil
	}
}
