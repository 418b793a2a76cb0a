package fit

// KAITO sizes a preset's replica itself: its Workspace controller's node
// estimator (EstimateNodeCount) decides how many GPU nodes one replica
// spans, from the model's size and KV cache bytes per token as KAITO's
// own files give them, and the GPUs of the first ready node the
// Workspace's label selector matches; it fails the Workspace when a GPU
// is too small for even the fixed reserve, or when a model that does not
// support distributed inference needs more than one node. KAITORelease
// repeats that arithmetic release by release, so that the render fails
// where KAITO would and says how many nodes KAITO will take.
//
// Sources, kaito-project/kaito at each tag:
// pkg/workspace/estimator/advancednodesestimator/estimator.go (v0.8.0,
// v0.8.1, v0.9.x) and nodesestimator/estimator.go (v0.10.0 to v0.12.0);
// the node labels as pkg/utils/common.go (to v0.10.0) and
// pkg/sku/helpers.go (v0.11.0 on) read them; the webhook's total-memory
// check in api/v1beta1/workspace_validation.go. The figures of every
// model, and how KAITO resolves a preset name to them, are derived from
// KAITO's own files at each tag into kaito_presets.json by
// hack/derive-kaito-sizing. A test holds this arithmetic to KAITO's own
// EstimateNodeCount, run at each release on the cases of
// testdata/kaito-estimator-<tag>.tsv.
//
// One replica, on nodes of G GPUs of L MiB each (nvidia.com/gpu.count,
// nvidia.com/gpu.memory), a model of S bytes and B KV bytes a token, a
// context of C tokens (2048 unless the Workspace's inference.config
// ConfigMap sets `vllm: max-model-len`):
//
//	g       = round(L / 1024) whole GiB, half up
//	per GPU = g GiB ÷ G in 0.8.x and 0.9.x (KAITO stored the per-GPU label
//	          as the node's total, then divided it by the GPUs: its bug),
//	          g GiB from 0.10.0
//	usable  = per GPU × 0.84
//	reserve = 2.3 GiB + C × B ÷ G
//	room    = usable − reserve (÷ 1.05 from 0.11.0); none: the Workspace
//	          fails ("GPU memory … is too small")
//	GPUs    = ⌊S × 1.02 ÷ room⌋ + 1, nodes = ⌈GPUs ÷ G⌉
//
// and more than one node fails the Workspace for a model that does not
// support distributed inference (every Go preset of 0.8–0.10 but five)
// or disables tensor parallelism (Falcon 7B and 7B Instruct, to 0.11).

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"
)

// The estimator's constants, the same in every release.
const (
	kaitoUtilization  = 0.84
	kaitoWeightFactor = 1.02
	kaitoBaseReserve  = 2.3 * (1 << 30)
	kaitoScaledFactor = 0.05 // overheadWeightFactor, from 0.11.0
	// KAITODefaultContext is the max-model-len the estimator counts the
	// KV cache for unless the Workspace's inference.config ConfigMap sets
	// one.
	KAITODefaultContext = 2048
	kaitoGiB            = 1 << 30
)

//go:embed kaito_presets.json
var kaitoPresetsJSON []byte

// KAITOPreset is what KAITO's node estimator reads of one model at one
// release (kaito_presets.json).
type KAITOPreset struct {
	// Name is the short name: a Go preset's registered name, or the short
	// name KAITO redirects to this catalog entry; "" for a catalog entry
	// reached by its Hugging Face id only.
	Name string `json:"name,omitempty"`
	// HuggingFace is the repository the model is.
	HuggingFace string `json:"huggingFace"`
	// BuiltinID is the lower-case Hugging Face id KAITO 0.9/0.10 maps to
	// this Go preset (builtinVLLMModels).
	BuiltinID string `json:"builtinId,omitempty"`
	// Size is TotalSafeTensorFileSize or modelFileSize as KAITO writes it,
	// SizeBytes as KAITO parses it (resource.MustParse, rounded up).
	Size      string `json:"size"`
	SizeBytes int64  `json:"sizeBytes"`
	// BytesPerToken is the KV cache of one token KAITO counts.
	BytesPerToken            int64 `json:"bytesPerToken"`
	DistributedInference     bool  `json:"distributedInference"`
	DisableTensorParallelism bool  `json:"disableTensorParallelism,omitempty"`
	// File, Line and SHA256 name where the figures were read.
	File   string `json:"file"`
	Line   int    `json:"line"`
	SHA256 string `json:"sha256"`
}

// Source names the preset's figures in messages.
func (p KAITOPreset) Source() string {
	if p.File == "" {
		return "the model catalog's facts"
	}
	return fmt.Sprintf("KAITO's %s:%d", p.File, p.Line)
}

type kaitoFile struct {
	Releases []struct {
		Tags []struct {
			Tag    string `json:"tag"`
			Commit string `json:"commit"`
		} `json:"tags"`
		Presets []KAITOPreset `json:"presets"`
		Catalog []KAITOPreset `json:"catalog"`
	} `json:"releases"`
}

var kaitoData = sync.OnceValues(func() (*kaitoFile, error) {
	var f kaitoFile
	if err := json.Unmarshal(kaitoPresetsJSON, &f); err != nil {
		return nil, fmt.Errorf("fit/kaito_presets.json: %w", err)
	}
	return &f, nil
})

// kaitoRules are the estimator's releases: what changed between them.
type kaitoRules int

const (
	// advancednodesestimator, v0.8.x: int64 arithmetic, the per-GPU
	// label divided by the GPUs, registered preset names only.
	kaito08 kaitoRules = iota
	// v0.9.x: the same arithmetic; names lower-cased, Hugging Face ids
	// of the Go presets mapped to them, other ids generated from the Hub.
	kaito09
	// nodesestimator, v0.10.0: float arithmetic, the label × the GPUs,
	// phi-4 and phi-4-mini-instruct sent to the model catalog.
	kaito010
	// v0.11.x: room ÷ 1.05; every model from the catalog.
	kaito011
	// v0.12.x: no tensor-parallelism check.
	kaito012
)

var kaitoRulesFrom = []struct {
	from  *version.Version
	rules kaitoRules
}{
	{version.MustParseSemantic("0.12.0"), kaito012},
	{version.MustParseSemantic("0.11.0"), kaito011},
	{version.MustParseSemantic("0.10.0"), kaito010},
	{version.MustParseSemantic("0.9.0"), kaito09},
	{version.MustParseSemantic("0.8.0"), kaito08},
}

// KAITORelease is one KAITO release's node estimator and the models it
// knows.
type KAITORelease struct {
	// Version is the release asked for.
	Version *version.Version
	// Tag and Commit are the derived release whose figures are used: the
	// same release, or the newest derived one before it.
	Tag, Commit string
	rules       kaitoRules
	presets     []KAITOPreset
	catalog     []KAITOPreset
}

// Exact reports whether the figures are the release's own.
func (r *KAITORelease) Exact() bool { return r.Tag == "v"+r.Version.String() }

// LabelDividedByGPUs reports whether the release divides the per-GPU
// label by the node's GPUs (0.8.x, 0.9.x).
func (r *KAITORelease) LabelDividedByGPUs() bool { return r.rules <= kaito09 }

// ScaledOverhead reports whether the room is divided by 1.05 (0.11.0 on).
func (r *KAITORelease) ScaledOverhead() bool { return r.rules >= kaito011 }

// KAITOReleaseOf returns the estimator of a KAITO release; nil when the
// release has none (before 0.8.0).
func KAITOReleaseOf(v *version.Version) (*KAITORelease, error) {
	r := &KAITORelease{Version: v, rules: -1}
	for _, f := range kaitoRulesFrom {
		if v.AtLeast(f.from) {
			r.rules = f.rules
			break
		}
	}
	if r.rules < 0 {
		return nil, nil
	}
	data, err := kaitoData()
	if err != nil {
		return nil, err
	}
	for i := len(data.Releases) - 1; i >= 0 && r.Tag == ""; i-- {
		rel := data.Releases[i]
		for j := len(rel.Tags) - 1; j >= 0; j-- {
			t, err := version.ParseSemantic(strings.TrimPrefix(rel.Tags[j].Tag, "v"))
			if err != nil {
				return nil, fmt.Errorf("fit/kaito_presets.json: %w", err)
			}
			if !t.GreaterThan(v) {
				r.Tag, r.Commit, r.presets, r.catalog = rel.Tags[j].Tag, rel.Tags[j].Commit, rel.Presets, rel.Catalog
				break
			}
		}
	}
	if r.Tag == "" {
		return nil, fmt.Errorf("fit/kaito_presets.json has no KAITO release at or before %s", v)
	}
	return r, nil
}

// KAITOLookup is how KAITO resolves a Workspace's preset name.
type KAITOLookup struct {
	// Preset is the model KAITO's estimator reads; nil when it has none.
	Preset *KAITOPreset
	// Via says how the name reached it, for messages.
	Via string
	// Refused is the admission webhook's refusal of the name ("Unsupported
	// inference preset name …"), "" when it accepts it.
	Refused string
	// FromHub: KAITO generates the preset from the Hugging Face Hub when
	// it reconciles the Workspace (0.9.0 on, an id not among its models).
	FromHub bool
	// EstimatorError is what EstimateNodeCount returns for a name it
	// cannot resolve (a short name it does not know).
	EstimatorError string
}

// Lookup resolves a Workspace's `inference.preset.name` as the release
// does: its admission webhook (plugin.IsValidPreset) and its estimator's
// model lookup (plugin.KaitoModelRegister in 0.8.x, GetModelByName from
// 0.9.0).
func (r *KAITORelease) Lookup(name string) KAITOLookup {
	lower := strings.ToLower(name)
	hfID := false
	if org, repo, ok := strings.Cut(name, "/"); ok && org != "" && repo != "" {
		hfID = true
	}
	goPreset := func(n string) *KAITOPreset {
		for i := range r.presets {
			if r.presets[i].Name == n {
				return &r.presets[i]
			}
		}
		return nil
	}
	catalogNamed := func(short string) *KAITOPreset {
		for i := range r.catalog {
			if r.catalog[i].Name != "" && r.catalog[i].Name == short {
				return &r.catalog[i]
			}
		}
		return nil
	}
	catalogID := func(id string) *KAITOPreset {
		for i := range r.catalog {
			if strings.EqualFold(r.catalog[i].HuggingFace, id) {
				return &r.catalog[i]
			}
		}
		return nil
	}
	unsupported := fmt.Sprintf("Unsupported inference preset name %s", name)
	notRegistered := fmt.Sprintf("failed to get model by name: model is not registered: %s", lower)
	switch r.rules {
	case kaito08:
		if p := goPreset(name); p != nil {
			return KAITOLookup{Preset: p, Via: fmt.Sprintf("the preset %s (%s)", p.Name, p.Source())}
		}
		return KAITOLookup{Refused: unsupported}
	case kaito09, kaito010:
		l := KAITOLookup{}
		// IsValidPreset: a registered name as given, or any org/repo.
		if goPreset(name) == nil && !hfID {
			l.Refused = unsupported
		}
		if p := catalogNamed(lower); p != nil && r.rules == kaito010 {
			l.Preset, l.Via = p, fmt.Sprintf("%s's model catalog entry %s, to which KAITO %s sends the short name %s (%s)", r.Tag, p.HuggingFace, r.Tag, p.Name, p.Source())
			return l
		}
		if p := goPreset(lower); p != nil {
			l.Preset, l.Via = p, fmt.Sprintf("the preset %s (%s)", p.Name, p.Source())
			return l
		}
		if !strings.Contains(lower, "/") {
			l.EstimatorError = notRegistered
			return l
		}
		for i := range r.presets {
			if p := &r.presets[i]; p.BuiltinID != "" && p.BuiltinID == lower {
				l.Preset, l.Via = p, fmt.Sprintf("the preset %s, which KAITO %s serves for %s (%s)", p.Name, r.Tag, name, p.Source())
				return l
			}
		}
		if p := catalogID(lower); p != nil {
			l.Preset, l.Via = p, fmt.Sprintf("%s's model catalog entry %s (%s)", r.Tag, p.HuggingFace, p.Source())
			return l
		}
		l.FromHub = true
		return l
	default:
		l := KAITOLookup{}
		p := catalogNamed(lower)
		if p == nil && !hfID {
			l.Refused = unsupported
		}
		if p != nil {
			l.Preset, l.Via = p, fmt.Sprintf("%s's model catalog entry %s, to which KAITO sends the short name %s (%s)", r.Tag, p.HuggingFace, p.Name, p.Source())
			return l
		}
		if !strings.Contains(lower, "/") {
			l.EstimatorError = notRegistered
			return l
		}
		if p := catalogID(lower); p != nil {
			l.Preset, l.Via = p, fmt.Sprintf("%s's model catalog entry %s (%s)", r.Tag, p.HuggingFace, p.Source())
			return l
		}
		l.FromHub = true
		return l
	}
}

// PresetFor is the Go preset a release before 0.9 registers for a
// Hugging Face repository (what the kaito provider renders an id as), by
// supported_models.yaml's version URL; nil when none.
func (r *KAITORelease) PresetFor(hfID string) *KAITOPreset {
	for i := range r.presets {
		if strings.EqualFold(r.presets[i].HuggingFace, hfID) {
			return &r.presets[i]
		}
	}
	return nil
}

// KAITOFacts are the figures KAITO would generate for a model it does not
// know, from the facts of this package's catalog: the weights, and the KV
// cache bytes a token as KAITO's generator computes them (every layer as
// full attention, fp16); ok is false when the catalog knows neither.
func KAITOFacts(m Model) (KAITOPreset, bool) {
	size := m.Weights()
	if size <= 0 {
		return KAITOPreset{}, false
	}
	headDim, kvHeads := int64(m.HeadDim), int64(m.KVHeads)
	if headDim == 0 && m.Heads > 0 {
		headDim = int64(m.Hidden / m.Heads)
	}
	if kvHeads == 0 {
		kvHeads = int64(m.Heads)
	}
	var elements int64
	switch {
	case m.KVLatent > 0:
		elements = int64(m.KVLatent)
	case kvHeads > 0 && headDim > 0:
		elements = 2 * kvHeads * headDim
	}
	return KAITOPreset{HuggingFace: m.ID, SizeBytes: size, BytesPerToken: elements * int64(m.Layers) * 2, DistributedInference: true}, true
}

// KAITOFailure is why the estimator fails the Workspace.
type KAITOFailure string

// The estimator's failures.
const (
	KAITOTooSmall            KAITOFailure = "too-small"
	KAITOTooSmallForModel    KAITOFailure = "too-small-for-model"   // tensor parallelism disabled
	KAITONoTensorParallelism KAITOFailure = "no-tensor-parallelism" // ... and more than one node
	KAITONotDistributed      KAITOFailure = "not-distributed"
)

// KAITOEstimate is what the node estimator decides for one replica.
type KAITOEstimate struct {
	// Nodes is the number of nodes one replica spans (the estimator's
	// nodeCountPerReplica); 0 when it fails the Workspace.
	Nodes int
	// GPUs is the fewest GPUs the weights need (minGPUs); Calculated the
	// nodes they take, also when the Workspace fails for it.
	GPUs, Calculated int
	// LabelGiB is the label rounded to whole GiB; PerGPU the bytes of one
	// GPU as the estimator counts them, Usable their 0.84, Weights the
	// model × 1.02, Reserve the base and KV cache of one sequence per
	// GPU, KV the KV cache part, Room the weights one GPU holds.
	LabelGiB                                   int64
	PerGPU, Usable, Weights, Reserve, KV, Room float64
	// Context is the sequence length the KV cache is counted for.
	Context int
	// Failure and Err: why and with which message KAITO fails the
	// Workspace; "" when it does not.
	Failure KAITOFailure
	Err     string
}

// Estimate runs the release's EstimateNodeCount for a model on nodes of
// gpusPerNode GPUs labelled labelMiB each, at a context (≤ 0: 2048).
func (r *KAITORelease) Estimate(p KAITOPreset, context int, labelMiB int64, gpusPerNode int) KAITOEstimate {
	return kaitoEstimate(r.rules, p, context, labelMiB, gpusPerNode, r.LabelDividedByGPUs())
}

// EstimateWithoutLabelBug is Estimate with the per-GPU label taken as
// it is (as from 0.10.0): what 0.8.x and 0.9.x would decide without
// their bug.
func (r *KAITORelease) EstimateWithoutLabelBug(p KAITOPreset, context int, labelMiB int64, gpusPerNode int) KAITOEstimate {
	return kaitoEstimate(r.rules, p, context, labelMiB, gpusPerNode, false)
}

func kaitoEstimate(rules kaitoRules, p KAITOPreset, context int, labelMiB int64, count int, labelBug bool) KAITOEstimate {
	if context <= 0 {
		context = KAITODefaultContext
	}
	e := KAITOEstimate{Context: context}
	// GetGPUConfigFromNodeLabels: int64((float64(MiB)/1024)+0.5).
	e.LabelGiB = int64(float64(labelMiB)/1024 + 0.5)
	if e.LabelGiB <= 0 || count <= 0 {
		return e
	}
	nodeGiB := e.LabelGiB * int64(count)
	if labelBug {
		nodeGiB = e.LabelGiB
	}
	kv := float64(int64(context)*p.BytesPerToken) / float64(count)
	reserve := kaitoBaseReserve + kv
	e.KV, e.Reserve = kv, reserve
	var minGPUs int
	if rules <= kaito09 {
		// advancednodesestimator: int64 bytes.
		required := int64(float64(float64(p.SizeBytes) * kaitoWeightFactor))
		perGPU := nodeGiB * kaitoGiB / int64(count)
		avail := int64(float64(float64(perGPU) * kaitoUtilization))
		e.PerGPU, e.Usable, e.Weights = float64(perGPU), float64(avail), float64(required)
		if p.DisableTensorParallelism && required+int64(reserve) > avail {
			e.Failure = KAITOTooSmallForModel
			e.Err = fmt.Sprintf("GPU memory %d bytes is too small for model, needs %d bytes (model: %d + overhead: %.0f)", perGPU, required+int64(reserve), required, reserve)
			return e
		}
		if float64(avail) <= reserve {
			e.Failure = KAITOTooSmall
			e.Err = fmt.Sprintf("GPU memory %d bytes is too small, needs at least %.1f GB overhead (base: 2.3GB + Advanced KV Cache: %.1f GB)", perGPU, reserve/kaitoGiB, kv/kaitoGiB)
			return e
		}
		e.Room = float64(avail) - reserve
		minGPUs = int(float64(required)/e.Room) + 1
	} else {
		// nodesestimator: float64 bytes.
		perGPU := float64(nodeGiB * kaitoGiB / int64(count))
		size := float64(float64(p.SizeBytes) * kaitoWeightFactor)
		avail := float64(perGPU * kaitoUtilization)
		e.PerGPU, e.Usable, e.Weights = perGPU, avail, size
		if p.DisableTensorParallelism && rules <= kaito011 {
			overhead := reserve
			if rules == kaito011 {
				overhead = reserve + float64(kaitoScaledFactor*size)
			}
			if size+overhead > avail {
				e.Failure = KAITOTooSmallForModel
				e.Err = fmt.Sprintf("GPU memory %.0f bytes is too small for model, needs %.0f bytes (model: %.0f + overhead: %.0f)", perGPU, size+overhead, size, overhead)
				return e
			}
		}
		if avail <= reserve {
			e.Failure = KAITOTooSmall
			if rules == kaito010 {
				e.Err = fmt.Sprintf("GPU memory %.0f bytes is too small, needs at least %.1f GB overhead (base: 2.3GB + KV Cache: %.1f GB)", perGPU, reserve/kaitoGiB, kv/kaitoGiB)
			} else {
				e.Err = fmt.Sprintf("GPU memory %.0f bytes is too small, needs at least %.1f GB overhead (base: %.1fGB + KV Cache: %.1f GB)", perGPU, reserve/kaitoGiB, 2.3, kv/kaitoGiB)
			}
			return e
		}
		e.Room = avail - reserve
		if rules >= kaito011 {
			e.Room /= 1 + kaitoScaledFactor
		}
		minGPUs = int(size/e.Room) + 1
	}
	e.GPUs = minGPUs
	e.Calculated = (minGPUs + count - 1) / count
	e.Nodes = e.Calculated
	switch {
	case e.Nodes > 1 && p.DisableTensorParallelism && rules <= kaito011:
		e.Failure, e.Nodes = KAITONoTensorParallelism, 0
		e.Err = fmt.Sprintf("models with disabled tensor parallelism cannot be distributed across more than 1 GPU node, calculated nodes: %d", e.Calculated)
	case e.Nodes > 1 && !p.DistributedInference:
		e.Failure, e.Nodes = KAITONotDistributed, 0
		e.Err = fmt.Sprintf("models with disabled support distributed inference cannot be distributed across more than 1 GPU node, please use a node with larger GPU memory, calculated nodes: %d", e.Calculated)
	}
	return e
}

// KAITOAdmission is the admission webhook's total-memory check of a
// Workspace on bring-your-own nodes: every node its label selector
// matches, times one node's GPU memory as KAITO parses the labels (in
// 0.8.x and 0.9.x the per-GPU label alone: the same bug), must hold the
// model's size (no × 1.02).
type KAITOAdmission struct {
	// NodeGiB is one node's GPU memory as the webhook counts it, Total
	// the pool's.
	NodeGiB int64
	Total   int64
	// Err is the webhook's refusal, "" when it admits the Workspace.
	Err string
}

// Admit runs the webhook's check for a Workspace whose preset name is
// presetName on nodes nodes.
func (r *KAITORelease) Admit(presetName string, p KAITOPreset, nodes int, labelMiB int64, gpusPerNode int) KAITOAdmission {
	return kaitoAdmit(presetName, p, nodes, labelMiB, gpusPerNode, r.LabelDividedByGPUs())
}

// AdmitWithoutLabelBug is Admit counting every GPU of a node.
func (r *KAITORelease) AdmitWithoutLabelBug(presetName string, p KAITOPreset, nodes int, labelMiB int64, gpusPerNode int) KAITOAdmission {
	return kaitoAdmit(presetName, p, nodes, labelMiB, gpusPerNode, false)
}

func kaitoAdmit(presetName string, p KAITOPreset, nodes int, labelMiB int64, count int, labelBug bool) KAITOAdmission {
	a := KAITOAdmission{NodeGiB: int64(float64(labelMiB)/1024+0.5) * int64(count)}
	if labelBug {
		a.NodeGiB /= int64(max(count, 1))
	}
	a.Total = int64(nodes) * a.NodeGiB * kaitoGiB
	// Quantity.Cmp against the exact size: an integer total is below it
	// exactly when it is below the size rounded up.
	if a.Total < p.SizeBytes {
		need := resource.NewQuantity(p.SizeBytes, resource.DecimalSI)
		if q, err := resource.ParseQuantity(p.Size); err == nil && p.Size != "" {
			need = &q
		}
		a.Err = fmt.Sprintf("Insufficient total GPU memory: Instance type %s has a total of %s, but preset %s requires at least %s",
			"", resource.NewQuantity(a.Total, resource.BinarySI).String(), presetName, need.String())
	}
	return a
}
