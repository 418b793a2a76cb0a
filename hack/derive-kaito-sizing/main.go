// Command derive-kaito-sizing derives fit/kaito_presets.json: for every
// KAITO release from v0.8.0 (the first with a Workspace node estimator)
// up to before v0.13.0 (the renderer's supported range), the figures
// KAITO's own node estimator (EstimateNodeCount) reads for each model it
// knows, from KAITO's own files at the release's tag, and how KAITO
// resolves a Workspace's preset name to them. Package fit repeats the
// estimator with these figures (fit/kaito.go).
//
// Where each figure comes from, at each tag:
//
//   - Go presets (v0.8.0 to v0.10.0): every presets/workspace/models/
//     <family>/model.go. A preset is a registration in the file's init
//     (`plugin.KaitoModelRegister.Register(&plugin.Registration{Name: N,
//     Instance: &v})`); its type's GetInferenceParameters returns one
//     `&model.PresetParam{…}` literal, whose TotalSafeTensorFileSize is
//     the size and BytesPerToken the KV cache of one token, and whose
//     RuntimeParam may set DisableTensorParallelism (Falcon 7B);
//     SupportDistributedInference returns true or false. Anything not
//     in these shapes (a value computed, a statement before the return)
//     stops the derivation rather than being guessed
//     (hack/internal/kaitosrc reads them with go/parser).
//   - The Hugging Face repository a Go preset serves: its `version` in
//     presets/workspace/models/supported_models.yaml, a Hugging Face
//     commit URL.
//   - HF ids KAITO maps to a Go preset (v0.9.x, v0.10.0):
//     builtinVLLMModels in presets/workspace/models/vllm_model.go
//     (lower-case id → preset; GetModelByName lower-cases the name first).
//   - The model catalog (v0.10.0 on): presets/workspace/models/
//     model_catalog.yaml. Its modelFileSize is the size; the bytes per
//     token are what KAITO's generator computes from the entry
//     (calculateKVCacheTokenSize, the same in v0.10.0, v0.11.0 and
//     v0.12.0): 2 × KV heads × head size × layers × 2 bytes, the head size
//     hidden / heads when the entry gives none, the KV heads the
//     attention heads when 0; (kvLoraRank + qkRopeHeadDim) × layers × 2
//     for latent attention; every layer as full attention, whatever the
//     architecture. Whether a catalog model supports distributed inference
//     is what vllm_model.go's (*vLLMCompatibleModel)
//     SupportDistributedInference returns.
//   - Short names KAITO sends to the catalog: legacyBuiltinToCatalog in
//     vllm_model.go (v0.10.0: phi-4, phi-4-mini-instruct) or
//     LegacyBuiltinToCatalog in pkg/utils/plugin/plugin.go (v0.11.0 on:
//     every former Go preset but Falcon); a catalog entry carries the short
//     name that reaches it. A short name whose target is not in the
//     catalog stops the derivation.
//   - sizeBytes is the size as KAITO's resource.MustParse(size).Value()
//     reads it: rounded up to whole bytes.
//
// Consecutive tags whose derived figures and source files (by sha256) are
// identical share one entry, which lists each tag with its commit; every
// preset names the file and line it was read from and the file's sha256.
//
// KAITO is not served by the Go module proxy, so the input is a clone of
// https://github.com/kaito-project/kaito (any clone with its tags):
//
//	go run ./hack/derive-kaito-sizing -repo ../kaito          # rewrite
//	go run ./hack/derive-kaito-sizing -repo ../kaito -check   # compare
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/hack/internal/kaitosrc"
)

const output = "fit/kaito_presets.json"

// The releases derived: the node estimator exists from v0.8.0; the
// renderer supports KAITO before 0.13.0.
var first, end = version.MustParseSemantic("0.8.0"), version.MustParseSemantic("0.13.0")

// Sizing is the file's shape (package fit reads it).
type Sizing struct {
	Source   string    `json:"source"`
	Releases []Release `json:"releases"`
}

// Release is what one or more consecutive release tags give the
// estimator.
type Release struct {
	Tags []Tag `json:"tags"`
	// Files are the files read besides the presets' own: the model list,
	// vllm_model.go, plugin.go.
	Files []File `json:"files"`
	// Presets are the Go presets (v0.10.0 and before).
	Presets []Preset `json:"presets,omitempty"`
	// Catalog are the model catalog's entries (v0.10.0 on).
	Catalog []Preset `json:"catalog,omitempty"`
}

// Tag is a release tag and its commit.
type Tag struct {
	Tag    string `json:"tag"`
	Commit string `json:"commit"`
}

// File is a source file and its sha256.
type File struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Preset is what the estimator reads of one model: the type the fit
// reads the file back into, so the two cannot drift apart.
type Preset = fit.KAITOPreset

func main() { kaitosrc.Main("derive-kaito-sizing", output, derive) }

func derive(repo kaitosrc.Repo) (*Sizing, error) {
	versions, err := repo.Releases(first, end)
	if err != nil {
		return nil, err
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("%s has no release tags from v%s to before v%s", repo, first, end)
	}
	s := &Sizing{Source: "github.com/kaito-project/kaito at each release tag from v" + first.String() + " (go run ./hack/derive-kaito-sizing -repo KAITO_CLONE)"}
	var last []byte
	for _, v := range versions {
		tag := "v" + v.String()
		r, err := release(repo, tag)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tag, err)
		}
		commit, err := repo.Commit(tag)
		if err != nil {
			return nil, err
		}
		content, _ := json.Marshal(r)
		if last != nil && bytes.Equal(content, last) {
			prev := &s.Releases[len(s.Releases)-1]
			prev.Tags = append(prev.Tags, Tag{tag, commit})
			continue
		}
		last = content
		r.Tags = []Tag{{tag, commit}}
		s.Releases = append(s.Releases, r)
	}
	return s, nil
}

// release derives one tag (without its Tags).
func release(repo kaitosrc.Repo, tag string) (Release, error) {
	var r Release
	read := func(path string) ([]byte, bool, error) {
		ok, err := repo.Has(tag, path)
		if err != nil || !ok {
			return nil, false, err
		}
		data, err := repo.Show(tag, path)
		if err != nil {
			return nil, false, err
		}
		r.Files = append(r.Files, File{path, kaitosrc.SHA256(data)})
		return data, true, nil
	}

	// Go presets, with the repository each serves.
	files, err := repo.PresetFiles(tag)
	if err != nil {
		return r, err
	}
	if len(files) > 0 {
		list, ok, err := read(kaitosrc.ModelList)
		if err != nil {
			return r, err
		}
		if !ok {
			return r, fmt.Errorf("the Go presets come without %s", kaitosrc.ModelList)
		}
		models, err := kaitosrc.SupportedModels(list)
		if err != nil {
			return r, fmt.Errorf("%s: %w", kaitosrc.ModelList, err)
		}
		hf := map[string]string{}
		for _, m := range models {
			hf[m.Name] = m.HuggingFace
		}
		for _, f := range files {
			src, err := repo.Show(tag, f)
			if err != nil {
				return r, err
			}
			presets, err := kaitosrc.GoPresets(f, src)
			if err != nil {
				return r, err
			}
			for _, p := range presets {
				if hf[p.Name] == "" {
					return r, fmt.Errorf("%s: preset %q has no Hugging Face version in %s", f, p.Name, kaitosrc.ModelList)
				}
				size, err := sizeBytes(p.Size)
				if err != nil {
					return r, fmt.Errorf("%s: preset %q: %w", f, p.Name, err)
				}
				r.Presets = append(r.Presets, Preset{Name: p.Name, HuggingFace: hf[p.Name], Size: p.Size, SizeBytes: size,
					BytesPerToken: p.BytesPerToken, DistributedInference: p.DistributedInference,
					DisableTensorParallelism: p.DisableTensorParallelism, File: f, Line: p.Line, SHA256: kaitosrc.SHA256(src)})
			}
		}
	}
	byName := map[string]*Preset{}
	for i := range r.Presets {
		p := &r.Presets[i]
		if byName[p.Name] != nil {
			return r, fmt.Errorf("preset %q registered twice (%s, %s)", p.Name, byName[p.Name].File, p.File)
		}
		byName[p.Name] = p
	}

	// vllm_model.go: HF ids of the Go presets, the catalog's redirects and
	// whether a catalog model is distributed.
	vllm, hasVLLM, err := read(kaitosrc.VLLMModel)
	if err != nil {
		return r, err
	}
	var shortNames map[string]string
	var shortFrom string
	if hasVLLM {
		builtin, ok, err := kaitosrc.StringMap(kaitosrc.VLLMModel, vllm, "builtinVLLMModels")
		if err != nil {
			return r, err
		}
		if ok {
			for _, id := range sortedKeys(builtin) {
				p := byName[builtin[id]]
				if p == nil {
					return r, fmt.Errorf("%s: builtinVLLMModels maps %q to %q, which is no Go preset", kaitosrc.VLLMModel, id, builtin[id])
				}
				if p.BuiltinID != "" {
					return r, fmt.Errorf("%s: builtinVLLMModels maps both %q and %q to %q", kaitosrc.VLLMModel, p.BuiltinID, id, p.Name)
				}
				if id != strings.ToLower(id) {
					return r, fmt.Errorf("%s: builtinVLLMModels key %q is not lower case, and GetModelByName looks up the lower-cased name", kaitosrc.VLLMModel, id)
				}
				p.BuiltinID = id
			}
		}
		if shortNames, ok, err = kaitosrc.StringMap(kaitosrc.VLLMModel, vllm, "legacyBuiltinToCatalog"); err != nil {
			return r, err
		} else if ok {
			shortFrom = kaitosrc.VLLMModel
		}
	}
	if has, err := repo.Has(tag, kaitosrc.PluginGo); err != nil {
		return r, err
	} else if has {
		src, err := repo.Show(tag, kaitosrc.PluginGo)
		if err != nil {
			return r, err
		}
		m, ok, err := kaitosrc.StringMap(kaitosrc.PluginGo, src, "LegacyBuiltinToCatalog")
		if err != nil {
			return r, err
		}
		if ok {
			if shortFrom != "" {
				return r, fmt.Errorf("short names are redirected to the catalog both in %s and in %s", shortFrom, kaitosrc.PluginGo)
			}
			shortNames, shortFrom = m, kaitosrc.PluginGo
			r.Files = append(r.Files, File{kaitosrc.PluginGo, kaitosrc.SHA256(src)})
		}
	}

	// The model catalog.
	catalog, hasCatalog, err := read(kaitosrc.Catalog)
	if err != nil {
		return r, err
	}
	if hasCatalog {
		if !hasVLLM {
			return r, fmt.Errorf("%s without %s", kaitosrc.Catalog, kaitosrc.VLLMModel)
		}
		distributed, err := kaitosrc.MethodBool(kaitosrc.VLLMModel, vllm, "vLLMCompatibleModel", "SupportDistributedInference")
		if err != nil {
			return r, err
		}
		entries, err := kaitosrc.ReadCatalog(catalog)
		if err != nil {
			return r, fmt.Errorf("%s: %w", kaitosrc.Catalog, err)
		}
		sum := kaitosrc.SHA256(catalog)
		seen := map[string]int{}
		for _, e := range entries {
			lower := strings.ToLower(e.Name)
			if _, dup := seen[lower]; dup {
				return r, fmt.Errorf("%s: %q twice (KAITO takes the first entry whose name matches, case-insensitively)", kaitosrc.Catalog, e.Name)
			}
			size, err := sizeBytes(e.ModelFileSize)
			if err != nil {
				return r, fmt.Errorf("%s: %q: %w", kaitosrc.Catalog, e.Name, err)
			}
			seen[lower] = len(r.Catalog)
			r.Catalog = append(r.Catalog, Preset{HuggingFace: e.Name, Size: e.ModelFileSize, SizeBytes: size,
				BytesPerToken: kaitosrc.BytesPerToken(e), DistributedInference: distributed, File: kaitosrc.Catalog, Line: e.Line, SHA256: sum})
		}
		for _, short := range sortedKeys(shortNames) {
			i, ok := seen[strings.ToLower(shortNames[short])]
			if !ok {
				return r, fmt.Errorf("%s redirects %q to %q, which is not in %s", shortFrom, short, shortNames[short], kaitosrc.Catalog)
			}
			if r.Catalog[i].Name != "" {
				return r, fmt.Errorf("%s redirects both %q and %q to %q", shortFrom, r.Catalog[i].Name, short, shortNames[short])
			}
			if short != strings.ToLower(short) {
				return r, fmt.Errorf("%s: short name %q is not lower case, and KAITO looks up the lower-cased name", shortFrom, short)
			}
			r.Catalog[i].Name = short
		}
	} else if len(shortNames) > 0 {
		return r, fmt.Errorf("%s redirects short names to a catalog, but there is no %s", shortFrom, kaitosrc.Catalog)
	}
	if len(r.Presets) == 0 && len(r.Catalog) == 0 {
		return r, fmt.Errorf("neither Go presets nor %s", kaitosrc.Catalog)
	}
	sort.Slice(r.Presets, func(i, j int) bool { return r.Presets[i].Name < r.Presets[j].Name })
	sort.SliceStable(r.Catalog, func(i, j int) bool {
		return strings.ToLower(r.Catalog[i].HuggingFace) < strings.ToLower(r.Catalog[j].HuggingFace)
	})
	return r, nil
}

// sizeBytes is resource.MustParse(size).Value(): whole bytes, rounded up.
func sizeBytes(size string) (int64, error) {
	q, err := resource.ParseQuantity(size)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", size, err)
	}
	if q.Sign() <= 0 {
		return 0, fmt.Errorf("size %q is not positive", size)
	}
	return q.Value(), nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
