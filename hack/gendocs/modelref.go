package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers/builtin"
	"github.com/airunway-render/airunway-render/render"
	"github.com/airunway-render/airunway-render/schemas"
)

// modelDeploymentSchema is the CRD schema the reference reads defaults and
// constraints from: upstream's, as hack/derive-schemas derived it.
const modelDeploymentSchema = "airunway/airunway.ai_modeldeployment_v1alpha1_main-b0d3fb77.json"

// probeModel is the model every probe starts from: one GPU, vLLM, a
// Hugging Face model every provider serves; the provider is filled in.
const probeModel = `{model: {id: Qwen/Qwen3-0.6B}, engine: {type: vllm}, resources: {gpu: {count: 1}}}`

// outcome is what setting a field does to one provider's output.
type outcome struct {
	kind    string // "honoured", "no effect", "refused"
	message string // the error, when refused
}

// modelReference renders the field table of docs/model-reference.md and
// the refusals below it.
func modelReference() (string, error) {
	schema, err := readSchema()
	if err != nil {
		return "", err
	}
	names := providerNames()
	var b strings.Builder
	notes := &refusals{seen: map[string]bool{}}
	b.WriteString("| field | what it does | default | allowed | " + strings.Join(quoteAll(names), " | ") + " |\n")
	b.WriteString("|---|---|---|---|" + strings.Repeat("---|", len(names)) + "\n")
	for _, f := range fields {
		s, ok := lookup(schema, f.path)
		if !ok {
			return "", fmt.Errorf("field %q is not in the CRD schema %s", f.path, modelDeploymentSchema)
		}
		cells, err := probeField(f, names, notes)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "| `spec.%s` | %s | %s | %s | %s |\n", f.path, f.about, defaultOf(s, f), allowed(s, f), strings.Join(cells, " | "))
	}
	if notes.Len() > 0 {
		b.WriteString("\nRefusals and warnings, in the renderer's words (each message once, under the first field that meets it):\n\n")
		b.WriteString(notes.String())
	}
	return b.String(), nil
}

// probeField renders the field's base and base+set for each provider.
func probeField(f field, names []string, notes *refusals) ([]string, error) {
	if f.over != "" {
		if err := checkOver(f, names); err != nil {
			return nil, err
		}
	}
	cells := make([]string, len(names))
	if f.set == "" {
		for i := range cells {
			cells[i] = "(column)"
		}
		return cells, nil
	}
	for i, p := range names {
		o, err := probe(f, p)
		if err != nil {
			return nil, err
		}
		cells[i] = o.kind
		if o.message != "" {
			notes.add(f.path, p, o.message)
		}
	}
	return cells, nil
}

// refusals lists the refusal messages below the table, each once.
type refusals struct {
	strings.Builder
	seen map[string]bool
}

func (r *refusals) add(path, provider, message string) {
	if r.seen[message] {
		return
	}
	r.seen[message] = true
	fmt.Fprintf(r, "- `spec.%s`, `%s`: %s\n", path, provider, message)
}

// probe renders base and base+set with provider p.
func probe(f field, p string) (outcome, error) {
	before, problems, err := renderSpec(p, f.base)
	if err != nil {
		return outcome{}, err
	}
	if problems.HasErrors() {
		return outcome{kind: "refused", message: firstError(problems)}, nil
	}
	after, withField, err := renderSpec(p, f.base, f.set)
	if err != nil {
		return outcome{}, err
	}
	if withField.HasErrors() {
		return outcome{kind: "refused", message: firstError(withField)}, nil
	}
	o := outcome{kind: "honoured"}
	w := newWarning(problems, withField)
	switch {
	case after == before && w == "" && warnsAbout(problems, f.path):
		// The base already warns that the provider ignores what encloses
		// the field (a volume the provider does not mount).
		o.kind = "no effect, warned above"
	case after == before:
		o.kind = "no effect"
	}
	if w != "" {
		o.kind += ", warns"
		o.message = w
	}
	return o, nil
}

// warnsAbout reports a warning about the field or what encloses it (a
// volume the provider ignores, for the volume's own fields).
func warnsAbout(l diag.List, path string) bool {
	row := "spec." + path
	parent := row[:max(strings.LastIndex(row, "."), 0)]
	for _, p := range l {
		field := indexRe.ReplaceAllString(p.Field, "[]")
		if p.Severity == diag.Warning && field != "" && (strings.HasPrefix(row, field) || strings.HasPrefix(field, parent)) {
			return true
		}
	}
	return false
}

// indexRe matches a list index in a field path.
var indexRe = regexp.MustCompile(`\[\d+\]`)

// newWarning returns the first warning of after that before did not have.
func newWarning(before, after diag.List) string {
	had := map[string]bool{}
	for _, p := range before {
		had[p.Field+p.Message] = true
	}
	for _, p := range after {
		if p.Severity == diag.Warning && !had[p.Field+p.Message] {
			return describe(p)
		}
	}
	return ""
}

// checkOver makes sure the documented limit is the enforced one: past it,
// every provider refuses.
func checkOver(f field, names []string) error {
	for _, p := range names {
		_, problems, err := renderSpec(p, f.base, f.over)
		if err != nil {
			return err
		}
		if !problems.HasErrors() {
			return fmt.Errorf("field %q: the reference says %q, but %s renders %s", f.path, f.limit, p, f.over)
		}
	}
	return nil
}

// renderSpec renders the probe model, with the fragments merged into its
// spec in order, for provider p with the docs' capability file, and
// returns its objects without the ModelDeployment itself.
func renderSpec(p string, fragments ...string) (string, diag.List, error) {
	spec, err := parseFragment(probeModel)
	if err != nil {
		return "", nil, err
	}
	for _, frag := range fragments {
		if frag == "" {
			continue
		}
		m, err := parseFragment(frag)
		if err != nil {
			return "", nil, err
		}
		merge(spec, m)
	}
	merge(spec, map[string]any{"provider": map[string]any{"name": p}})
	model, err := sigsyaml.Marshal(map[string]any{
		"apiVersion": "airunway.ai/v1alpha1", "kind": "ModelDeployment",
		"metadata": map[string]any{"name": "probe", "namespace": "inference"},
		"spec":     spec,
	})
	if err != nil {
		return "", nil, err
	}
	items, err := parseItems(string(model), probeCapabilities())
	if err != nil {
		return "", nil, err
	}
	res := render.Render(items, render.Options{})
	var b strings.Builder
	for _, n := range res.Items {
		if n.GetKind() == "ModelDeployment" {
			continue
		}
		b.WriteString(n.MustString())
		b.WriteString("---\n")
	}
	return b.String(), res.Problems, nil
}

// probeCapabilities is the embedded default capability file (every
// provider at its default release) with a gateway and an AMD pool, so that
// the gateway fields and the GPU type have something to act on.
func probeCapabilities() string {
	// The vLLM image pinned, so its floating default does not warn on
	// every probe.
	caps := strings.Replace(string(capabilities.DefaultYAML()), "  - name: vllm\n", "  - name: vllm\n    images: {vllm: \"vllm/vllm-openai:v0.11.0\"}\n", 1)
	caps = strings.Replace(caps, "  - name: cpu\n", `  - name: amd-gpu
    selector: {amd.com/gpu.present: "true"}
    gpu: {resourceName: amd.com/gpu}
  - name: cpu
`, 1)
	return caps + `  gateway:
    inferencePoolVersion: inference.networking.k8s.io/v1
    gatewayAPIVersion: v1.5.1
    channel: standard
    parentRef: {name: inference-gateway, namespace: gateway-system}
`
}

func parseItems(docs ...string) ([]*yaml.RNode, error) {
	var items []*yaml.RNode
	for _, d := range docs {
		n, err := yaml.Parse(d)
		if err != nil {
			return nil, err
		}
		items = append(items, n)
	}
	return items, nil
}

func parseFragment(s string) (map[string]any, error) {
	var m map[string]any
	if err := sigsyaml.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("fragment %s: %w", s, err)
	}
	return m, nil
}

// merge merges src into dst: maps recursively, anything else replaced,
// nil removes the key.
func merge(dst, src map[string]any) {
	for k, v := range src {
		sub, isMap := v.(map[string]any)
		have, haveMap := dst[k].(map[string]any)
		switch {
		case v == nil:
			delete(dst, k)
		case isMap && haveMap:
			merge(have, sub)
		default:
			dst[k] = v
		}
	}
}

func firstError(l diag.List) string { return describe(l.Errors()[0]) }

func describe(e diag.Problem) string {
	msg := e.Message
	if e.Field != "" {
		msg = "`" + e.Field + "` " + msg
	}
	return strings.ReplaceAll(msg, "\n", " ")
}

func providerNames() []string {
	var names []string
	for _, p := range builtin.Providers() {
		names = append(names, p.Name())
	}
	sort.Strings(names)
	return names
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = "`" + v + "`"
	}
	return out
}

// schemaNode is the part of an OpenAPI v3 schema the reference reads.
type schemaNode struct {
	Type       string                `json:"type"`
	Default    any                   `json:"default"`
	Enum       []any                 `json:"enum"`
	Minimum    *float64              `json:"minimum"`
	MaxLength  *int                  `json:"maxLength"`
	Pattern    string                `json:"pattern"`
	Properties map[string]schemaNode `json:"properties"`
	Items      *schemaNode           `json:"items"`
	Required   []string              `json:"required"`
}

func readSchema() (schemaNode, error) {
	data, err := fs.ReadFile(schemas.FS, modelDeploymentSchema)
	if err != nil {
		return schemaNode{}, err
	}
	var crd struct {
		OpenAPIV3Schema schemaNode `json:"openAPIV3Schema"`
	}
	if err := json.Unmarshal(data, &crd); err != nil {
		return schemaNode{}, fmt.Errorf("%s: %w", modelDeploymentSchema, err)
	}
	return crd.OpenAPIV3Schema.Properties["spec"], nil
}

// lookup finds a spec path (`a.b[].c`) in the schema.
func lookup(s schemaNode, path string) (schemaNode, bool) {
	for _, part := range strings.Split(path, ".") {
		list := strings.HasSuffix(part, "[]")
		next, ok := s.Properties[strings.TrimSuffix(part, "[]")]
		if !ok {
			return schemaNode{}, false
		}
		if list {
			if next.Items == nil {
				return schemaNode{}, false
			}
			next = *next.Items
		}
		s = next
	}
	return s, true
}

// schemaPaths lists the spec's fields as the reference documents them:
// every field, a list as `name[]` and its items' fields below it, and
// Kubernetes' own types (env, tolerations) and free-form maps as one row.
func schemaPaths(s schemaNode, at string) []string {
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		sub, p := s.Properties[k], k
		if at != "" {
			p = at + "." + k
		}
		switch {
		case sub.Items != nil:
			out = append(out, p+"[]")
			if p != "env" && p != "tolerations" {
				out = append(out, schemaPaths(*sub.Items, p+"[]")...)
			}
		case len(sub.Properties) == 0:
			out = append(out, p)
		default:
			out = append(out, schemaPaths(sub, p)...)
		}
	}
	return out
}

func defaultOf(s schemaNode, f field) string {
	var parts []string
	if s.Default != nil && s.Default != "" {
		parts = append(parts, "`"+fmt.Sprint(s.Default)+"`")
	}
	if f.defaulted != "" {
		parts = append(parts, f.defaulted)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

func allowed(s schemaNode, f field) string {
	var parts []string
	if len(s.Enum) > 0 {
		var vals []string
		for _, v := range s.Enum {
			vals = append(vals, "`"+fmt.Sprint(v)+"`")
		}
		parts = append(parts, "one of "+strings.Join(vals, ", "))
	}
	if s.Minimum != nil {
		parts = append(parts, fmt.Sprintf("≥ %g", *s.Minimum))
	}
	if s.MaxLength != nil {
		parts = append(parts, fmt.Sprintf("at most %d characters", *s.MaxLength))
	}
	if s.Pattern == hub.VolumeNameRe.String() {
		parts = append(parts, "a DNS label")
	}
	if f.limit != "" {
		parts = append(parts, f.limit)
	}
	if len(parts) == 0 {
		return typeOf(s)
	}
	return typeOf(s) + ": " + strings.Join(parts, "; ")
}

func typeOf(s schemaNode) string {
	switch {
	case s.Type == "" && s.Pattern != "":
		return "quantity" // int-or-string with the quantity pattern
	case s.Type == "":
		return "object"
	case s.Type == "array":
		return "list"
	}
	return s.Type
}
