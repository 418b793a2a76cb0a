package capabilities

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/airunway-render/airunway-render/internal/kubefeatures"
)

// GatewayKubeFeatures names the Kubernetes features (package kubefeatures)
// of the endpoint picker the renderer deploys for a gateway: its gRPC
// health probes and the `kubernetes.io/h2c` appProtocol of its Service.
// Like each provider's Builtin.KubeFeatures, a golden test holds it true
// and tight against what the gateway renders.
var GatewayKubeFeatures = []string{"gRPC probes", "Service appProtocol"}

// MatrixRow is one provider's line of the compatibility matrix.
type MatrixRow struct {
	Provider string
	// Releases is the supported operator range, in Markdown.
	Releases string
	// Default is the release the embedded default capabilities declare.
	Default string
	// Newest is the release an entry without `version` renders for.
	Newest     string
	Renders    string
	Kubernetes string
}

// Matrix is the compatibility matrix, built from the catalogue that the
// capability-file checks enforce; docs/capability-file.md and `airunway-render version`
// publish it, never a hand-written copy.
func Matrix() []MatrixRow {
	var rows []MatrixRow
	for _, b := range Builtins {
		r := MatrixRow{Provider: b.Name, Renders: b.Renders, Releases: "no operator: `version` must be unset", Default: "-", Newest: "-", Kubernetes: kubefeatures.Describe(b.KubeFeatures)}
		if b.Versions != nil {
			r.Releases, r.Default, r.Newest = b.Versions.String(), b.DefaultVersion, b.NewestVersion
		}
		rows = append(rows, r)
	}
	return rows
}

// MatrixMarkdown renders the matrix as docs/capability-file.md shows it.
func MatrixMarkdown() string {
	var b strings.Builder
	b.WriteString("| provider | operator releases | embedded default | newest (no `version`) | renders | Kubernetes (rendered objects) |\n|---|---|---|---|---|---|\n")
	for _, r := range Matrix() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", r.Provider, r.Releases, r.Default, r.Newest, r.Renders, r.Kubernetes)
	}
	fmt.Fprintf(&b, "\nGateway API releases %s; InferencePool API versions `%s`.\n",
		GatewayAPIVersions, strings.Join(InferencePoolVersions, "`, `"))
	b.WriteString("\n" + kubernetesNotes())
	return b.String()
}

// WriteMatrixText writes the matrix for a terminal: aligned columns,
// without Markdown's backquotes.
func WriteMatrixText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  PROVIDER\tOPERATOR RELEASES\tDEFAULT\tNEWEST\tRENDERS\tKUBERNETES")
	for _, r := range Matrix() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", r.Provider, strings.ReplaceAll(r.Releases, "`", ""), r.Default, r.Newest, r.Renders, r.Kubernetes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nGateway API releases: %s; InferencePool API versions: %s\n%s",
		GatewayAPIVersions, strings.Join(InferencePoolVersions, ", "), strings.ReplaceAll(kubernetesNotes(), "`", ""))
	return err
}

// kubernetesNotes says which Kubernetes releases accept what the gateway
// and the inputs can add, and which releases the renderer is checked
// against.
func kubernetesNotes() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Kubernetes: the endpoint picker the renderer deploys for a gateway needs %s", kubefeatures.Describe(GatewayKubeFeatures))
	for _, f := range kubefeatures.Features {
		if f.InputDependent {
			fmt.Fprintf(&b, "; %s needs ≥ %s", f.UsedBy, f.Since)
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
