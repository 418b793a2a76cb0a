// Command derive-model-catalog derives fit/catalog.json, the model facts
// the memory fit reads (parameters, dtype and quantization, layers,
// attention and KV heads, head size, hidden, intermediate and vocabulary
// sizes, experts, latent attention, sliding windows, context and rope
// scaling, the checkpoint's size, whether the repository is gated), from
// public copies of the models' files, each pinned in pins.json by
// repository, commit, path and sha256, with the copies kept in sources/
// so that deriving and checking run offline:
//
//   - configs: a model's config.json (and, for NVIDIA ModelOpt
//     checkpoints, its hf_quant_config.json; a safetensors index when
//     one is public): the shape, and the parameters computed from it;
//   - catalogs: KAITO's generated model list (model_catalog.yaml): the
//     checkpoint's size (modelFileSize) of a model a config covers when
//     the two agree within 10% (the list summed both copies of gpt-oss's
//     weights: a list size more than 25% off the config's is not taken,
//     and the row says so), and a row of its own (size, context and
//     attention shape) for a model no config covers;
//   - gated: pages that say a repository asks for a licence;
//   - lists: the model lists the catalog must cover (upstream AI
//     Runway's UI catalog, NVIDIA aiconfigurator's, KAITO's presets);
//     every model of them is a row or an alias, or named in uncovered
//     with the reason (a test holds that).
//
// A copy whose sha256 is not its pin's, a config that cannot be read, or
// a listed model nobody covers is an error.
//
//	go run ./hack/derive-model-catalog          # rewrite fit/catalog.json
//	go run ./hack/derive-model-catalog -check   # exit 1 when it has drifted
//
// To add a model: copy its config.json from a public repository at a
// commit into sources/, add a pin (the test checks the sha256), run the
// command, review the row, and run go run ./hack/gentables, which writes
// the catalog as the Go source the renderer reads (fit/catalog_table.go).
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
	"slices"
	"strconv"
	"strings"

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
	About    string       `json:"about"`
	Configs  []ConfigPin  `json:"configs"`
	Catalogs []CatalogPin `json:"catalogs,omitempty"`
	Gated    []GatedPin   `json:"gated,omitempty"`
	Lists    []ListPin    `json:"lists,omitempty"`
	// Uncovered are models of the lists no source covers, with why.
	Uncovered []Uncovered `json:"uncovered,omitempty"`
}

// File is one pinned copy: its local path (relative to pins.json) and
// where it came from.
type File struct {
	File   string     `json:"file"`
	Source fit.Origin `json:"source"`
}

// ConfigPin is one model's config.json and what goes with it.
type ConfigPin struct {
	ID      string   `json:"id"`
	Aliases []string `json:"aliases,omitempty"`
	Note    string   `json:"note,omitempty"`
	File
	// QuantConfig is NVIDIA ModelOpt's hf_quant_config.json.
	QuantConfig *File `json:"quantConfig,omitempty"`
	// Index is the model.safetensors.index.json.
	Index *File `json:"index,omitempty"`
}

// CatalogPin is one pinned model list whose rows are facts (KAITO's
// model_catalog.yaml).
type CatalogPin struct {
	File
	Note string `json:"note,omitempty"`
}

// GatedPin says whether a repository is gated, and where that is said.
type GatedPin struct {
	ID       string `json:"id"`
	Gated    bool   `json:"gated"`
	URL      string `json:"url"`
	Evidence string `json:"evidence"`
}

// ListPin is a model list the catalog must cover.
type ListPin struct {
	Name string `json:"name"`
	File
	// Format says how to read its ids: airunway (models[].id),
	// kaito-catalog (models[].name), ids-json (DefaultHFModels: the ids
	// extracted from a list kept in code, aiconfigurator's
	// sdk/common.py, which this repository does not carry).
	Format string `json:"format"`
	// Upstream is the file an ids-json list was extracted from, and Note
	// how.
	Upstream *fit.Origin `json:"upstream,omitempty"`
	Note     string      `json:"note,omitempty"`
}

// Uncovered is a listed model the catalog lacks.
type Uncovered struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
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

// deriver holds one run.
type deriver struct {
	dir  string
	c    fit.Catalog
	byID map[string]int // row by id and alias
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
	d := &deriver{dir: filepath.Dir(pinsPath), byID: map[string]int{}}
	d.c.Source = "derived by go run ./hack/derive-model-catalog from the files pinned in " + pinsFile + "; each row names its sources (repository, commit, path and sha256)"
	for _, pin := range p.Configs {
		if err := d.config(pin); err != nil {
			return nil, err
		}
	}
	for _, cat := range p.Catalogs {
		if err := d.catalog(cat); err != nil {
			return nil, err
		}
	}
	for _, g := range p.Gated {
		i, ok := d.byID[strings.ToLower(g.ID)]
		if !ok {
			continue // a gated fact about a model the catalog lacks: the list check names it
		}
		gated := g.Gated
		e := &d.c.Models[i]
		e.Gated = &gated
		e.From = append(e.From, fit.Origin{What: "gated", URL: g.URL})
	}
	for _, e := range d.c.Models {
		if e.Params == 0 && e.WeightBytes == 0 {
			return nil, fmt.Errorf("%s: neither its parameters nor its checkpoint's size is known (a hybrid whose parameters are not computed, and no list gives its size): pin a safetensors index, or name it in uncovered with why", e.ID)
		}
	}
	if err := d.cover(p.Lists, p.Uncovered); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(d.c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// read returns a pinned copy's bytes, checked against its sha256.
func (d *deriver) read(f File) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(d.dir, f.File))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != f.Source.SHA256 {
		return nil, fmt.Errorf("%s: sha256 %s, but the pin says %s (%s)", f.File, got, f.Source.SHA256, f.Source)
	}
	return data, nil
}

// add appends a row, refusing an id that is already one.
func (d *deriver) add(e fit.Entry) error {
	for _, id := range append([]string{e.ID}, e.Aliases...) {
		if _, dup := d.byID[strings.ToLower(id)]; dup {
			return fmt.Errorf("%s is pinned twice", id)
		}
		d.byID[strings.ToLower(id)] = len(d.c.Models)
	}
	d.c.Models = append(d.c.Models, e)
	return nil
}

// config makes the row of one config.json.
func (d *deriver) config(pin ConfigPin) error {
	cfg, err := d.read(pin.File)
	if err != nil {
		return err
	}
	var index []byte
	if pin.Index != nil {
		if index, err = d.read(*pin.Index); err != nil {
			return err
		}
	}
	m, err := fit.FromConfig(pin.ID, cfg, index)
	if err != nil {
		return fmt.Errorf("%s: %v", pin.File.File, err)
	}
	pin.Source.What = "config"
	e := fit.Entry{Model: m, Aliases: pin.Aliases, Note: pin.Note, From: []fit.Origin{pin.Source}}
	if q := pin.QuantConfig; q != nil {
		data, err := d.read(*q)
		if err != nil {
			return err
		}
		if err := fit.WithQuantConfig(&e.Model, data); err != nil {
			return fmt.Errorf("%s: %v", q.File, err)
		}
		q.Source.What = "quantization"
		e.From = append(e.From, q.Source)
	}
	if pin.Index != nil {
		pin.Index.Source.What = "checkpoint-size"
		e.From = append(e.From, pin.Index.Source)
	}
	if e.Params == 0 && e.WeightBytes == 0 {
		// a hybrid whose parameters are not computed: a list's size may
		// still come (catalog); without one the row would say nothing of
		// its weights.
		e.Note = join(e.Note, "the parameters of its Mamba or linear-attention layers are not computed from the config")
	}
	return d.add(e)
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
// values for the whole sequence: only for them is a KV cache computed
// from a list's shape. Sliding-window (Gemma 3 and 4, gpt-oss), hybrid
// linear-attention or Mamba models (Qwen3.5, Nemotron-H) keep far less,
// and an estimate from the full shape would refuse models that run:
// their rows carry the weights only.
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

// kaitoSize is a row's checkpoint size in bytes.
func kaitoSize(k kaitoModel) (int64, error) {
	match := gibRe.FindStringSubmatch(k.ModelFileSize)
	if match == nil {
		return 0, fmt.Errorf("%s: modelFileSize %q is not a size in Gi or Mi", k.Name, k.ModelFileSize)
	}
	size, err := strconv.ParseFloat(match[1], 64)
	if err != nil {
		return 0, err
	}
	unit := float64(1 << 30)
	if match[2] == "Mi" {
		unit = 1 << 20
	}
	return int64(math.Round(size * unit)), nil
}

// fromKAITO makes a row of one model of KAITO's list.
func fromKAITO(k kaitoModel) (fit.Model, error) {
	size, err := kaitoSize(k)
	if err != nil {
		return fit.Model{}, err
	}
	m := fit.Model{ID: k.Name, DType: k.QuantMethod, WeightBytes: size, Context: k.TokenLimit, Hidden: k.HiddenSize, Heads: k.Heads}
	if m.DType == "" {
		m.DType = "checkpoint"
	}
	arch := ""
	if len(k.Architectures) > 0 {
		arch = k.Architectures[0]
	}
	m.Architecture = arch
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

// catalog merges KAITO's list: sizes for rows a config made, rows of
// their own for the rest.
func (d *deriver) catalog(cat CatalogPin) error {
	raw, err := d.read(cat.File)
	if err != nil {
		return err
	}
	var list struct {
		Models []kaitoModel `json:"models"`
	}
	if err := sigsyaml.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("%s: %v", cat.File.File, err)
	}
	for _, k := range list.Models {
		src := cat.Source
		if i, ok := d.byID[strings.ToLower(k.Name)]; ok {
			size, err := kaitoSize(k)
			if err != nil {
				return fmt.Errorf("%s: %v", cat.File.File, err)
			}
			e := &d.c.Models[i]
			mine := e.Weights()
			switch ratio := float64(size) / float64(max(mine, 1)); {
			case e.WeightBytes > 0:
			case mine == 0:
				e.WeightBytes = size
				src.What = "checkpoint-size"
				e.From = append(e.From, src)
			case ratio > 0.9 && ratio < 1.1:
				e.WeightBytes = size
				src.What = "checkpoint-size"
				e.From = append(e.From, src)
			case ratio > 1.25 || ratio < 0.8:
				e.Note = join(e.Note, fmt.Sprintf("KAITO's list gives %.1f GiB for the checkpoint, %.2f× what its config says; the config's size is kept", float64(size)/(1<<30), ratio))
			}
			continue
		}
		m, err := fromKAITO(k)
		if err != nil {
			return fmt.Errorf("%s: %v", cat.File.File, err)
		}
		src.What = "list"
		if err := d.add(fit.Entry{Model: m, Note: cat.Note, From: []fit.Origin{src}}); err != nil {
			return err
		}
	}
	return nil
}

// cover holds the catalog to the lists: every listed model is a row or
// an alias, or uncovered with a reason (and then not a row).
func (d *deriver) cover(lists []ListPin, uncovered []Uncovered) error {
	excused := map[string]string{}
	for _, u := range uncovered {
		if u.Reason == "" {
			return fmt.Errorf("uncovered %s: say why", u.ID)
		}
		excused[strings.ToLower(u.ID)] = u.Reason
	}
	var missing []string
	for _, l := range lists {
		raw, err := d.read(l.File)
		if err != nil {
			return err
		}
		ids, err := listIDs(l.Format, raw)
		if err != nil {
			return fmt.Errorf("%s: %v", l.File.File, err)
		}
		for _, id := range ids {
			_, row := d.byID[strings.ToLower(id)]
			_, ok := excused[strings.ToLower(id)]
			switch {
			case row && ok:
				return fmt.Errorf("%s (in %s) is uncovered, but it is a row", id, l.Name)
			case !row && !ok:
				missing = append(missing, id+" ("+l.Name+")")
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("listed models the catalog lacks (pin a config, or name them in uncovered with why): %s", strings.Join(slices.Compact(missing), ", "))
	}
	return nil
}

// listIDs reads a list's model ids.
func listIDs(format string, raw []byte) ([]string, error) {
	var ids []string
	switch format {
	case "airunway":
		var l struct {
			Models []struct {
				ID string `json:"id"`
			} `json:"models"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, err
		}
		for _, m := range l.Models {
			ids = append(ids, m.ID)
		}
	case "ids-json":
		var l struct {
			IDs []string `json:"DefaultHFModels"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, err
		}
		ids = l.IDs
	case "kaito-catalog":
		var l struct {
			Models []kaitoModel `json:"models"`
		}
		if err := sigsyaml.Unmarshal(raw, &l); err != nil {
			return nil, err
		}
		for _, m := range l.Models {
			ids = append(ids, m.Name)
		}
	default:
		return nil, fmt.Errorf("list format %q: want airunway, kaito-catalog or ids-json", format)
	}
	return ids, nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
