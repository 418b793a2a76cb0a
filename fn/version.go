package fn

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/airunway-render/airunway-render/providers/builtin"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/gateway"
	"github.com/airunway-render/airunway-render/internal/kubefeatures"
	"github.com/airunway-render/airunway-render/internal/version"
)

type matrixRow struct {
	provider, releases, defaults, renders, kubernetes, status string
}

// matrix is the compatibility matrix, built from the code that enforces it.
func matrix() []matrixRow {
	registry := builtin.ByName()
	var rows []matrixRow
	for _, b := range capabilities.Builtins {
		r := matrixRow{provider: b.Name, renders: b.Renders, releases: "no operator: `version` must be unset", defaults: "-", status: "rendered", kubernetes: kubefeatures.Describe(b.KubeFeatures)}
		if b.Versions != nil {
			r.releases, r.defaults = b.Versions.String(), b.DefaultVersion
		}
		if registry[b.Name] == nil {
			r.status = "selectable, rendering not yet implemented"
		}
		rows = append(rows, r)
	}
	return rows
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	markdown := false
	for _, a := range args {
		if a != "--markdown" {
			fmt.Fprintf(stderr, "airunway-render version: unknown argument %q (only --markdown is accepted)\n", a)
			return 1
		}
		markdown = true
	}
	if markdown {
		fmt.Fprint(stdout, MatrixMarkdown())
		return 0
	}
	fmt.Fprintf(stdout, "airunway-render %s\n\nSupported providers:\n", version.Version)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  PROVIDER\tOPERATOR RELEASES\tDEFAULT\tRENDERS\tKUBERNETES\tSTATUS")
	for _, r := range matrix() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", r.provider, strings.ReplaceAll(r.releases, "`", ""), r.defaults, r.renders, r.kubernetes, r.status)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nGateway API releases: %s; InferencePool API versions: %s\n",
		capabilities.GatewayAPIVersions, strings.Join(capabilities.InferencePoolVersions, ", "))
	fmt.Fprintln(stdout, strings.ReplaceAll(kubernetesNotes(), "`", ""))
	return 0
}

// kubernetesNotes says which Kubernetes releases accept what the gateway and
// the inputs can add, and which releases the renderer is checked against.
func kubernetesNotes() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Kubernetes: the endpoint picker the renderer deploys for a gateway needs %s", kubefeatures.Describe(gateway.KubeFeatures))
	for _, f := range kubefeatures.Features {
		if f.InputDependent {
			fmt.Fprintf(&b, "; a volume with the %s needs ≥ %s", f.Name, f.Since)
		}
	}
	fmt.Fprintf(&b, ". Feature releases: ")
	for i, f := range kubefeatures.Features {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %s", f.Name, f.History)
	}
	fmt.Fprintf(&b, ". Rendered objects are validated against the schemas of Kubernetes %s (`k8s.io/api`), and the status reporter is tested on kube-apiserver %s. The operators' own Kubernetes requirements come on top.\n",
		kubefeatures.SchemaRelease, kubefeatures.ReporterTested)
	return b.String()
}

// MatrixMarkdown renders the compatibility matrix as the README shows it.
func MatrixMarkdown() string {
	var b strings.Builder
	b.WriteString("| provider | operator releases | embedded default | renders | Kubernetes (rendered objects) | status |\n|---|---|---|---|---|---|\n")
	for _, r := range matrix() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", r.provider, r.releases, r.defaults, r.renders, r.kubernetes, r.status)
	}
	fmt.Fprintf(&b, "\nGateway API releases %s; InferencePool API versions `%s`.\n",
		capabilities.GatewayAPIVersions, strings.Join(capabilities.InferencePoolVersions, "`, `"))
	b.WriteString("\n" + kubernetesNotes())
	return b.String()
}
