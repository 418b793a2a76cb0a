package kbuild

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestAsYAMLIsKustomizes holds asYAML, which writes within the output
// budget, to what it replaces: resmap's AsYaml, the bytes `kustomize build`
// prints (kustomize v5's api module, the version go.mod pins). Each case
// is a kustomization whose output has something a hand-written writer
// could get wrong: no objects, one, a List expanded, block scalars,
// comments, quoted values, a document separator inside a string, key
// order the transformers change.
func TestAsYAMLIsKustomizes(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"no objects": {
			"kustomization.yaml": "namePrefix: x-\n",
		},
		"one object": {
			"kustomization.yaml": "resources: [cm.yaml]\n",
			"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  a: b\n",
		},
		"several, reordered by kind and transformed": {
			"kustomization.yaml": "resources: [all.yaml]\nnamespace: prod\nlabels:\n- pairs: {team: ml}\n  includeSelectors: true\ncommonAnnotations:\n  note: \"yes\"\n",
			"all.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector:\n    matchLabels: {app: d}\n  template:\n    metadata:\n      labels: {app: d}\n    spec:\n      containers: [{name: c, image: \"vllm/vllm-openai:v0.11.0\", args: [\"--max-model-len\", \"4096\"]}]\n" +
				"---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod\n" +
				"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports: [{port: 80}]\n",
		},
		"a List expanded": {
			"kustomization.yaml": "resources: [list.yaml]\n",
			"list.yaml":          "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n",
		},
		"block scalars, comments, quoting and a separator inside a string": {
			"kustomization.yaml": "resources: [cm.yaml]\n",
			"cm.yaml": "# a comment before\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: text # trailing\n" +
				"data:\n  script: |\n    first line\n    ---\n    after a separator\n  folded: >-\n    folded\n    text\n" +
				"  quoted: 'single ''quote'''\n  number: \"1.5\"\n  bool: \"true\"\n  empty: \"\"\n  unicode: \"héllo ✓\"\n",
		},
		"a generated ConfigMap and a patch": {
			"kustomization.yaml": "resources: [cm.yaml]\nconfigMapGenerator:\n- name: gen\n  literals: [k=v]\npatches:\n- patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: one}\n    data: {patched: \"1\"}\n",
			"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  a: b\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := filesys.MakeFsInMemory()
			for file, content := range files {
				require.NoError(t, fsys.WriteFile("/app/"+file, []byte(content)))
			}
			objs, err := krusty.MakeKustomizer(options(false)).Run(fsys, "/app")
			require.NoError(t, err)
			want, err := objs.AsYaml()
			require.NoError(t, err)
			got, err := asYAML(objs)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		})
	}
}
