package kaito

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/nearest"
)

// presetsJSON is KAITO's own model list per release from 0.6.0 to 0.10.x
// (preset name → Hugging Face repository, and whether its weights are
// downloaded at runtime or baked into its image), derived by
// hack/derive-kaito-presets from presets/workspace/models/
// supported_models.yaml at each release tag, for the presets the
// release's Go files register.
//
//go:embed presets.json
var presetsJSON []byte

type presetList struct {
	Releases []struct {
		Release string        `json:"release"`
		Presets []presetEntry `json:"presets"`
	} `json:"releases"`
}

type presetEntry struct {
	Name                 string `json:"name"`
	HuggingFace          string `json:"huggingFace"`
	DownloadAtRuntime    bool   `json:"downloadAtRuntime"`
	DownloadAuthRequired bool   `json:"downloadAuthRequired"`
}

// presetLists decodes presets.json once a process: every KAITO model of a
// render reads it, and decoding it took a quarter of the time of a fleet
// plan that renders a model for each cluster (BENCHMARKS.md).
var presetLists = sync.OnceValues(func() (*presetList, error) {
	var l presetList
	if err := json.Unmarshal(presetsJSON, &l); err != nil {
		return nil, fmt.Errorf("presets.json: %w", err)
	}
	return &l, nil
})

// preset is a preset name and the repository as KAITO spells it.
type preset struct{ name, repo string }

// releasePresets returns the preset list of the KAITO release: the derived
// list of that release, else of the newest derived release before it (a
// patch release published after the derivation adds no preset we could
// know).
func releasePresets(rel release) (string, []presetEntry, error) {
	l, err := presetLists()
	if err != nil {
		return "", nil, err
	}
	for i := len(l.Releases) - 1; i >= 0; i-- {
		r := l.Releases[i]
		v, err := hub.ParseRelease(r.Release)
		if err != nil {
			return "", nil, fmt.Errorf("presets.json: %w", err)
		}
		if v.LessThan(rel.version) || v.EqualTo(rel.version) {
			return r.Release, r.Presets, nil
		}
	}
	return "", nil, fmt.Errorf("no KAITO preset list for %s", rel)
}

// presetsOf returns the preset list of the KAITO release by repository.
func presetsOf(rel release) (string, map[string]preset, error) {
	name, list, err := releasePresets(rel)
	if err != nil {
		return "", nil, err
	}
	byRepo := map[string]preset{}
	for _, p := range list {
		byRepo[strings.ToLower(p.HuggingFace)] = preset{name: p.Name, repo: p.HuggingFace}
	}
	return name, byRepo, nil
}

// weightsInImage reports whether the preset KAITO rel serves for name (a
// registered preset name, or from 0.9.0 a preset's Hugging Face id, which
// KAITO lower-cases) has its weights in its image (downloadAtRuntime
// false): KAITO's webhook then refuses a modelAccessSecret ("This preset
// does not require a modelAccessSecret with HF_TOKEN key under
// presetOptions"). From 0.11.0 every preset downloads its weights, and a
// secret is never refused; so is it for a model KAITO generates from the
// Hub.
func weightsInImage(rel release, name string) (preset string, inImage bool, err error) {
	if !rel.catalogOnly {
		_, list, err := releasePresets(rel)
		if err != nil {
			return "", false, err
		}
		for _, p := range list {
			if p.Name == name || rel.hfPresetNames && strings.Contains(name, "/") && strings.EqualFold(p.HuggingFace, name) {
				return p.Name, !p.DownloadAtRuntime, nil
			}
		}
	}
	return "", false, nil
}

// presetName maps a Hugging Face id to the preset KAITO rel registers for
// that repository. ok is false when it registers none; closest then names
// the nearest presets, with their repositories, for the error.
func presetName(rel release, hfID string) (name string, ok bool, closest []string, err error) {
	_, byRepo, err := presetsOf(rel)
	if err != nil {
		return "", false, nil, err
	}
	if p, ok := byRepo[strings.ToLower(hfID)]; ok {
		return p.name, true, nil, nil
	}
	// The same organisation's presets first (another Qwen for a Qwen),
	// then the others, each by edit distance.
	org := strings.ToLower(strings.SplitN(hfID, "/", 2)[0]) + "/"
	var same, others []string
	for repo := range byRepo {
		if strings.HasPrefix(repo, org) {
			same = append(same, repo)
		} else {
			others = append(others, repo)
		}
	}
	ranked := append(nearest.Closest(hfID, same, 3), nearest.Closest(hfID, others, 3)...)
	for _, repo := range ranked[:min(3, len(ranked))] {
		closest = append(closest, fmt.Sprintf("`%s` (%s)", byRepo[repo].name, byRepo[repo].repo))
	}
	return "", false, closest, nil
}
