package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/hack/internal/kaitosrc"
	"github.com/airunway-render/airunway-render/hack/internal/kaitosrc/kaitotest"
)

// A Go preset file in KAITO's shapes: a name built from constants, a
// size's alternative commented out, DisableTensorParallelism inside
// RuntimeParam, one-line methods.
const llamaGo = `package llama

const (
	PresetLlama  = "llama-8b"
	PresetFalcon = PresetTiny + "-falcon"
	PresetTiny   = "tiny"
)

func init() {
	plugin.KaitoModelRegister.Register(&plugin.Registration{
		Name:     PresetLlama,
		Instance: &llamaA,
	})
	plugin.KaitoModelRegister.Register(&plugin.Registration{Name: PresetFalcon, Instance: &falconB})
}

var llamaA llama8b

type llama8b struct{}

func (*llama8b) GetInferenceParameters() *model.PresetParam {
	return &model.PresetParam{
		Metadata: metadata.MustGet(PresetLlama),
		// TotalSafeTensorFileSize: "16Gi",
		TotalSafeTensorFileSize: "14.96Gi",
		BytesPerToken:           131072,
		RuntimeParam:            model.RuntimeParam{VLLM: model.VLLMParam{ModelName: PresetLlama}},
	}
}
func (*llama8b) SupportDistributedInference() bool {
	return true
}

var falconB falcon

type falcon struct{}

func (m *falcon) GetInferenceParameters() *model.PresetParam {
	return &model.PresetParam{
		TotalSafeTensorFileSize: "13.44Gi",
		BytesPerToken:           8192,
		RuntimeParam: model.RuntimeParam{
			DisableTensorParallelism: true,
		},
	}
}
func (falcon) SupportDistributedInference() bool { return false }
`

const models = `models:
- name: base
  tag: 0.1.1
- name: llama-8b
  version: https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/commit/0e9e39f249a16976918f6564b8830bc894c89659
- name: tiny-falcon
  version: https://huggingface.co/tiiuae/falcon-7b/commit/898df1396f35e447d5fe44e0a3ccaaaa69f30d36
`

const vllmGo = `package models

var (
	builtinVLLMModels = map[string]string{
		"meta-llama/llama-3.1-8b-instruct": "llama-8b",
		"tiiuae/falcon-7b":                 "tiny-falcon",
	}
	legacyBuiltinToCatalog = map[string]string{
		"phi-4": "microsoft/phi-4",
	}
)

type vLLMCompatibleModel struct{}

func (*vLLMCompatibleModel) SupportDistributedInference() bool {
	return true
}
`

const catalog = `models:
- name: microsoft/phi-4
  modelFileSize: 27.31Gi
  hiddenSize: 5120
  numHiddenLayers: 40
  numAttentionHeads: 40
  numKeyValueHeads: 10
- name: deepseek-ai/DeepSeek-V3
  modelFileSize: 641.30Gi
  numHiddenLayers: 61
  numAttentionHeads: 128
  kvLoraRank: 512
  qkRopeHeadDim: 64
- name: x/no-kv-heads
  modelFileSize: 1Gi
  hiddenSize: 2048
  numHiddenLayers: 2
  numAttentionHeads: 16
  headDim: 256
`

// TestDerive derives from a small KAITO-like repository: only v0.8.0 to
// before v0.13.0, no pre-releases; Go presets with their repositories and
// builtin ids, the catalog with KAITO's bytes per token and the short
// names sent to it; identical tags grouped; each figure's file, line and
// checksum.
func TestDerive(t *testing.T) {
	r := kaitotest.New(t)
	r.Write(kaitosrc.ModelList, models)
	r.Write("presets/workspace/models/llama/model.go", llamaGo)
	r.Write("presets/workspace/models/llama/README.md", "not a preset")
	r.Commit("v0.7.0", "v0.8.0", "v0.8.1", "v0.9.0-rc.0")
	r.Write(kaitosrc.VLLMModel, strings.Replace(vllmGo, `"phi-4": "microsoft/phi-4",`, "", 1))
	r.Commit("v0.9.0")
	r.Write(kaitosrc.VLLMModel, vllmGo)
	r.Write(kaitosrc.Catalog, catalog)
	r.Commit("v0.10.0")
	require.NoError(t, os.RemoveAll(filepath.Join(r.Dir, "presets/workspace/models/llama")))
	r.Write(kaitosrc.VLLMModel, "package models\n\n"+vllmGo[strings.Index(vllmGo, "type vLLMCompatibleModel"):])
	r.Write(kaitosrc.PluginGo, "package plugin\n\nvar LegacyBuiltinToCatalog = map[string]string{\n\t\"phi-4\": \"microsoft/phi-4\",\n\t\"deepseek-v3\": \"deepseek-ai/deepseek-v3\",\n}\n")
	r.Commit("v0.11.0", "v0.13.0")

	s, err := derive(kaitosrc.Repo(r.Dir))
	require.NoError(t, err)
	var tags [][]string
	for _, rel := range s.Releases {
		var group []string
		for _, tag := range rel.Tags {
			group = append(group, tag.Tag)
			require.Len(t, tag.Commit, 40)
		}
		tags = append(tags, group)
	}
	require.Equal(t, [][]string{{"v0.8.0", "v0.8.1"}, {"v0.9.0"}, {"v0.10.0"}, {"v0.11.0"}}, tags)

	v08 := s.Releases[0]
	require.Equal(t, []File{{kaitosrc.ModelList, kaitosrc.SHA256([]byte(models))}}, v08.Files)
	require.Empty(t, v08.Catalog)
	llama := Preset{Name: "llama-8b", HuggingFace: "meta-llama/Llama-3.1-8B-Instruct", Size: "14.96Gi", SizeBytes: 16063177688, BytesPerToken: 131072,
		DistributedInference: true, File: "presets/workspace/models/llama/model.go", Line: 25, SHA256: kaitosrc.SHA256([]byte(llamaGo))}
	falcon := Preset{Name: "tiny-falcon", HuggingFace: "tiiuae/falcon-7b", Size: "13.44Gi", SizeBytes: 14431090115, BytesPerToken: 8192,
		DisableTensorParallelism: true, File: "presets/workspace/models/llama/model.go", Line: 40, SHA256: kaitosrc.SHA256([]byte(llamaGo))}
	require.Equal(t, []Preset{llama, falcon}, v08.Presets)

	llama.BuiltinID, falcon.BuiltinID = "meta-llama/llama-3.1-8b-instruct", "tiiuae/falcon-7b"
	require.Equal(t, []Preset{llama, falcon}, s.Releases[1].Presets)

	v010 := s.Releases[2]
	require.Equal(t, []Preset{llama, falcon}, v010.Presets)
	require.Len(t, v010.Catalog, 3)
	require.Equal(t, Preset{HuggingFace: "deepseek-ai/DeepSeek-V3", Size: "641.30Gi", SizeBytes: 688590631732, BytesPerToken: (512 + 64) * 61 * 2,
		DistributedInference: true, File: kaitosrc.Catalog, Line: 8, SHA256: kaitosrc.SHA256([]byte(catalog))}, v010.Catalog[0], "latent attention")
	require.Equal(t, "phi-4", v010.Catalog[1].Name, "legacyBuiltinToCatalog")
	require.Equal(t, int64(2*10*128*40*2), v010.Catalog[1].BytesPerToken, "head size hidden / heads")
	require.Equal(t, int64(2*16*256*2*2), v010.Catalog[2].BytesPerToken, "KV heads the attention heads")

	v011 := s.Releases[3]
	require.Empty(t, v011.Presets)
	require.Equal(t, "deepseek-v3", v011.Catalog[0].Name, "LegacyBuiltinToCatalog, case-insensitively")
	require.Equal(t, []string{kaitosrc.VLLMModel, kaitosrc.PluginGo, kaitosrc.Catalog}, []string{v011.Files[0].Path, v011.Files[1].Path, v011.Files[2].Path})

	// What the rules do not cover stops the derivation.
	r.Write(kaitosrc.PluginGo, "package plugin\n\nvar LegacyBuiltinToCatalog = map[string]string{\n\t\"phi-5\": \"microsoft/phi-5\",\n}\n")
	r.Commit("v0.12.0")
	_, err = derive(kaitosrc.Repo(r.Dir))
	require.ErrorContains(t, err, `v0.12.0: pkg/utils/plugin/plugin.go redirects "phi-5" to "microsoft/phi-5", which is not in presets/workspace/models/model_catalog.yaml`)
}

// A preset whose figures are computed, not written, is refused.
func TestGoPresetsRefuseWhatTheyDoNotCover(t *testing.T) {
	for _, c := range []struct{ from, to, err string }{
		{`TotalSafeTensorFileSize: "14.96Gi",`, `TotalSafeTensorFileSize: size(),`, "TotalSafeTensorFileSize: not a string literal or constant"},
		{`BytesPerToken:           131072,`, `BytesPerToken:           2 * 65536,`, "BytesPerToken: not an integer literal or constant"},
		{`BytesPerToken:           131072,`, ``, "no TotalSafeTensorFileSize or no positive BytesPerToken"},
		{"func (*llama8b) SupportDistributedInference() bool {\n\treturn true", "func (*llama8b) SupportDistributedInference() bool {\n\treturn enabled",
			`preset "llama-8b": llama8b.SupportDistributedInference: not the literal true or false`},
		{"\treturn &model.PresetParam{\n\t\tMetadata", "\tp := 1\n\t_ = p\n\treturn &model.PresetParam{\n\t\tMetadata", "not a single return statement"},
		{"Instance: &falconB", "Instance: falconB", `preset "tiny-falcon": Instance is not &variable`},
	} {
		require.Contains(t, llamaGo, c.from)
		_, err := kaitosrc.GoPresets("model.go", []byte(strings.Replace(llamaGo, c.from, c.to, 1)))
		require.ErrorContains(t, err, c.err)
	}
}
