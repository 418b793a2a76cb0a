// Command derive-model-catalog derives fit/catalog.json, the model facts
// the memory-fit check reads (parameters, dtype, layers, KV heads, head
// size, default context), from public copies of the models' Hugging Face
// config.json files, then from KAITO's generated model list
// (model_catalog.yaml: the checkpoint's size, context limit and attention
// shape) for the models no config.json covers. pins.json names each copy's
// repository, commit, path and sha256, and the ids a config's row answers
// to; sources/ holds the copies, so that deriving and checking run
// offline. A copy whose sha256 is not the pinned one is an error. Each
// catalog row carries its pin: where its figures came from.
//
//	go run ./hack/derive-model-catalog          # rewrite fit/catalog.json
//	go run ./hack/derive-model-catalog -check   # exit 1 when it has drifted
//
// To add a model: copy its config.json from a public repository at a
// commit into sources/, add a pin (the test checks the sha256), run the
// command and review the row.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/hack/internal/derived"
)

const (
	pinsFile = "hack/derive-model-catalog/pins.json"
	output   = "fit/catalog.json"
)

// Pins is the shape of pins.json.
type Pins struct {
	About string `json:"about"`
	Pins  []Pin  `json:"pins"`
	// Catalogs are model lists of other projects whose rows are facts
	// (KAITO's generated model_catalog.yaml): every model in them that no
	// pinned config.json covers becomes a row.
	Catalogs []CatalogPin `json:"catalogs,omitempty"`
}

// CatalogPin is one pinned model list.
type CatalogPin struct {
	Source fit.Origin `json:"source"`
	File   string     `json:"file"`
	Note   string     `json:"note,omitempty"`
}

// kaitoModel is what a row of KAITO's model_catalog.yaml gives: the
// checkpoint's size (modelFileSize, from the safetensors files), the
// context limit and the attention shape.
type kaitoModel struct {
	Name          string   `json:"name"`
	ModelFileSize string   `json:"modelFileSize"`
	Architectures []string `json:"architectures"`
	TokenLimit    int      `json:"modelTokenLimit"`
	HiddenSize    int      `json:"hiddenSize"`
	Layers        int      `json:"numHiddenLayers"`
	Heads         int      `json:"numAttentionHeads"`
	KVHeads       int      `json:"numKeyValueHeads"`
	HeadDim       int      `json:"headDim"`
	KVLoraRank    int      `json:"kvLoraRank"`
	QKRopeHeadDim int      `json:"qkRopeHeadDim"`
	QuantMethod   string   `json:"quantMethod"`
}

// fullAttention lists the architectures whose every layer keeps keys and
// values for the whole sequence: only for them is a KV cache of one
// sequence computed from a list's shape. Sliding-window (Gemma 3 and 4,
// gpt-oss), hybrid linear-attention or Mamba models (Qwen3.5, Nemotron-H)
// keep far less, and an estimate from the full shape would refuse models
// that run: their rows carry the weights only.
var fullAttention = map[string]bool{
	"LlamaForCausalLM": true, "MistralForCausalLM": true, "Qwen2ForCausalLM": true,
	"Qwen3ForCausalLM": true, "Phi3ForCausalLM": true, "GraniteForCausalLM": true,
}

// latentAttention lists the architectures with multi-head latent
// attention, whose KV cache is kv_lora_rank + qk_rope_head_dim a token and
// layer.
var latentAttention = map[string]bool{"DeepseekV3ForCausalLM": true}

// gibRe reads modelFileSize: "27.31Gi".
var gibRe = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(Gi|Mi)$`)

// fromKAITO makes a row of one model of KAITO's list.
func fromKAITO(k kaitoModel) (fit.Model, error) {
	match := gibRe.FindStringSubmatch(k.ModelFileSize)
	if match == nil {
		return fit.Model{}, fmt.Errorf("%s: modelFileSize %q is not a size in Gi or Mi", k.Name, k.ModelFileSize)
	}
	size, err := strconv.ParseFloat(match[1], 64)
	if err != nil {
		return fit.Model{}, err
	}
	unit := float64(1 << 30)
	if match[2] == "Mi" {
		unit = 1 << 20
	}
	m := fit.Model{ID: k.Name, DType: k.QuantMethod, WeightBytes: int64(math.Round(size * unit)), Context: k.TokenLimit}
	if m.DType == "" {
		m.DType = "checkpoint"
	}
	arch := ""
	if len(k.Architectures) > 0 {
		arch = k.Architectures[0]
	}
	switch {
	case latentAttention[arch] && k.KVLoraRank > 0:
		m.Layers, m.KVLatent = k.Layers, k.KVLoraRank+k.QKRopeHeadDim
	case fullAttention[arch] && k.Heads > 0:
		m.Layers, m.KVHeads, m.HeadDim = k.Layers, k.KVHeads, k.HeadDim
		if m.HeadDim == 0 {
			m.HeadDim = k.HiddenSize / k.Heads
		}
	}
	return m, nil
}

// Pin is one pinned configuration and the catalog row it makes.
type Pin struct {
	ID      string     `json:"id"`
	Aliases []string   `json:"aliases,omitempty"`
	Note    string     `json:"note,omitempty"`
	Source  fit.Origin `json:"source"`
	// File is the local copy, relative to pins.json.
	File string `json:"file"`
}

func main() {
	pins := flag.String("pins", pinsFile, "the pins")
	out := flag.String("o", output, "the catalog to write")
	check := flag.Bool("check", false, "write nothing; exit 1 when the catalog differs from what the pins derive")
	flag.Parse()
	data, err := derive(*pins)
	if err != nil {
		fmt.Fprintln(os.Stderr, "derive-model-catalog:", err)
		os.Exit(1)
	}
	os.Exit(derived.Output("derive-model-catalog", *out, *pins, data, *check, os.Stdout, os.Stderr))
}

// derive reads the pins and their copies and returns the catalog's bytes.
func derive(pinsPath string) ([]byte, error) {
	raw, err := os.ReadFile(pinsPath)
	if err != nil {
		return nil, err
	}
	var p Pins
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %v", pinsPath, err)
	}
	c := fit.Catalog{Source: "derived by go run ./hack/derive-model-catalog from the configurations pinned in " + pinsFile + "; each row names its source file, repository, commit and sha256"}
	seen := map[string]bool{}
	for _, pin := range p.Pins {
		for _, id := range append([]string{pin.ID}, pin.Aliases...) {
			if seen[id] {
				return nil, fmt.Errorf("%s: %s is pinned twice", pinsPath, id)
			}
			seen[id] = true
		}
		cfg, err := os.ReadFile(filepath.Join(filepath.Dir(pinsPath), pin.File))
		if err != nil {
			return nil, err
		}
		if err := checkSum(pin.File, cfg, pin.Source); err != nil {
			return nil, err
		}
		m, err := fit.FromConfig(pin.ID, cfg, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", pin.File, err)
		}
		c.Models = append(c.Models, fit.Entry{Model: m, Aliases: pin.Aliases, Note: pin.Note, From: pin.Source})
	}
	for _, cat := range p.Catalogs {
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(pinsPath), cat.File))
		if err != nil {
			return nil, err
		}
		if err := checkSum(cat.File, raw, cat.Source); err != nil {
			return nil, err
		}
		var list struct {
			Models []kaitoModel `json:"models"`
		}
		if err := sigsyaml.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%s: %v", cat.File, err)
		}
		for _, k := range list.Models {
			if seen[k.Name] {
				continue // a pinned config.json says more
			}
			seen[k.Name] = true
			m, err := fromKAITO(k)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", cat.File, err)
			}
			c.Models = append(c.Models, fit.Entry{Model: m, Note: cat.Note, From: cat.Source})
		}
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// checkSum holds a copy to its pin's sha256.
func checkSum(file string, data []byte, o fit.Origin) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != o.SHA256 {
		return fmt.Errorf("%s: sha256 %s, but the pin says %s (%s)", file, got, o.SHA256, o)
	}
	return nil
}
