package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/hack/internal/kaitosrc"
	"github.com/airunway-render/airunway-render/hack/internal/kaitosrc/kaitotest"
)

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
	r := kaitotest.New(t)
	r.Write(modelList, "models:\n- name: base\n  tag: 0.0.1\n- name: phi-4\n  version: https://huggingface.co/microsoft/phi-4/commit/187ef0342fff0eb3333be9f00389385e95ef0b61\n")
	r.Write("presets/workspace/models/phi4/model.go", registering(`"phi-4"`))
	r.Commit("v0.5.9", "v0.6.0", "v0.8.0-rc.0")
	r.Write(modelList, "models:\n- name: zeta-1b\n  version: https://huggingface.co/z/Zeta-1B/commit/0123456789abcdef\n  downloadAtRuntime: true\n  downloadAuthRequired: true\n"+
		"- name: phi-4\n  version: https://huggingface.co/microsoft/phi-4/commit/187ef0342fff0eb3333be9f00389385e95ef0b61\n- name: local-only\n  version: none\n"+
		"- name: phi-2\n  version: https://huggingface.co/microsoft/phi-2/commit/ef382358ec9e382308935a992d908de099b64c23\n  deprecated: true\n")
	r.Write("presets/workspace/models/zeta/model.go", registering(`base + "-1b"`))
	r.Commit("v0.8.1")
	r.Write(kaitosrc.VLLMModel, "package models\n\nvar builtinVLLMModels = map[string]string{\n\t\"z/zeta-1b\": \"zeta-1b\",\n\t\"microsoft/phi-4\": \"phi-4\",\n}\n")
	r.Commit("v0.9.0", "v0.11.0")

	p, err := derive(kaitosrc.Repo(r.Dir))
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
	r.Write(kaitosrc.VLLMModel, "package models\n\nvar builtinVLLMModels = map[string]string{\n\t\"z/zeta-1b-other\": \"zeta-1b\",\n\t\"microsoft/phi-4\": \"phi-4\",\n}\n")
	r.Commit("v0.10.0")
	_, err = derive(kaitosrc.Repo(r.Dir))
	require.ErrorContains(t, err, `v0.10.0: presets/workspace/models/vllm_model.go: builtinVLLMModels maps "z/zeta-1b-other" to "zeta-1b"`)
}
