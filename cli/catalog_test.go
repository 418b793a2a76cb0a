package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// qwenConfig is a real config.json: Qwen3-0.6B's, from the model
// catalog's pinned sources.
func qwenConfig(t *testing.T) []byte {
	t.Helper()
	cfg, err := os.ReadFile("../hack/derive-model-catalog/sources/Qwen--Qwen3-0.6B_config.json")
	require.NoError(t, err)
	return cfg
}

const qwenIndex = `{"metadata": {"total_size": 1192099840}, "weight_map": {"lm_head.weight": "model-00001-of-00001.safetensors"}}`

func sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// qwenRow is the row catalog add writes for Qwen3-0.6B's files under id,
// with its source, indented as a row of spec.models.
func qwenRow(id, source string) string {
	return `  - id: ` + id + `
    architecture: Qwen3ForCausalLM
    params: 596049920
    dtype: bfloat16
    layers: 28
    heads: 16
    kvHeads: 8
    headDim: 128
    hiddenSize: 1024
    intermediateSize: 3072
    vocabSize: 151936
    tiedEmbeddings: true
    context: 40960
    weightBytes: 1192099840
` + source
}

// TestCatalogAddFromDir: catalog add writes a model's facts from its
// local config.json and safetensors index as a row of a new ModelCatalog
// file; run again, it changes nothing (the same bytes); on a hand-written
// file it replaces the model's row in place and adds another's at the
// end, keeping comments, order and the other rows.
func TestCatalogAddFromDir(t *testing.T) {
	dir := t.TempDir()
	weights := filepath.Join(dir, "weights")
	writeFile(t, filepath.Join(weights, "config.json"), string(qwenConfig(t)))
	writeFile(t, filepath.Join(weights, "model.safetensors.index.json"), qwenIndex)
	file := filepath.Join(dir, "models", "House_Models.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	source := fmt.Sprintf("    source: config.json (sha256:%s), model.safetensors.index.json (sha256:%s) of the directory %s\n", sum(qwenConfig(t)), sum([]byte(qwenIndex)), weights)

	out, stderr, code := run(t, "", "catalog", "add", "my-org/house-model", "--model-dir", weights, "-f", file)
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	require.Equal(t, file+": created; ModelCatalog house-models: added the row of my-org/house-model (spec.models[0])\n", out)
	created := `# Model facts for the memory fit, kept beside the models (docs/will-it-run.md);
# airunway-render catalog add adds or replaces a row.
apiVersion: airunway.ai/v1alpha1
kind: ModelCatalog
metadata:
  name: house-models
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  models:
` + qwenRow("my-org/house-model", source)
	requireFile(t, file, created)
	info, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o666)&^umask(t), info.Mode().Perm(), "a new file as any other the user creates")

	// Again: the same bytes, and the file is not even rewritten.
	before := info.ModTime()
	out, stderr, code = run(t, "", "catalog", "add", "my-org/house-model", "--model-dir", weights, "-f", file)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, file+": ModelCatalog house-models: the row of my-org/house-model is unchanged\n", out)
	requireFile(t, file, created)
	info, err = os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, before, info.ModTime())
	entries, err := os.ReadDir(filepath.Dir(file))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left")

	// A hand-written file: the row of the id (in another case) is replaced
	// where it is, with the comment above it; a new id goes last.
	handWritten := `# Our models' facts.
apiVersion: airunway.ai/v1alpha1
kind: ModelCatalog
metadata:
  name: house-models
  annotations: {config.kubernetes.io/local-config: "true"}  # kpt keeps it
spec:
  models:
  # The first one, measured by hand.
  - id: my-org/first
    weightBytes: 1000000000   # 1 GB
    dtype: fp8
  # Replaced below.
  - id: My-Org/House-Model
    params: 1
    dtype: bf16
  - id: my-org/last
    params: 2000000000
    dtype: bfloat16
    source: the model card
`
	writeFile(t, file, handWritten)
	out, stderr, code = run(t, "", "catalog", "add", "my-org/house-model", "--model-dir", weights, "-f", file)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, file+": ModelCatalog house-models: replaced the row of my-org/house-model (spec.models[1])\n", out)
	out, stderr, code = run(t, "", "catalog", "add", "my-org/new-model", "--model-dir", weights, "-f", file)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, file+": ModelCatalog house-models: added the row of my-org/new-model (spec.models[3])\n", out)
	edited := `# Our models' facts.
apiVersion: airunway.ai/v1alpha1
kind: ModelCatalog
metadata:
  name: house-models
  annotations: {config.kubernetes.io/local-config: "true"} # kpt keeps it
spec:
  models:
  # The first one, measured by hand.
  - id: my-org/first
    weightBytes: 1000000000 # 1 GB
    dtype: fp8
  # Replaced below.
` + qwenRow("my-org/house-model", source) + `  - id: my-org/last
    params: 2000000000
    dtype: bfloat16
    source: the model card
` + qwenRow("my-org/new-model", source)
	requireFile(t, file, edited)
	_, stderr, code = run(t, "", "catalog", "add", "my-org/new-model", "--model-dir", weights, "-f", file)
	require.Equal(t, 0, code, stderr)
	requireFile(t, file, edited)

	// A catalog without rows yet (`models:` null) gets its first.
	empty := filepath.Join(dir, "empty.yaml")
	writeFile(t, empty, "apiVersion: airunway.ai/v1alpha1\nkind: ModelCatalog\nmetadata:\n  name: empty\nspec:\n  models:\n")
	_, stderr, code = run(t, "", "catalog", "add", "my-org/house-model", "--model-dir", weights, "-f", empty)
	require.Equal(t, 0, code, stderr)
	requireFile(t, empty, "apiVersion: airunway.ai/v1alpha1\nkind: ModelCatalog\nmetadata:\n  name: empty\nspec:\n  models:\n"+qwenRow("my-org/house-model", source))

	// An empty file is filled as a new one.
	writeFile(t, empty, "\n")
	_, stderr, code = run(t, "", "catalog", "add", "my-org/house-model", "--model-dir", weights, "-f", empty)
	require.Equal(t, 0, code, stderr)
	requireFile(t, empty, strings.Replace(created, "name: house-models", "name: empty", 1))

	// Without -f, the row is printed.
	out, stderr, code = run(t, "", "catalog", "add", "my-org/house-model", "--model-dir", weights)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, unindent(qwenRow("my-org/house-model", source)), out)
	out, stderr, code = run(t, "", "catalog", "add", "my-org/house-model", "--model-dir", weights, "-o", "json")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(out, "{\n  \"id\": \"my-org/house-model\",\n  \"architecture\": \"Qwen3ForCausalLM\",\n"), out)
	require.Contains(t, out, "\"weightBytes\": 1192099840,\n  \"source\": \"config.json (sha256:")

	// A single checkpoint without an index: its size, stat'ed.
	require.NoError(t, os.Remove(filepath.Join(weights, "model.safetensors.index.json")))
	f, err := os.Create(filepath.Join(weights, "model.safetensors"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1234567890))
	require.NoError(t, f.Close())
	out, stderr, code = run(t, "", "catalog", "add", "my-org/house-model", "--model-dir", weights)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "weightBytes: 1234567890\n")
	require.Contains(t, out, fmt.Sprintf("source: config.json (sha256:%s), model.safetensors (1234567890 bytes) of the directory %s\n", sum(qwenConfig(t)), weights))
}

func unindent(row string) string {
	var b strings.Builder
	for line := range strings.Lines(row) {
		b.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "  - "), "    "))
	}
	return b.String()
}

func requireFile(t *testing.T, file, want string) {
	t.Helper()
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, want, string(got))
}

func umask(t *testing.T) os.FileMode {
	t.Helper()
	f := filepath.Join(t.TempDir(), "probe")
	require.NoError(t, os.WriteFile(f, nil, 0o777))
	info, err := os.Stat(f)
	require.NoError(t, err)
	return 0o777 &^ info.Mode().Perm()
}

// TestCatalogAddRefuses: a mistake in the call is a usage error; a file
// catalog add cannot edit, or that would not render, is left as it was,
// each with why.
func TestCatalogAddRefuses(t *testing.T) {
	dir := t.TempDir()
	weights := filepath.Join(dir, "weights")
	writeFile(t, filepath.Join(weights, "config.json"), string(qwenConfig(t)))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"my-org/m"}, "airunway-render catalog add: give exactly one of `--model-dir DIR` (a local copy of the model) and `--from-hub`\nUsage: airunway-render catalog add ID (--model-dir DIR | --from-hub [--revision REV] [--token-file FILE]) (-f FILE | -o yaml|json)\nRun 'airunway-render catalog add --help' for examples and every flag.\n"},
		{[]string{"my-org/m", "--model-dir", weights, "--from-hub"}, "give exactly one of `--model-dir DIR`"},
		{[]string{"--model-dir", weights}, "takes exactly one argument, the model's id (its spec.model.id), got 0"},
		{[]string{"my-org/m", "--model-dir", weights, "--revision", "v1"}, "`--revision`, `--token-file` and `--timeout` are for `--from-hub`"},
		{[]string{"my-org/m", "--model-dir", weights, "-f", "-"}, "`-f` names the ModelCatalog file to edit in place and cannot be `-`"},
		{[]string{"my-org/m", "--model-dir", weights, "-f", "c.yaml", "-o", "json"}, "`-o` prints the row instead of writing it to `-f`: use one of them"},
		{[]string{"my-org/m", "--model-dir", weights, "-f", "catalog.txt"}, "`-f` must name a .yaml or .yml file (render reads no other from a directory), got \"catalog.txt\""},
		{[]string{"my-org/m", "--model-dir", weights, "-o", "table"}, "`-o` must be \"yaml\" or \"json\", got \"table\""},
		{[]string{"my-org/m", "--from-hub", "--timeout", "0s"}, "`--timeout` must be positive, got 0s"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, stderr, code := run(t, "", append([]string{"catalog", "add"}, tc.args...)...)
			require.Equal(t, 1, code)
			require.Empty(t, out)
			require.Contains(t, stderr, tc.want)
		})
	}

	for _, tc := range []struct {
		name, content, id string
		config            string // replaces config.json's content when set
		want              string
	}{
		{name: "no ModelCatalog", content: goodMD, want: "holds no ModelCatalog (ModelDeployment \"qwen\"): name a ModelCatalog file, or a file that does not exist yet for catalog add to create"},
		{name: "two ModelCatalogs", content: "apiVersion: airunway.ai/v1alpha1\nkind: ModelCatalog\nmetadata: {name: a}\n---\napiVersion: airunway.ai/v1alpha1\nkind: ModelCatalog\nmetadata: {name: b}\n",
			want: "holds 2 ModelCatalogs (\"a\", \"b\") and none has a row of my-org/m: keep one ModelCatalog per file for catalog add, or add the row to one of them by hand"},
		{name: "an invalid row beside", content: "apiVersion: airunway.ai/v1alpha1\nkind: ModelCatalog\nmetadata: {name: a}\nspec:\n  models:\n  - {id: x/y, params: 1, dtype: bf17}\n",
			want: `[error] airunway.ai/v1alpha1/ModelCatalog/a spec.models[0].dtype: must be one of "bfloat16", "float16", "float32", "bf16", "fp16", "fp32", "float8", "fp8", "int8", "int4", "fp4", "nvfp4", got "bf17" (file CATALOG, line 6)`},
		{name: "an unserved version", content: "apiVersion: airunway.ai/v1alpha2\nkind: ModelCatalog\nmetadata: {name: a}\n",
			want: `[error] airunway.ai/v1alpha2/ModelCatalog/a apiVersion: "airunway.ai/v1alpha2" is not supported: ModelCatalog must use apiVersion "airunway.ai/v1alpha1" (file CATALOG, line 1)`},
		{name: "facts the renderer refuses", content: "apiVersion: airunway.ai/v1alpha1\nkind: ModelCatalog\nmetadata: {name: a}\n", config: strings.Replace(string(qwenConfig(t)), `"bfloat16"`, `"float8_e4m3fn"`, 1),
			want: "[error] the facts read for my-org/m cannot be a ModelCatalog row: `dtype` must be one of \"bfloat16\", \"float16\", \"float32\", \"bf16\", \"fp16\", \"fp32\", \"float8\", \"fp8\", \"int8\", \"int4\", \"fp4\", \"nvfp4\", got \"float8_e4m3fn\"\nairunway-render catalog add: nothing was written\n"},
		{name: "no config.json", content: "apiVersion: airunway.ai/v1alpha1\nkind: ModelCatalog\nmetadata: {name: a}\n", config: "-",
			want: "[error] --model-dir WEIGHTS: holds no config.json; name the directory of the model's files (config.json, and model.safetensors.index.json when the weights are sharded)\nairunway-render catalog add: nothing was written\n"},
		{name: "rows that are no list", content: "apiVersion: airunway.ai/v1alpha1\nkind: ModelCatalog\nmetadata: {name: a}\nspec:\n  models: {id: x/y}\n",
			want: "ModelCatalog \"a\": spec.models must be a list of rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			weights := filepath.Join(dir, "weights")
			switch tc.config {
			case "":
				writeFile(t, filepath.Join(weights, "config.json"), string(qwenConfig(t)))
			case "-":
				require.NoError(t, os.MkdirAll(weights, 0o755))
			default:
				writeFile(t, filepath.Join(weights, "config.json"), tc.config)
			}
			file := filepath.Join(dir, "catalog.yaml")
			writeFile(t, file, tc.content)
			id := tc.id
			if id == "" {
				id = "my-org/m"
			}
			out, stderr, code := run(t, "", "catalog", "add", id, "--model-dir", weights, "-f", file)
			require.Equal(t, 1, code, stderr)
			require.Empty(t, out)
			require.Contains(t, stderr, strings.NewReplacer("CATALOG", file, "WEIGHTS", weights).Replace(tc.want))
			requireFile(t, file, tc.content)
		})
	}

	// A file to create in a directory that does not exist.
	out, stderr, code := run(t, "", "catalog", "add", "my-org/m", "--model-dir", weights, "-f", filepath.Join(dir, "nowhere", "catalog.yaml"))
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, stderr, "cannot create: its directory "+filepath.Join(dir, "nowhere")+" does not exist; create it first")
}

// TestCatalogReadEverywhere: render, plan, preview, build (kustomize with
// the renderer as its function), the KRM function and plan --fleet all
// read a ModelCatalog among their inputs: its 70B facts keep
// my-org/house-model off one L4, where without it the fit is not checked;
// --model-dir wins over it.
func TestCatalogReadEverywhere(t *testing.T) {
	dir, weights, caps, model := modelDirFixture(t, "Qwen--Qwen3-0.6B_config.json", "")
	models := filepath.Join(dir, "models")
	require.NoError(t, os.Mkdir(models, 0o755))
	require.NoError(t, os.Rename(model, filepath.Join(models, "md.yaml")))
	catalog := filepath.Join(models, "catalog.yaml")
	writeFile(t, catalog, houseCatalog70B)
	facts := "model facts from the ModelCatalog house-models (" + catalog + "): a hand-written guess"
	const doesNotFit = `my-org/house-model does not fit 1 GPU of pool "l4"`

	_, stderr, code := run(t, "", "render", models, "--capabilities", caps)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, doesNotFit)
	require.Contains(t, stderr, facts)
	out, stderr, code := run(t, "", "render", models, "--capabilities", caps, "--model-dir", "my-org/house-model="+weights)
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, out, "ModelCatalog", "local configuration is not for a cluster")

	_, stderr, code = run(t, "", "plan", "-f", models, "--capabilities", caps)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, facts)
	_, stderr, code = run(t, "", "plan", "-f", models, "--capabilities", caps, "--model-dir", "my-org/house-model="+weights)
	require.Equal(t, 0, code, stderr)

	_, stderr, code = run(t, "", "preview", "--from", caps, "--to", caps, "-f", models)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, facts)

	fleet := filepath.Join(dir, "fleet")
	writeFile(t, filepath.Join(fleet, "l4only.yaml"), l4OnlyCaps(""))
	out, stderr, code = run(t, "", "plan", "--fleet", fleet, models)
	require.Equal(t, exitShort, code, stderr)
	require.Contains(t, out, "inference/m fits no cluster")
	require.Contains(t, out, facts)

	// The KRM function, with the catalog among the items.
	md, err := os.ReadFile(filepath.Join(models, "md.yaml"))
	require.NoError(t, err)
	rl := resourceList(l4OnlyCaps(""), string(md), houseCatalog70B)
	out, _, code = run(t, rl)
	require.Equal(t, 1, code)
	require.Contains(t, out, doesNotFit)
	require.Contains(t, out, "model facts from the ModelCatalog house-models: a hand-written guess")

	// build: a kustomization lists the catalog; kustomize passes it to the
	// renderer (this test binary) and leaves it out of the output.
	writeFile(t, filepath.Join(models, "kustomization.yaml"), "resources: [md.yaml, catalog.yaml]\n")
	cluster := filepath.Join(dir, "cluster")
	writeFile(t, filepath.Join(cluster, "capabilities.yaml"), l4OnlyCaps(""))
	writeFile(t, filepath.Join(cluster, "fn.yaml"), renderDeclaration)
	writeFile(t, filepath.Join(cluster, "kustomization.yaml"), "resources: [../models, capabilities.yaml]\ntransformers: [fn.yaml]\n")
	t.Setenv(asFunction, "1")
	out, stderr, code = run(t, "", "build", cluster, "--root", dir)
	require.Equal(t, 1, code, stderr) // the function's own words go to the process's stderr
	require.Empty(t, out)
	require.Contains(t, stderr, "couldn't execute function")
	writeFile(t, catalog, strings.Replace(houseCatalog70B, "params: 70000000000", "params: 600000000", 1))
	out, stderr, code = run(t, "", "build", cluster, "--root", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "kind: RayService")
	require.NotContains(t, out, "ModelCatalog")
}

const houseCatalog70B = `apiVersion: airunway.ai/v1alpha1
kind: ModelCatalog
metadata:
  name: house-models
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  models:
  - id: my-org/house-model
    params: 70000000000
    dtype: bfloat16
    source: a hand-written guess
`

// hubFixture is a Hugging Face Hub on 127.0.0.1 with a few models, and a
// CDN on another port (another host) that must never be asked: catalog
// add follows no redirect there.
type hubFixture struct {
	hub, cdn *httptest.Server
	cdnHits  atomic.Int32
}

const hubCommit = "0123456789abcdef0123456789abcdef01234567"

func newHubFixture(t *testing.T) *hubFixture {
	t.Helper()
	f := &hubFixture{}
	f.cdn = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.cdnHits.Add(1)
		http.Error(w, "the CDN must not be asked", http.StatusTeapot)
	}))
	t.Cleanup(f.cdn.Close)
	cfg := qwenConfig(t)
	big := strings.Repeat(" ", 9<<20) + "{}"
	f.hub = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		auth := r.Header.Get("Authorization")
		switch {
		case p == "/api/models/my-org/public" || p == "/api/models/my-org/single" || p == "/api/models/my-org/huge" || p == "/api/models/my-org/chunked" || p == "/api/models/my-org/elsewhere":
			fmt.Fprint(w, `{"id": "x", "gated": false, "siblings": []}`)
		case p == "/api/models/my-org/slow":
			<-r.Context().Done()
		case p == "/api/models/my-org/gated":
			fmt.Fprint(w, `{"id": "x", "gated": "manual"}`)
		case strings.HasPrefix(p, "/my-org/gated/") && auth == "":
			w.Header().Set("X-Error-Message", "Access to model my-org/gated is restricted. You must have access to it and be authenticated to access it. Please log in.")
			http.Error(w, "", http.StatusUnauthorized)
		case strings.HasPrefix(p, "/my-org/gated/") && auth != "Bearer hf_good":
			http.Error(w, "", http.StatusForbidden)
		case p == "/my-org/public/resolve/main/config.json" || p == "/my-org/gated/resolve/main/config.json":
			// The Hub's own cache, on its own host.
			http.Redirect(w, r, "/api/resolve-cache/models"+strings.TrimSuffix(p, "/resolve/main/config.json")+"/"+hubCommit+"/config.json", http.StatusTemporaryRedirect)
		case strings.HasPrefix(p, "/api/resolve-cache/models/") && strings.HasSuffix(p, "/config.json"):
			w.Header().Set("X-Repo-Commit", hubCommit)
			_, _ = w.Write(cfg)
		case p == "/my-org/public/resolve/main/model.safetensors.index.json" || p == "/my-org/gated/resolve/main/model.safetensors.index.json":
			fmt.Fprint(w, qwenIndex)
		case p == "/my-org/single/resolve/v1.0/config.json":
			_, _ = w.Write(cfg)
		case p == "/my-org/single/resolve/v1.0/hf_quant_config.json":
			fmt.Fprint(w, modelOptFP8)
		case p == "/my-org/single/resolve/v1.0/model.safetensors" && r.Method == http.MethodHead:
			w.Header().Set("X-Linked-Size", "1234567890")
			w.Header().Set("Location", f.cdn.URL+"/weights")
			w.WriteHeader(http.StatusFound)
		case p == "/my-org/huge/resolve/main/config.json":
			w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			fmt.Fprint(w, big)
		case p == "/my-org/chunked/resolve/main/config.json":
			w.(http.Flusher).Flush() // no Content-Length: the body is cut by reading
			fmt.Fprint(w, big)
		case p == "/my-org/elsewhere/resolve/main/config.json":
			http.Redirect(w, r, f.cdn.URL+"/config.json", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.hub.Close)
	t.Setenv("HF_ENDPOINT", f.hub.URL)
	t.Setenv("HF_TOKEN", "")
	return f
}

// modelOptFP8 is the shape of NVIDIA ModelOpt's hf_quant_config.json for
// an FP8 checkpoint.
const modelOptFP8 = `{"producer": {"name": "modelopt", "version": "0.29.0"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": null, "exclude_modules": ["lm_head"]}}`

// TestCatalogAddModelOpt: a ModelOpt checkpoint's precision, in its
// hf_quant_config.json, reaches the row and its source; a checkpoint
// whose config.json names its quantization keeps that one, as in vLLM.
func TestCatalogAddModelOpt(t *testing.T) {
	weights := t.TempDir()
	writeFile(t, filepath.Join(weights, "config.json"), string(qwenConfig(t)))
	writeFile(t, filepath.Join(weights, "model.safetensors.index.json"), qwenIndex)
	writeFile(t, filepath.Join(weights, "hf_quant_config.json"), modelOptFP8)
	out, stderr, code := run(t, "", "catalog", "add", "my-org/fp8", "--model-dir", weights, "-o", "yaml")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "\nquantization:\n  method: modelopt\n  bits: 8\n  float: true\n")
	require.Contains(t, out, fmt.Sprintf(", hf_quant_config.json (sha256:%s) of the directory %s\n", sum([]byte(modelOptFP8)), weights))

	var cfg map[string]any
	require.NoError(t, json.Unmarshal(qwenConfig(t), &cfg))
	cfg["quantization_config"] = map[string]any{"quant_method": "fp8", "weight_block_size": []int{128, 128}}
	withOwn, err := json.Marshal(cfg)
	require.NoError(t, err)
	writeFile(t, filepath.Join(weights, "config.json"), string(withOwn))
	out, stderr, code = run(t, "", "catalog", "add", "my-org/fp8", "--model-dir", weights, "-o", "yaml")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "\nquantization:\n  method: fp8\n")
	require.NotContains(t, out, "hf_quant_config.json", "not read: config.json names the quantization")
}

// TestCatalogAddFromHub: --from-hub reads the two files, the gated flag
// and the commit from the Hub (on 127.0.0.1 here), with a token only when
// given, the size of a single checkpoint from its HEAD response, and
// refuses an oversized answer and a redirect to another host, asking the
// CDN nothing.
func TestCatalogAddFromHub(t *testing.T) {
	f := newHubFixture(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "catalog.yaml")

	out, stderr, code := run(t, "", "catalog", "add", "my-org/public", "--from-hub", "-f", file)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, file+": created; ModelCatalog catalog: added the row of my-org/public (spec.models[0])\n", out)
	source := fmt.Sprintf("    gated: false\n    source: 'config.json (sha256:%s), model.safetensors.index.json (sha256:%s) of my-org/public at revision main (commit %s) on %s; gated: false'\n",
		sum(qwenConfig(t)), sum([]byte(qwenIndex)), hubCommit, f.hub.URL)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(got), qwenRow("my-org/public", source)), "%s", got)
	_, stderr, code = run(t, "", "catalog", "add", "my-org/public", "--from-hub", "-f", file)
	require.Equal(t, 0, code, stderr)
	requireFile(t, file, string(got))

	// A gated model: 401 without a token, 403 with one that has no access,
	// the row with one that has (from a file, or HF_TOKEN).
	_, stderr, code = run(t, "", "catalog", "add", "my-org/gated", "--from-hub", "-f", file)
	require.Equal(t, 1, code)
	require.Equal(t, fmt.Sprintf("[error] config.json of my-org/gated: 127.0.0.1:%s answered 401 Unauthorized without a token (the Hub says: \"Access to model my-org/gated is restricted. You must have access to it and be authenticated to access it. Please log in.\"): the model is gated or private; accept its conditions at %s/my-org/gated and give a token with --token-file FILE or HF_TOKEN\nairunway-render catalog add: nothing was written\n", f.hub.URL[strings.LastIndex(f.hub.URL, ":")+1:], f.hub.URL), stderr)
	t.Setenv("HF_TOKEN", "hf_other")
	_, stderr, code = run(t, "", "catalog", "add", "my-org/gated", "--from-hub", "-f", file)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "answered 403 Forbidden: the token's user has no access; accept the model's conditions at "+f.hub.URL+"/my-org/gated, or use a token that may read it")
	tokenFile := filepath.Join(dir, "token")
	writeFile(t, tokenFile, "hf_good\n")
	out, stderr, code = run(t, "", "catalog", "add", "my-org/gated", "--from-hub", "--token-file", tokenFile, "-o", "yaml")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "gated: true\n")
	require.Contains(t, out, "; gated: true'\n")
	t.Setenv("HF_TOKEN", "hf_good")
	out2, stderr, code := run(t, "", "catalog", "add", "my-org/gated", "--from-hub")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, out, out2)

	// One checkpoint, no index: its size from the HEAD answer's
	// X-Linked-Size, on the redirect the CDN is never asked about; a
	// ModelOpt checkpoint's precision from its hf_quant_config.json.
	out, stderr, code = run(t, "", "catalog", "add", "my-org/single", "--from-hub", "--revision", "v1.0")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "weightBytes: 1234567890\n")
	require.Contains(t, out, "\nquantization:\n  method: modelopt\n  bits: 8\n  float: true\n")
	require.Contains(t, out, fmt.Sprintf(", model.safetensors (1234567890 bytes), hf_quant_config.json (sha256:%s) of my-org/single at revision v1.0 on %s; gated: false'\n", sum([]byte(modelOptFP8)), f.hub.URL))

	// Refused: an answer past 8 MiB (said, or read), a redirect to another
	// host, a model the Hub does not have.
	for _, tc := range []struct{ id, want string }{
		{"my-org/huge", "config.json from 127.0.0.1:PORT is 9437186 bytes, more than 8 MiB: refused (not a model's configuration)"},
		{"my-org/chunked", "config.json from 127.0.0.1:PORT is 8388609 bytes, more than 8 MiB: refused (not a model's configuration)"},
		{"my-org/elsewhere", "config.json of my-org/elsewhere: redirected to another host (" + strings.TrimPrefix(f.cdn.URL, "http://") + "): refused; catalog add reads from the Hub's endpoint only"},
		{"my-org/missing", "the Hub (127.0.0.1:PORT) has no model my-org/missing (404 Not Found); check the id, or give a token if it is private"},
	} {
		_, stderr, code = run(t, "", "catalog", "add", tc.id, "--from-hub", "-f", file)
		require.Equal(t, 1, code, tc.id)
		require.Contains(t, stderr, strings.ReplaceAll(tc.want, "PORT", f.hub.URL[strings.LastIndex(f.hub.URL, ":")+1:]), tc.id)
	}
	_, stderr, code = run(t, "", "catalog", "add", "my-org/slow", "--from-hub", "--timeout", "300ms", "-f", file)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "[error] 127.0.0.1:"+f.hub.URL[strings.LastIndex(f.hub.URL, ":")+1:]+": no answer within --timeout 300ms\n")
	requireFile(t, file, string(got))
	require.Zero(t, f.cdnHits.Load(), "the CDN was asked")
}

// TestCatalogAddHubSettings: the endpoint must be https (http only on a
// loopback address), the id one the Hub could have, the token a token.
func TestCatalogAddHubSettings(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		endpoint, token, id string
		args                []string
		want                string
	}{
		{endpoint: "http://hub.example.com", id: "a/b", want: `HF_ENDPOINT "http://hub.example.com": the token and the model's facts would travel unencrypted; it must be an https:// URL (http:// only on a loopback address), such as https://huggingface.co`},
		{endpoint: "https://user:pw@hub.example.com", id: "a/b", want: "credentials, a query or a fragment are not allowed"},
		{endpoint: "ftp://hub.example.com", id: "a/b", want: "the token and the model's facts would travel unencrypted"},
		{id: "a/../b", want: `"a/../b" is not a Hugging Face model id: owner/name, of letters, digits, '.', '_' and '-' (at most 96 each)`},
		{id: "a/b/c", want: `"a/b/c" is not a Hugging Face model id`},
		{id: "a/b", token: "hf_x y", want: "HF_TOKEN: a token is one line of printable ASCII without spaces"},
		{id: "a/b", args: []string{"--revision", ".."}, want: "`--revision` must name a branch, tag or commit, got \"..\""},
	} {
		t.Run(tc.endpoint+tc.id+tc.token, func(t *testing.T) {
			t.Setenv("HF_ENDPOINT", tc.endpoint)
			t.Setenv("HF_TOKEN", tc.token)
			_, stderr, code := run(t, "", append([]string{"catalog", "add", tc.id, "--from-hub", "-f", filepath.Join(dir, "c.yaml")}, tc.args...)...)
			require.Equal(t, 1, code)
			require.Contains(t, stderr, tc.want)
			_, err := os.Stat(filepath.Join(dir, "c.yaml"))
			require.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}
