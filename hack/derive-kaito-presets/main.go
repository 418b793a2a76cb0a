// Command derive-kaito-presets derives providers/kaito/presets.json: for
// every KAITO release before 0.9.0 that the renderer supports (those accept
// only registered preset names, not Hugging Face ids), the preset names and
// the Hugging Face repository each one serves, read from KAITO's own model
// list, presets/workspace/models/supported_models.yaml, at the release's
// tag. The output names, per release, the tag's commit and the list's
// sha256, so anyone can check where each entry came from.
//
// KAITO is not served by the Go module proxy, so the input is a clone of
// https://github.com/kaito-project/kaito (any clone with its tags):
//
//	go run ./hack/derive-kaito-presets -repo ../kaito          # rewrite
//	go run ./hack/derive-kaito-presets -repo ../kaito -check   # compare
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/hack/internal/derived"
)

const (
	modelList = "presets/workspace/models/supported_models.yaml"
	output    = "providers/kaito/presets.json"
)

// Releases the renderer supports that take preset names only.
var first, beforeHF = version.MustParseSemantic("0.6.0"), version.MustParseSemantic("0.9.0")

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

// Preset maps a preset name to the Hugging Face repository it serves.
type Preset struct {
	Name        string `json:"name"`
	HuggingFace string `json:"huggingFace"`
}

// hfRepo reads `org/repo` from a model's `version`, a Hugging Face commit
// URL.
var hfRepo = regexp.MustCompile(`^https://huggingface\.co/([^/]+/[^/]+)/commit/[0-9a-f]+$`)

func main() {
	repo := flag.String("repo", "", "a clone of github.com/kaito-project/kaito with its tags")
	out := flag.String("o", output, "the file to write")
	check := flag.Bool("check", false, "write nothing; exit 1 when the file differs from what the clone derives")
	flag.Parse()
	if *repo == "" {
		fmt.Fprintln(os.Stderr, "derive-kaito-presets: -repo is required (a clone of github.com/kaito-project/kaito)")
		os.Exit(2)
	}
	p, err := derive(*repo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "derive-kaito-presets:", err)
		os.Exit(1)
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "derive-kaito-presets:", err)
		os.Exit(1)
	}
	data = append(data, '\n')
	os.Exit(derived.Output("derive-kaito-presets", *out, *repo, data, *check, os.Stdout, os.Stderr))
}

func derive(repo string) (*Presets, error) {
	tags, err := git(repo, "tag", "--list", "v*")
	if err != nil {
		return nil, err
	}
	var releases []*version.Version
	for _, t := range strings.Fields(string(tags)) {
		v, err := version.ParseSemantic(strings.TrimPrefix(t, "v"))
		if err != nil || v.PreRelease() != "" || v.LessThan(first) || !v.LessThan(beforeHF) {
			continue
		}
		releases = append(releases, v)
	}
	sort.Slice(releases, func(i, j int) bool { return releases[i].LessThan(releases[j]) })
	p := &Presets{Source: "github.com/kaito-project/kaito " + modelList + " at each release tag (go run ./hack/derive-kaito-presets -repo KAITO_CLONE)"}
	for _, v := range releases {
		r, err := release(repo, v)
		if err != nil {
			return nil, err
		}
		p.Releases = append(p.Releases, r)
	}
	if len(p.Releases) == 0 {
		return nil, fmt.Errorf("%s has no release tags from v%s to before v%s", repo, first, beforeHF)
	}
	return p, nil
}

func release(repo string, v *version.Version) (Release, error) {
	tag := "v" + v.String()
	commit, err := git(repo, "rev-list", "-n1", tag)
	if err != nil {
		return Release{}, err
	}
	list, err := git(repo, "show", tag+":"+modelList)
	if err != nil {
		return Release{}, err
	}
	var models struct {
		Models []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"models"`
	}
	if err := sigsyaml.Unmarshal(list, &models); err != nil {
		return Release{}, fmt.Errorf("%s:%s: %w", tag, modelList, err)
	}
	sum := sha256.Sum256(list)
	r := Release{Release: v.String(), Commit: strings.TrimSpace(string(commit)), SHA256: hex.EncodeToString(sum[:])}
	for _, m := range models.Models {
		match := hfRepo.FindStringSubmatch(m.Version)
		if match == nil {
			continue // the base image, and presets not from Hugging Face
		}
		r.Presets = append(r.Presets, Preset{Name: m.Name, HuggingFace: match[1]})
	}
	sort.Slice(r.Presets, func(i, j int) bool { return r.Presets[i].Name < r.Presets[j].Name })
	return r, nil
}

func git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
