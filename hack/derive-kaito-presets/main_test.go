package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/hack/internal/kaitosrc"
)

// kaitoRepo is a small KAITO-like repository in a temporary directory.
type kaitoRepo struct {
	t   *testing.T
	dir string
}

func newKAITORepo(t *testing.T) *kaitoRepo {
	r := &kaitoRepo{t, t.TempDir()}
	r.git("init", "-q")
	return r
}

func (r *kaitoRepo) git(args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v: %s", args, out)
}

func (r *kaitoRepo) write(path, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, path)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(content), 0o644))
}

func (r *kaitoRepo) commit(tags ...string) {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-qm", "c")
	for _, tag := range tags {
		r.git("tag", tag)
	}
}

// registering is a model.go that registers the names.
func registering(names ...string) string {
	src := "package m\n\nconst base = \"zeta\"\n\nfunc init() {\n"
	for _, n := range names {
		src += "\tplugin.KaitoModelRegister.Register(&plugin.Registration{Name: " + n + ", Instance: &v})\n"
	}
	return src + "}\n"
}

// TestDerive builds a small KAITO-like repository with release tags and
// derives from it: only releases 0.6.0 to before 0.11.0, no pre-releases,
// Hugging Face presets only (not the base image) that a Go file
// registers, sorted, with whether their weights are downloaded, each tag's
// commit and the list's checksum.
func TestDerive(t *testing.T) {
	r := newKAITORepo(t)
	r.write(modelList, "models:\n- name: base\n  tag: 0.0.1\n- name: phi-4\n  version: https://huggingface.co/microsoft/phi-4/commit/187ef0342fff0eb3333be9f00389385e95ef0b61\n")
	r.write("presets/workspace/models/phi4/model.go", registering(`"phi-4"`))
	r.commit("v0.5.9", "v0.6.0", "v0.8.0-rc.0")
	r.write(modelList, "models:\n- name: zeta-1b\n  version: https://huggingface.co/z/Zeta-1B/commit/0123456789abcdef\n  downloadAtRuntime: true\n  downloadAuthRequired: true\n"+
		"- name: phi-4\n  version: https://huggingface.co/microsoft/phi-4/commit/187ef0342fff0eb3333be9f00389385e95ef0b61\n- name: local-only\n  version: none\n"+
		"- name: phi-2\n  version: https://huggingface.co/microsoft/phi-2/commit/ef382358ec9e382308935a992d908de099b64c23\n  deprecated: true\n")
	r.write("presets/workspace/models/zeta/model.go", registering(`base + "-1b"`))
	r.commit("v0.8.1")
	r.write(kaitosrc.VLLMModel, "package models\n\nvar builtinVLLMModels = map[string]string{\n\t\"z/zeta-1b\": \"zeta-1b\",\n\t\"microsoft/phi-4\": \"phi-4\",\n}\n")
	r.commit("v0.9.0", "v0.11.0")

	p, err := derive(kaitosrc.Repo(r.dir))
	require.NoError(t, err)
	got, err := json.Marshal(p.Releases)
	require.NoError(t, err)
	var releases []map[string]any
	require.NoError(t, json.Unmarshal(got, &releases))
	require.Len(t, releases, 3)
	require.Equal(t, "0.6.0", releases[0]["release"])
	require.Equal(t, "0.8.1", releases[1]["release"])
	require.Equal(t, "0.9.0", releases[2]["release"])
	phi4 := map[string]any{"name": "phi-4", "huggingFace": "microsoft/phi-4", "downloadAtRuntime": false, "downloadAuthRequired": false}
	require.Equal(t, []any{phi4}, releases[0]["presets"])
	require.Equal(t, []any{phi4, map[string]any{"name": "zeta-1b", "huggingFace": "z/Zeta-1B", "downloadAtRuntime": true, "downloadAuthRequired": true}}, releases[1]["presets"],
		"phi-2 is listed, but no Go file registers it")
	require.Len(t, releases[0]["commit"], 40)
	require.Len(t, releases[0]["sha256"], 64)

	// builtinVLLMModels must agree with the list, or the derivation stops.
	r.write(kaitosrc.VLLMModel, "package models\n\nvar builtinVLLMModels = map[string]string{\n\t\"z/zeta-1b-other\": \"zeta-1b\",\n\t\"microsoft/phi-4\": \"phi-4\",\n}\n")
	r.commit("v0.10.0")
	_, err = derive(kaitosrc.Repo(r.dir))
	require.ErrorContains(t, err, `v0.10.0: presets/workspace/models/vllm_model.go: builtinVLLMModels maps "z/zeta-1b-other" to "zeta-1b"`)
}
