package fn

import (
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/internal/termsafe"
)

// RunMigrate is `airunway-render migrate` as a KRM function (kpt fn eval
// --exec "airunway-render migrate"): the ModelDeployments among the items
// move to the newest form of their served version (versions.Migrate), and
// to the served version to when it is not empty (migrations.Convert), each
// change reported as an info result. On an error the items are returned as
// they came, with the error results, and the exit code is 1.
func RunMigrate(stdin io.Reader, stdout, stderr io.Writer, to string) int {
	in, ok := readStdin(stdin, stderr)
	if !ok {
		return 1
	}
	rl, err := manifest.ReadResourceList(in)
	if err != nil {
		fmt.Fprintf(stderr, "[error] stdin: cannot read the ResourceList: %s\n", termsafe.Escape(err.Error()))
		return 1
	}
	var problems diag.List
	copies := make([]*yaml.RNode, len(rl.Items))
	for i, n := range rl.Items {
		copies[i] = n.Copy()
		changes, err := versions.MigrateItem(copies[i], to)
		problems = append(problems, versions.MigrateProblems(n, "", err)...)
		for _, c := range changes {
			problems = append(problems, diag.Problem{Severity: diag.Info, Resource: versions.ItemRef(n), Message: c})
		}
	}
	items := copies
	if problems.HasErrors() {
		items = rl.Items
	}
	w := &manifest.ResourceListWriter{FunctionConfig: rl.FunctionConfig, Results: rl.Results}
	for _, p := range problems.Sorted() {
		w.Results = append(w.Results, toResult(p))
	}
	err = encodeItems(w, items)
	var out []byte
	if err == nil {
		out, err = w.Write()
	}
	if err == nil {
		_, err = stdout.Write(out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "[error] %s\n", termsafe.Escape(err.Error()))
		return 1
	}
	problems.Report(stderr, "nothing was migrated")
	if problems.HasErrors() {
		return 1
	}
	return 0
}
