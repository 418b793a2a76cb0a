// Command derive-kaito-presets derives providers/kaito/presets.json: for
// every KAITO release from 0.6.0 up to before 0.11.0 that the renderer
// supports (the releases whose presets are hand-written Go presets, listed
// in KAITO's own model list), the preset names, the Hugging Face
// repository each one serves, and whether its weights are downloaded at
// runtime (downloadAtRuntime) and need a token to be (downloadAuthRequired),
// read from presets/workspace/models/supported_models.yaml at the
// release's tag, for the presets the release registers (the names a
// presets/workspace/models/<family>/model.go registers in its init: the
// list keeps models whose Go preset is gone, such as phi-2 from 0.8.0,
// which KAITO refuses). The output names, per release, the tag's commit and the
// list's sha256, so anyone can check where each entry came from.
//
// The provider uses the list twice: before 0.9.0, which accepts only
// registered preset names, it renders a Hugging Face id as the preset KAITO
// registers for that repository; before 0.11.0 it passes no
// modelAccessSecret to a preset whose weights are in its image, which
// KAITO's webhook refuses. From 0.9.0 KAITO also accepts a preset's
// Hugging Face id, lower-cased, through builtinVLLMModels in
// presets/workspace/models/vllm_model.go; the derivation checks that map
// against the list (every key the lower-cased repository of the preset it
// names, every preset with a repository reached by it or, in 0.10.0, sent
// to the model catalog by legacyBuiltinToCatalog), so that the provider
// may match ids against the list case-insensitively, and stops otherwise.
//
// KAITO is not served by the Go module proxy, so the input is a clone of
// https://github.com/kaito-project/kaito (any clone with its tags):
//
//	go run ./hack/derive-kaito-presets -repo ../kaito          # rewrite
//	go run ./hack/derive-kaito-presets -repo ../kaito -check   # compare
package main

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/hack/internal/kaitosrc"
)

const (
	modelList = kaitosrc.ModelList
	output    = "providers/kaito/presets.json"
)

// The releases derived: those the renderer supports whose presets are
// KAITO's Go presets (0.11.0 serves every model from its catalog, and
// takes a modelAccessSecret for every one).
var first, end = version.MustParseSemantic("0.6.0"), version.MustParseSemantic("0.11.0")

// Presets is the file's shape (providers/kaito reads it).
type Presets struct {
	Source   string    `json:"source"`
	Releases []Release `json:"releases"`
}

// Release is one KAITO release's preset list.
type Release struct {
	Release string   `json:"release"`
	Commit  string   `json:"commit"`
	SHA256  string   `json:"sha256"`
	Presets []Preset `json:"presets"`
}

// Preset maps a preset name to the Hugging Face repository it serves, and
// says where its weights come from.
type Preset struct {
	Name        string `json:"name"`
	HuggingFace string `json:"huggingFace"`
	// DownloadAtRuntime: the pod downloads the weights; false: they are in
	// the preset's image, and KAITO refuses a modelAccessSecret.
	DownloadAtRuntime bool `json:"downloadAtRuntime"`
	// DownloadAuthRequired: KAITO requires a modelAccessSecret.
	DownloadAuthRequired bool `json:"downloadAuthRequired"`
}

func main() { kaitosrc.Main("derive-kaito-presets", output, derive) }

func derive(repo kaitosrc.Repo) (*Presets, error) {
	releases, err := repo.Releases(first, end)
	if err != nil {
		return nil, err
	}
	p := &Presets{Source: "github.com/kaito-project/kaito " + modelList + " at each release tag (go run ./hack/derive-kaito-presets -repo KAITO_CLONE)"}
	for _, v := range releases {
		r, err := release(repo, v)
		if err != nil {
			return nil, err
		}
		p.Releases = append(p.Releases, r)
	}
	if len(p.Releases) == 0 {
		return nil, fmt.Errorf("%s has no release tags from v%s to before v%s", repo, first, end)
	}
	return p, nil
}

func release(repo kaitosrc.Repo, v *version.Version) (Release, error) {
	tag := "v" + v.String()
	commit, err := repo.Commit(tag)
	if err != nil {
		return Release{}, err
	}
	list, err := repo.Show(tag, modelList)
	if err != nil {
		return Release{}, err
	}
	models, err := kaitosrc.SupportedModels(list)
	if err != nil {
		return Release{}, fmt.Errorf("%s:%s: %w", tag, modelList, err)
	}
	registered, err := registeredPresets(repo, tag)
	if err != nil {
		return Release{}, fmt.Errorf("%s: %w", tag, err)
	}
	r := Release{Release: v.String(), Commit: commit, SHA256: kaitosrc.SHA256(list)}
	for _, m := range models {
		if m.HuggingFace == "" || !registered[m.Name] {
			continue // the base image, presets not from Hugging Face, and models the list keeps but no Go file registers (phi-2 from 0.8.0)
		}
		r.Presets = append(r.Presets, Preset{Name: m.Name, HuggingFace: m.HuggingFace, DownloadAtRuntime: m.DownloadAtRuntime, DownloadAuthRequired: m.DownloadAuthRequired})
	}
	sort.Slice(r.Presets, func(i, j int) bool { return r.Presets[i].Name < r.Presets[j].Name })
	if err := checkHFIDs(repo, tag, r.Presets); err != nil {
		return Release{}, fmt.Errorf("%s: %w", tag, err)
	}
	return r, nil
}

// registeredPresets are the names the Go presets register at a tag
// (presets/workspace/models/<family>/model.go): the names KAITO's
// webhook accepts.
func registeredPresets(repo kaitosrc.Repo, tag string) (map[string]bool, error) {
	files, err := repo.PresetFiles(tag)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, f := range files {
		src, err := repo.Show(tag, f)
		if err != nil {
			return nil, err
		}
		names, err := kaitosrc.RegisteredNames(f, src)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			out[n] = true
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Go presets under %s", kaitosrc.ModelsDir)
	}
	return out, nil
}

// checkHFIDs holds vllm_model.go's builtinVLLMModels (KAITO 0.9.0 on) to
// the list: the provider matches a Hugging Face id to a preset by the
// list's repository, case-insensitively, which is KAITO's own resolution
// only when every key is the lower-cased repository of the preset it
// names, and every preset is reached by its key or (0.10.0) sent to the
// catalog by legacyBuiltinToCatalog, where KAITO keeps its weights in
// the same image.
func checkHFIDs(repo kaitosrc.Repo, tag string, presets []Preset) error {
	has, err := repo.Has(tag, kaitosrc.VLLMModel)
	if err != nil || !has {
		return err
	}
	src, err := repo.Show(tag, kaitosrc.VLLMModel)
	if err != nil {
		return err
	}
	builtin, ok, err := kaitosrc.StringMap(kaitosrc.VLLMModel, src, "builtinVLLMModels")
	if err != nil || !ok {
		return err
	}
	toCatalog, _, err := kaitosrc.StringMap(kaitosrc.VLLMModel, src, "legacyBuiltinToCatalog")
	if err != nil {
		return err
	}
	byName := map[string]Preset{}
	for _, p := range presets {
		byName[p.Name] = p
	}
	reached := map[string]bool{}
	for id, name := range builtin {
		p, ok := byName[name]
		if !ok || id != strings.ToLower(p.HuggingFace) {
			return fmt.Errorf("%s: builtinVLLMModels maps %q to %q, not to the preset whose repository it is in %s", kaitosrc.VLLMModel, id, name, modelList)
		}
		reached[name] = true
	}
	for _, p := range presets {
		if !reached[p.Name] && !strings.EqualFold(toCatalog[p.Name], p.HuggingFace) {
			return fmt.Errorf("%s: preset %q (%s) is neither in builtinVLLMModels nor sent to the catalog", kaitosrc.VLLMModel, p.Name, p.HuggingFace)
		}
	}
	return nil
}
