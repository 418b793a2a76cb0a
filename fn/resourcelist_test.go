package fn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/render"
)

// TestResourceListWriterMatchesSDK holds the function's output to the
// bytes the SDK's ResourceList.ToYAML writes for the same processed list: over
// every fuzz seed (the golden cases' inputs and outputs, the examples, the
// hostile inputs) and over inputs chosen for what the YAML emitter does
// with context: comments, flow style, block scalars, long strings,
// anchors, results with every field.
func TestResourceListWriterMatchesSDK(t *testing.T) {
	inputs := map[string][]byte{}
	for i, s := range fuzzResourceListSeeds(t) {
		inputs[fmt.Sprintf("seed-%03d", i)] = s
	}
	for name, in := range encodingCases {
		inputs[name] = []byte(in)
	}
	compared := 0
	for name, in := range inputs {
		want, ok := sdkEncoding(in)
		if !ok {
			if _, chosen := encodingCases[name]; chosen {
				t.Errorf("%s: the SDK does not read it as a ResourceList", name)
			}
			continue // not a ResourceList: nothing is encoded
		}
		got, err := (&Processor{}).Run(in)
		if err != nil && err != errFailed {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encodings differ\n--- SDK\n%s\n--- Processor.Run\n%s", name, want, got)
		}
		compared++
	}
	if compared < len(encodingCases)+50 {
		t.Fatalf("compared only %d inputs", compared)
	}
}

// sdkEncoding is the reference for Processor.Run: the same steps over
// the SDK's own ResourceList, the renderer returning nodes, and the SDK
// encoding the whole list at once. It reports false when in is not a
// ResourceList.
func sdkEncoding(in []byte) (out []byte, ok bool) {
	defer func() {
		if r := recover(); r != nil { // the SDK panics on some YAML aliases
			out, ok = nil, false
		}
	}()
	rl, err := sdk.ParseResourceList(in)
	if err != nil {
		return nil, false
	}
	items := make([]*yaml.RNode, len(rl.Items))
	for i, item := range rl.Items {
		items[i] = item.MoveToResourceNode()
	}
	problems := danglingAliases(items)
	switch {
	case problems.HasErrors():
		items = nil
	default:
		caps, l := sdkFunctionConfigCapabilities(rl.FunctionConfig)
		problems = l
		if !l.HasErrors() {
			// A copy, unlike Processor.Run: on error the reference writes
			// the items as they came, so a Render that changed its input
			// would show here.
			copies := make([]*yaml.RNode, len(items))
			for i, n := range items {
				copies[i] = n.Copy()
			}
			res := render.Render(copies, render.Options{Capabilities: caps})
			problems = append(problems, res.Problems...)
			if !res.Problems.HasErrors() {
				items = res.Items
			}
		}
	}
	rl.Items = sdk.MoveToKubeObjects(items)
	for _, p := range problems.Sorted() {
		rl.Results = append(rl.Results, sdkResult(toResult(p)))
	}
	out, err = rl.ToYAML()
	return out, err == nil
}

// sdkFunctionConfigCapabilities is functionConfigCapabilities through the
// SDK's accessors.
func sdkFunctionConfigCapabilities(cfg *sdk.KubeObject) (*capabilities.Resolved, diag.List) {
	if cfg == nil || cfg.IsEmpty() || cfg.GetKind() != hub.KindClusterCapabilities {
		return nil, nil
	}
	caps, l := capabilities.ResolveNode(cfg.CopyToResourceNode())
	ref := diag.Resource{APIVersion: cfg.GetAPIVersion(), Kind: cfg.GetKind(), Name: cfg.GetName()}
	return caps, l.Attach(ref, "functionConfig")
}

// sdkResult is r as the SDK's result type.
func sdkResult(r *result) *sdk.Result {
	if r == nil {
		return nil
	}
	s := &sdk.Result{Message: r.Message, Severity: sdk.Severity(r.Severity), Tags: r.Tags}
	if r.ResourceRef != nil {
		s.ResourceRef = &sdk.ResourceRef{APIVersion: r.ResourceRef.APIVersion, Kind: r.ResourceRef.Kind, Name: r.ResourceRef.Name, Namespace: r.ResourceRef.Namespace}
	}
	if r.Field != nil {
		s.Field = &sdk.Field{Path: r.Field.Path, CurrentValue: r.Field.CurrentValue, ProposedValue: r.Field.ProposedValue}
	}
	if r.File != nil {
		s.File = &sdk.File{Path: r.File.Path, Index: r.File.Index}
	}
	return s
}

// sdkParse is sdk.ParseResourceList with a panic (the SDK panics on a
// YAML alias in some places) returned as an error.
func sdkParse(in []byte) (rl *sdk.ResourceList, err error) {
	defer func() {
		if r := recover(); r != nil {
			rl, err = nil, fmt.Errorf("the SDK panics: %v", r)
		}
	}()
	return sdk.ParseResourceList(in)
}

var encodingCases = map[string]string{
	"comments-and-styles": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
# a comment before the first item
- apiVersion: v1 # trailing
  kind: ConfigMap
  metadata: {name: flow-meta, namespace: a}
  data:
    # head comment
    script: |
      #!/bin/sh
      echo "hi"   
        indented
    folded: >
      one
      two
    leading-space: |2
       starts with a space
    long: "` + strings.Repeat("a very long double-quoted string ", 8) + `"
    plain-long: ` + strings.Repeat("word ", 40) + `
    single: 'it''s'
    empty: ""
    unicode: "żółw 🐢"
    tab: "a\tb"
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: anchors
    namespace: b
    labels: &l
      app: x
    annotations: *l
  data: {k: v, list: "[1, 2]"}
- {apiVersion: v1, kind: Secret, metadata: {name: flow-item}, stringData: {a: b}}
- apiVersion: v1
  kind: List
  metadata:
    name: nested-lists
  items:
  - - a
    - b
  - []
  - {}
  - ~
functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: flow-config}}
`,
	"no-items-and-results": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
results:
- message: earlier
  severity: warning
  resourceRef: {apiVersion: v1, kind: ConfigMap, name: a, namespace: b}
  field: {path: data.x, currentValue: 1, proposedValue: 2}
  file: {path: a.yaml, index: 2}
  tags: {z: "1", a: "2"}
`,
	"invalid-model": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: airunway.ai/v1alpha1
  kind: ModelDeployment
  metadata:
    name: bad
    namespace: m
    annotations:
      config.kubernetes.io/path: models/bad.yaml
      internal.config.kubernetes.io/path: models/bad.yaml
  spec:
    model: {id: "-x"}
    engine: {type: vllm, args: {"max-model-len": "--x"}}
- apiVersion: airunway.ai/v1alpha1
  kind: ModelDeployment
  metadata: {name: bad, namespace: m}
  spec: {model: {id: a/b}}
`,
}

// readCases are inputs at the edges of what sdk.ParseResourceList
// accepts. refused is the message the function prints for an input it
// refuses (after "[error] stdin: cannot read the ResourceList: "), empty
// for one it reads.
var readCases = []struct {
	name, in, refused string
}{
	// accepted
	{name: "empty", in: ""},
	{name: "white space", in: " \n\t\n"},
	{name: "kind only", in: "kind: ResourceList\n"},
	{name: "no items", in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"},
	{name: "document marker", in: "---\nkind: ResourceList\n"},
	{name: "document end", in: "kind: ResourceList\n...\n"},
	{name: "flow mapping", in: "{kind: ResourceList, items: [{kind: ConfigMap}]}"},
	{name: "quoted kind and key", in: "'kind': \"ResourceList\"\n"},
	{name: "tagged kind", in: "kind: !!str ResourceList\n"},
	{name: "any apiVersion", in: "apiVersion: 7\nkind: ResourceList\n"},
	{name: "aliased apiVersion", in: "x: &a v1\napiVersion: *a\nkind: ResourceList\n"},
	{name: "kind set twice", in: "kind: ResourceList\nkind: ConfigMap\n"},
	{name: "non-string keys", in: "kind: ResourceList\n1: x\n[a]: y\n"},
	{name: "empty function config", in: "kind: ResourceList\nfunctionConfig: {}\n"},
	{name: "function config", in: "kind: ResourceList\nfunctionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n"},
	{name: "function config with an aliased name", in: "kind: ResourceList\nx: &a c\nfunctionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: *a}}\n"},
	{name: "items with aliases inside", in: "kind: ResourceList\nitems:\n- {apiVersion: &a v1, kind: ConfigMap, metadata: {name: *a}}\n"},
	{name: "items with tagged kinds", in: "kind: ResourceList\nitems:\n- {kind: !foo x}\n- {kind: 1, group: [], version: {}}\n- {}\n"},
	{name: "results", in: "kind: ResourceList\nresults:\n- message: m\n  severity: warning\n  resourceRef: {apiVersion: v1, kind: ConfigMap, name: a, namespace: b}\n  field: {path: data.x, currentValue: [1, {a: b}], proposedValue: 2}\n  file: {path: a.yaml, index: 2}\n  tags: {z: 1, a: \"2\"}\n  other: ignored\n"},
	{name: "results of old kyaml", in: "kind: ResourceList\nresults: {items: [{message: m, severity: info}]}\n"},
	{name: "results mapping without items", in: "kind: ResourceList\nresults: {x: 1}\n"},
	{name: "results scalar", in: "kind: ResourceList\nresults: none\n"},
	{name: "results null", in: "kind: ResourceList\nresults:\n"},
	{name: "results empty", in: "kind: ResourceList\nresults: []\n"},
	{name: "results with a null entry", in: "kind: ResourceList\nresults: [~, {message: m}]\n"},
	{name: "results with aliases", in: "kind: ResourceList\nx: &r {message: m}\nresults: [*r, *r]\n"},

	// refused
	{name: "not YAML", in: "kind: [ResourceList\n", refused: "line 1: did not find expected ',' or ']'"},
	{name: "tab indentation", in: "kind: ResourceList\nitems:\n\t- a\n", refused: "line 3: found character that cannot start any token"},
	{name: "unknown anchor", in: "kind: ResourceList\nitems: *a\n", refused: "unknown anchor 'a' referenced"},
	{name: "not UTF-8", in: "kind: ResourceList\nx: \xff\n", refused: "is not valid UTF-8; YAML input must be UTF-8 text"},
	{name: "document marker only", in: "---\n", refused: "the input is null; a ResourceList must be a YAML mapping"},
	{name: "comment only", in: "# nothing\n", refused: "the input holds no object; it must be one ResourceList, or empty"},
	{name: "scalar", in: "ResourceList\n", refused: "the input is \"ResourceList\"; a ResourceList must be a YAML mapping"},
	{name: "sequence", in: "- kind: ResourceList\n", refused: "the input is a sequence; a ResourceList must be a YAML mapping"},
	{name: "two documents", in: "kind: ResourceList\n---\nkind: ResourceList\n", refused: "the input holds 2 YAML documents; it must be one ResourceList, in one document"},
	{name: "empty document first", in: "---\n---\nkind: ResourceList\n", refused: "the input holds 2 YAML documents; it must be one ResourceList, in one document"},
	{name: "trailing document marker", in: "kind: ResourceList\n---\n", refused: "the input holds 2 YAML documents; it must be one ResourceList, in one document"},
	{name: "comment after a document marker", in: "kind: ResourceList\n---\n# nothing\n", refused: "the input holds 2 YAML documents; it must be one ResourceList, in one document"},
	{name: "scalar after the list", in: "kind: ResourceList\n---\nx\n", refused: "the input holds 2 YAML documents; it must be one ResourceList, in one document"},
	{name: "no kind", in: "apiVersion: config.kubernetes.io/v1\n", refused: "`kind` must be \"ResourceList\", got none; the input must be a ResourceList"},
	{name: "other kind", in: "kind: ConfigMap\n", refused: "`kind` must be \"ResourceList\", got \"ConfigMap\"; the input must be a ResourceList"},
	{name: "kind not a string", in: "kind: !foo ResourceList\n", refused: "`kind` must be \"ResourceList\", got \"ResourceList\" (!foo); the input must be a ResourceList"},
	{name: "kind under a tagged key", in: "!foo kind: ResourceList\n", refused: "`kind` must be \"ResourceList\", got none; the input must be a ResourceList"},
	{name: "kind an alias", in: "x: &k ResourceList\nkind: *k\n", refused: "`kind` must not be a YAML alias; write the value out"},
	{name: "group an alias", in: "x: &k g\ngroup: *k\nkind: ResourceList\n", refused: "`group` must not be a YAML alias; write the value out"},
	{name: "function config null", in: "kind: ResourceList\nfunctionConfig:\n", refused: "`functionConfig` must be a mapping (an object), got null"},
	{name: "function config scalar", in: "kind: ResourceList\nfunctionConfig: c\n", refused: "`functionConfig` must be a mapping (an object), got \"c\""},
	{name: "function config sequence", in: "kind: ResourceList\nfunctionConfig: []\n", refused: "`functionConfig` must be a mapping (an object), got a sequence"},
	{name: "function config alias", in: "kind: ResourceList\nx: &c {kind: ConfigMap}\nfunctionConfig: *c\n", refused: "`functionConfig` must be a mapping (an object), got a YAML alias"},
	{name: "function config kind an alias", in: "kind: ResourceList\nx: &k ConfigMap\nfunctionConfig: {kind: *k}\n", refused: "`functionConfig.kind` must not be a YAML alias; write the value out"},
	{name: "items null", in: "kind: ResourceList\nitems:\n", refused: "`items` must be a sequence, got null"},
	{name: "items mapping", in: "kind: ResourceList\nitems: {kind: ConfigMap}\n", refused: "`items` must be a sequence, got a mapping"},
	{name: "items alias", in: "kind: ResourceList\nx: &i []\nitems: *i\n", refused: "`items` must be a sequence, got a YAML alias"},
	{name: "item null", in: "kind: ResourceList\nitems: [{}, ~]\n", refused: "`items[1]` must be a mapping (an object), got null"},
	{name: "item scalar", in: "kind: ResourceList\nitems: [" + strings.Repeat("x", 50) + "]\n", refused: "`items[0]` must be a mapping (an object), got \"" + strings.Repeat("x", 40) + "...\""},
	{name: "item sequence", in: "kind: ResourceList\nitems: [[]]\n", refused: "`items[0]` must be a mapping (an object), got a sequence"},
	{name: "item alias", in: "kind: ResourceList\nx: &o {kind: ConfigMap}\nitems: [*o]\n", refused: "`items[0]` must be a mapping (an object), got a YAML alias"},
	{name: "item kind an alias", in: "kind: ResourceList\nitems: [{kind: &k ConfigMap}, {kind: *k}]\n", refused: "`items[1].kind` must not be a YAML alias; write the value out"},
	{name: "item version an alias", in: "kind: ResourceList\nx: &v v1\nitems: [{version: *v}]\n", refused: "`items[0].version` must not be a YAML alias; write the value out"},
	{name: "results alias", in: "kind: ResourceList\nx: &r []\nresults: *r\n", refused: "`results` must not be a YAML alias; write the value out"},
	{name: "results items alias", in: "kind: ResourceList\nx: &r []\nresults: {items: *r}\n", refused: "`results.items` must be a sequence, got a YAML alias"},
	{name: "results items scalar", in: "kind: ResourceList\nresults: {items: x}\n", refused: "`results.items` must be a sequence, got \"x\""},
	{name: "result scalar", in: "kind: ResourceList\nresults: [m]\n", refused: "`results` must be a list of results (message, severity, resourceRef, field, file, tags): line 2: cannot unmarshal !!str `m` into fn.result"},
	{name: "result severity a list", in: "kind: ResourceList\nresults: {items: [{severity: [error]}]}\n", refused: "`results.items` must be a list of results (message, severity, resourceRef, field, file, tags): line 2: cannot unmarshal !!seq into string"},
	{name: "result key twice", in: "kind: ResourceList\nresults: [{message: a, message: b}]\n", refused: "line 2: key \"message\" is already defined at line 2; a key must appear only once in a mapping"},
}

// TestReadResourceListMatchesSDK: readResourceList accepts what
// sdk.ParseResourceList accepts, reading the same items, function config
// and results, and refuses the rest with a readable message.
func TestReadResourceListMatchesSDK(t *testing.T) {
	for _, tc := range readCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			got, err := readResourceList(in)
			want, sdkErr := sdkParse(in)
			if (err == nil) != (sdkErr == nil) {
				t.Fatalf("readResourceList: %v; sdk.ParseResourceList: %v", err, sdkErr)
			}
			if (err == nil) != (tc.refused == "") {
				t.Fatalf("readResourceList: %v, want refused %q", err, tc.refused)
			}
			if err != nil {
				var stdout, stderr bytes.Buffer
				if code := Run(bytes.NewReader(in), &stdout, &stderr); code != 1 || stdout.Len() > 0 {
					t.Errorf("exit %d, stdout %q; want exit 1 and nothing written", code, stdout.String())
				}
				if w := "[error] stdin: cannot read the ResourceList: " + tc.refused + "\n"; stderr.String() != w {
					t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), w)
				}
				return
			}
			if len(got.items) != len(want.Items) {
				t.Fatalf("%d items, the SDK reads %d", len(got.items), len(want.Items))
			}
			for i, item := range want.Items {
				if got.items[i].MustString() != item.String() {
					t.Errorf("item %d:\n%s\nthe SDK reads:\n%s", i, got.items[i].MustString(), item.String())
				}
			}
			if empty := got.functionConfig == nil || len(got.functionConfig.Content) == 0; empty != want.FunctionConfig.IsEmpty() {
				t.Errorf("function config empty: %v, the SDK's: %v", empty, want.FunctionConfig.IsEmpty())
			} else if !empty && yaml.NewRNode(got.functionConfig).MustString() != want.FunctionConfig.String() {
				t.Errorf("function config:\n%s\nthe SDK reads:\n%s", yaml.NewRNode(got.functionConfig).MustString(), want.FunctionConfig.String())
			}
			gotResults, err := json.Marshal(got.results)
			if err != nil {
				t.Fatal(err)
			}
			wantResults, err := json.Marshal(want.Results)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.results) != len(want.Results) || len(want.Results) > 0 && !bytes.Equal(gotResults, wantResults) {
				t.Errorf("results %s, the SDK reads %s", gotResults, wantResults)
			}
		})
	}
}

// TestAliasedIdentities: items whose apiVersion or name is a YAML alias
// (to an anchor in the same item) crashed the SDK when it sorted them. The
// function renders an aliased apiVersion and refuses an aliased name or
// namespace with an error at its field.
func TestAliasedIdentities(t *testing.T) {
	const list = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
	const model = `- apiVersion: airunway.ai/v1alpha1
  kind: ModelDeployment
  metadata: {name: &q qwen, namespace: models, labels: {app: *q}}
  spec: {model: {id: Qwen/Qwen3-0.6B}, provider: {name: vllm}, resources: {gpu: {count: 1}}}
`
	out, err := (&Processor{}).Run([]byte(list + `- apiVersion: &v v1
  kind: ConfigMap
  metadata: {name: a}
  data: {version: *v}
- data: {version: &w v1}
  apiVersion: *w
  kind: ConfigMap
  metadata: {name: b}
` + model))
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("kind: Deployment")) || !bytes.Contains(out, []byte("apiVersion: &v v1")) || !bytes.Contains(out, []byte("apiVersion: *w")) {
		t.Errorf("the aliased apiVersion was not rendered:\n%s", out)
	}
	for _, field := range []string{"name", "namespace"} {
		in := list + "- apiVersion: v1\n  kind: ConfigMap\n  data: {k: &n shared}\n  metadata: {" + field + ": *n}\n" + model
		if field == "namespace" {
			in = strings.Replace(in, "{namespace: *n}", "{name: x, namespace: *n}", 1)
		}
		out, err := (&Processor{}).Run([]byte(in))
		if err != errFailed || !bytes.Contains(out, []byte("path: metadata."+field)) {
			t.Errorf("%s as an alias: err %v, want errFailed with a result at `metadata.%s`:\n%s", field, err, field, out)
		}
	}
}
