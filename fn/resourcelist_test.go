package fn

import (
	"bytes"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/internal/testing/fntest"
)

// TestRunWritesItemsAsTheyCame: a failed run writes its items as they
// came, with the results saying why, so Render must not change its input:
// the output is what a fresh read of the input, with the run's problems as
// results, writes. (internal/manifest's parity suite holds the reading and
// the writing to the KRM functions SDK.)
func TestRunWritesItemsAsTheyCame(t *testing.T) {
	inputs := append(fntest.ResourceListSeeds(t, ".."), []byte(fntest.ResourceList("", fntest.GoodMD, fntest.BadMD)))
	failed := 0
	for i, in := range inputs {
		p := &Processor{}
		out, err := p.Run(in)
		if err != errFailed {
			continue
		}
		failed++
		rl, err := manifest.ReadResourceList(in)
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		w := &manifest.ResourceListWriter{FunctionConfig: rl.FunctionConfig, Results: rl.Results}
		for _, pr := range p.Problems {
			w.Results = append(w.Results, toResult(pr))
		}
		if !danglingAliases(rl.Items).HasErrors() {
			if err := encodeItems(w, rl.Items); err != nil {
				t.Fatalf("input %d: %v", i, err)
			}
		}
		want, err := w.Write()
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		if !bytes.Equal(out, want) {
			t.Errorf("input %d: the failed run did not write its items as they came\n--- as they came\n%s\n--- Processor.Run\n%s", i, want, out)
		}
	}
	if failed < 5 {
		t.Fatalf("only %d inputs failed", failed)
	}
}

// TestRunRefusesWhatIsNoResourceList: input that is not a ResourceList
// (manifest.ReadResourceList's refusals) exits 1 with one line saying
// why, and nothing written.
func TestRunRefusesWhatIsNoResourceList(t *testing.T) {
	for _, tc := range []struct{ in, refused string }{
		{"kind: [ResourceList\n", "line 1: did not find expected ',' or ']'"},
		{"kind: ResourceList\n---\nkind: ResourceList\n", "the input holds 2 YAML documents; it must be one ResourceList, in one document"},
		{"kind: ConfigMap\n", "`kind` must be \"ResourceList\", got \"ConfigMap\"; the input must be a ResourceList"},
		{"kind: ResourceList\nx: &o {kind: ConfigMap}\nitems: [*o]\n", "`items[0]` must be a mapping (an object), got a YAML alias"},
		{"kind: ResourceList\nx: \xff\n", "is not valid UTF-8; YAML input must be UTF-8 text"},
	} {
		var stdout, stderr bytes.Buffer
		if code := Run(strings.NewReader(tc.in), &stdout, &stderr); code != 1 || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q; want exit 1 and nothing written", tc.in, code, stdout.String())
		}
		if want := "[error] stdin: cannot read the ResourceList: " + tc.refused + "\n"; stderr.String() != want {
			t.Errorf("%q: stderr:\n%s\nwant:\n%s", tc.in, stderr.String(), want)
		}
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
