package plan

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
	"github.com/airunway-render/airunway-render/render"
)

// HoursPerMonth is the month the cost is reported for: 730 hours (365
// days × 24 / 12), the month cloud price lists use.
const HoursPerMonth = 730

// Plan is the demand of every rendered model against the capacity the
// capability file declares.
type Plan struct {
	// Pools in the capability file's order.
	Pools []Pool `json:"pools"`
	// Floating are the pods whose node labels select no pool (a KubeRay
	// head, a Dynamo frontend, an endpoint picker on a cluster without a
	// CPU pool): each is planned on a pool the scheduler may put it on,
	// named in `pool` (placeFloating; docs/plan.md). A group split across
	// pools appears once per pool.
	Floating []Group `json:"floating,omitempty"`
	// Unplaced are pods no declared pool can take: they select a pool
	// whose taints they do not tolerate, or select none and no pool takes
	// them (its labels, taints, GPUs or room); Reason says which.
	Unplaced []Group `json:"unplaced,omitempty"`
	// Fits is true when every pool with a declared size holds its pods
	// (an autoscaled pool at its `max`) and no pod is unplaced.
	Fits bool `json:"fits"`
	// RolloutsProceed is true when every pool's rolling updates can run
	// to the end (Rollout.Proceeds). When it is false and Fits true, the
	// models run, but their next rollout stalls: its new pods stay
	// Pending and the old ones are never replaced.
	RolloutsProceed bool `json:"rolloutsProceed"`
	// Currency of every cost, when some pool has a price.
	Currency string `json:"currency,omitempty"`
	// CostPerMonth is the sum of the priced pools' CostPerMonth (each
	// rounded to cents first).
	CostPerMonth *float64 `json:"costPerMonth,omitempty"`
	// Notes are what the plan had to assume.
	Notes []string `json:"notes,omitempty"`
	// Memory is one replica's memory fit per model and GPU component:
	// the renderer's verdicts (MemoryOf), which the caller sets; Compute
	// reads objects, not the estimate.
	Memory []Memory `json:"memory,omitempty"`

	// costCents is CostPerMonth in cents.
	costCents int64
}

// Pool is one node pool's demand and capacity.
type Pool struct {
	Name        string `json:"name"`
	GPUResource string `json:"gpuResource,omitempty"`
	// DeviceClassName: the pool's GPUs are Dynamic Resource Allocation
	// devices of this DeviceClass, which the pods claim; GPUResource then
	// only names the GPU type the pool serves.
	DeviceClassName string `json:"deviceClassName,omitempty"`
	GPUsPerNode     int32  `json:"gpusPerNode,omitempty"`
	// Pods and GPUsRequested once every rollout is done.
	Pods          int32 `json:"pods"`
	GPUsRequested int64 `json:"gpusRequested"`
	// NodesNeeded: the pods packed onto as few nodes as hold them, largest
	// first, a pod never spanning nodes; nil when a node's size is unknown
	// (a GPU pool without `gpu.perNode`, a CPU pool without `capacity`).
	NodesNeeded *int32 `json:"nodesNeeded"`
	// IdleGPUs are the GPUs of the needed nodes no pod requests.
	IdleGPUs int64 `json:"idleGPUs"`
	// Rollout is what rolling updates add at their peak, every model's at
	// once: the worst case.
	Rollout Rollout `json:"rollout"`
	// NodesAvailable is the pool's size (an autoscaled pool's `max`); nil
	// when the capability file does not say.
	NodesAvailable *int32 `json:"nodesAvailable"`
	// NodesMin is an autoscaled pool's `min`.
	NodesMin   *int32 `json:"nodesMin,omitempty"`
	Autoscaled bool   `json:"autoscaled,omitempty"`
	// Fits: NodesNeeded <= NodesAvailable and no pod larger than a node;
	// true when the size of the pool or of its nodes is unknown.
	Fits bool `json:"fits"`
	// ShortNodes is how many more nodes the pods need than the pool has
	// (at `max` when autoscaled); ShortNodesAtMin at its `min`.
	ShortNodes      int32  `json:"shortNodes"`
	ShortNodesAtMin *int32 `json:"shortNodesAtMin,omitempty"`
	// PendingPods would find no node: the pods packed onto the nodes the
	// pool has, largest first, and any pod larger than a node.
	PendingPods int32 `json:"pendingPods"`
	// PodsLargerThanANode never schedule on this pool, whatever its size:
	// the pool does not fit while there are any.
	PodsLargerThanANode int32 `json:"podsLargerThanANode"`
	// CostPerMonth is NodesNeeded nodes for HoursPerMonth at the pool's
	// price; PoolCostPerMonth what the pool itself costs: its fixed
	// `count`, or NodesNeeded kept between `min` and `max`.
	CostPerMonth     *float64 `json:"costPerMonth,omitempty"`
	PoolCostPerMonth *float64 `json:"poolCostPerMonth,omitempty"`
	// Models are the models with pods on the pool, by namespace and name.
	Models []Model `json:"models"`

	// costCents is CostPerMonth in cents, which the plan's total adds up.
	costCents int64
}

// Rollout is the extra demand of rolling updates.
type Rollout struct {
	// Pods, GPUs and Nodes are the peak's surge, every model's at once.
	Pods  int32 `json:"pods"`
	GPUs  int64 `json:"gpus"`
	Nodes int32 `json:"nodes"`
	// Fits: the pool holds the whole peak.
	Fits bool `json:"fits"`
	// Proceeds: every rollout can run to the end, peak or not. A workload
	// that may take old pods down first (maxUnavailable above 0) puts its
	// new pods where the old ones were; one that may not (maxUnavailable
	// 0, KubeRay's second cluster) needs room for its surge beside the
	// pods that run, or its rollout stalls.
	Proceeds bool `json:"proceeds"`
	// ShortNodes is how many more nodes the rollouts that must surge need
	// than the pool has (at `max` when autoscaled): 0 when they proceed.
	ShortNodes int32 `json:"shortNodes"`
}

// Model is one model's share of a pool.
type Model struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Pods      int32  `json:"pods"`
	GPUs      int64  `json:"gpus"`
}

// Group is one set of identical pods and where it comes from.
type Group struct {
	Model     string `json:"model"`
	Namespace string `json:"namespace"`
	Object    string `json:"object"`
	Component string `json:"component,omitempty"`
	Pods      int32  `json:"pods"`
	// Pool is where a floating group is planned.
	Pool string `json:"pool,omitempty"`
	// CPUOnGPUPool: the floating pods request no GPUs but are planned on
	// a GPU pool, as no pool without GPUs takes them (the warning
	// cpu-on-gpu-pool of `airunway-render plan`).
	CPUOnGPUPool bool   `json:"cpuOnGPUPool,omitempty"`
	Reason       string `json:"reason,omitempty"`

	surge int32
	// replaces: the rollout may take old pods down before its new ones
	// are Ready (PodGroup.Unavailable > 0), so its surge need not fit.
	replaces bool
	requests corev1.ResourceList
	whole    bool
	selector map[string]string
	tols     []corev1.Toleration
	// devices are what the pods' resource claims ask of each DeviceClass.
	devices []claimed
}

// ErrNoPools: a capability file without node pools gives the plan
// nothing to hold the pods against.
var ErrNoPools = errors.New("the capability file declares no node pools (`spec.nodePools`): there is nothing to plan against; describe the cluster's pools, their `nodes` and `pricePerNodeHour` (docs/plan.md)")

// Compute plans the rendered items (render.Render's output: the
// ModelDeployments and what was generated from them) against the
// capability file. Objects not generated from a model are left out.
func Compute(items []*yaml.RNode, caps *capabilities.Resolved) (*Plan, error) {
	r := NewReader()
	for _, n := range items {
		r.read(n)
	}
	return r.Plan(caps)
}

// computeGroups plans pod groups against the capability file's pools,
// which it must have.
func computeGroups(groups []Group, notes []string, caps *capabilities.Resolved) *Plan {
	l := newLedger(caps, true)
	for _, g := range groups {
		l.add(l.sort(g))
	}
	return l.plan(notes, true)
}

// podGroups reads every generated object's pods.
func podGroups(items []*yaml.RNode) ([]Group, []string, error) {
	r := NewReader()
	for _, n := range items {
		r.read(n)
	}
	return r.groups()
}

// Reader reads the pods of rendered objects one at a time, as a render
// emits them (render.Options.Encode), and keeps what the plan needs of
// each, not the object: a plan of 10,000 models then holds their pod
// specs, not their YAML (BENCHMARKS.md). The objects may come in any
// order; they are planned in the order render sorts its output.
type Reader struct {
	counters  []providers.PodCounter
	scaled    map[string]bounds
	templates map[types.NamespacedName]*unstructured.Unstructured
	workloads []workload
	// specs are the scheduling specs read so far, by their JSON: alike
	// pods (the same shape of model on the same pool) share one.
	specs map[string]*scheduling
	// errs are the objects that could not be read, by the order of the
	// output: autoscalers and claim templates first, as they are read
	// before the workloads that refer to them.
	autoscalerErrs, templateErrs []keyedErr
}

// workload is a generated object's pod groups, before its autoscaler
// and its claims are applied.
type workload struct {
	sortKey                      string
	namespace, kind, name, model string
	groups                       []readGroup
	err                          error
}

// readGroup is a providers.PodGroup as the Reader keeps it: its counts,
// and its pod spec reduced to what scheduling reads and shared with every
// group whose pods are alike.
type readGroup struct {
	component, note          string
	pods, surge, unavailable int32
	wholeNodeGPUs            bool
	*scheduling
}

// scheduling is what the plan reads of a pod spec (schedulingSpec), with
// what it derives from it once for every group that shares it.
type scheduling struct {
	spec        corev1.PodSpec
	requests    corev1.ResourceList
	requestsErr error
	selector    map[string]string
}

type keyedErr struct {
	sortKey string
	err     error
}

// NewReader is a Reader with nothing read.
func NewReader() *Reader {
	r := &Reader{scaled: map[string]bounds{}, templates: map[types.NamespacedName]*unstructured.Unstructured{}, specs: map[string]*scheduling{}}
	for _, pr := range builtin.Providers() {
		if c, ok := pr.(providers.PodCounter); ok {
			r.counters = append(r.counters, c)
		}
	}
	return r
}

// Encode reads n and leaves it out of the output: the signature of
// render.Options.Encode, for a render whose objects only the plan reads.
func (r *Reader) Encode(n *yaml.RNode) ([]byte, string, error) {
	r.read(n)
	return nil, "", nil
}

// Plan plans what was read against the capability file.
func (r *Reader) Plan(caps *capabilities.Resolved) (*Plan, error) {
	if len(caps.NodePools) == 0 {
		return nil, ErrNoPools
	}
	groups, notes, err := r.groups()
	if err != nil {
		return nil, err
	}
	return computeGroups(groups, notes, caps), nil
}

// read keeps what the plan needs of one object.
func (r *Reader) read(n *yaml.RNode) {
	kind, model := n.GetKind(), n.GetAnnotations()[hub.AnnotationGeneratedFrom]
	// Any template, not only those generated from a model: a template the
	// user adds beside the models is as real to the scheduler.
	template := kind == "ResourceClaimTemplate" && strings.HasPrefix(n.GetApiVersion(), "resource.k8s.io/")
	autoscaler := model != "" && (kind == "ScaledObject" || kind == "HorizontalPodAutoscaler")
	if model == "" && !template {
		return
	}
	sortKey := render.SortKey(n)
	obj, err := toUnstructured(n)
	switch {
	case err != nil && template:
		r.templateErrs = append(r.templateErrs, keyedErr{sortKey, err})
	case err != nil && autoscaler:
		r.autoscalerErrs = append(r.autoscalerErrs, keyedErr{sortKey, err})
	case template:
		r.templates[types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}] = obj
	case autoscaler:
		r.readAutoscaler(obj)
	}
	if model == "" {
		return
	}
	w := workload{sortKey: sortKey, model: model}
	if err != nil {
		w.err = err
		r.workloads = append(r.workloads, w)
		return
	}
	w.namespace, w.kind, w.name = obj.GetNamespace(), obj.GetKind(), obj.GetName()
	gs, handled, err := providers.WorkloadPodGroups(obj)
	for _, c := range r.counters {
		if handled {
			break
		}
		gs, handled, err = c.PodGroups(obj)
	}
	if err != nil {
		w.err = fmt.Errorf("%s %q in namespace %q: %w", obj.GetKind(), obj.GetName(), obj.GetNamespace(), err)
	}
	w.groups = make([]readGroup, len(gs))
	for i, g := range gs {
		w.groups[i] = readGroup{
			component: g.Component, note: g.Note, pods: g.Pods, surge: g.Surge, unavailable: g.Unavailable,
			wholeNodeGPUs: g.WholeNodeGPUs, scheduling: r.scheduling(&g.Spec),
		}
	}
	r.workloads = append(r.workloads, w)
}

// scheduling is spec's scheduling spec, the one already read when an
// earlier pod had the same.
func (r *Reader) scheduling(spec *corev1.PodSpec) *scheduling {
	slim := schedulingSpec(spec)
	b, err := json.Marshal(&slim)
	if err != nil { // a PodSpec always marshals; keep it apart if not
		return newScheduling(slim)
	}
	if s, ok := r.specs[string(b)]; ok {
		return s
	}
	s := newScheduling(slim)
	r.specs[string(b)] = s
	return s
}

func newScheduling(spec corev1.PodSpec) *scheduling {
	requests := podRequests(&spec)
	return &scheduling{spec: spec, requests: requests, requestsErr: checkRequests(requests), selector: requiredLabels(&spec)}
}

// schedulingSpec is what groups reads of a pod spec: the resources of its
// containers and of the pod, its node labels, tolerations and resource
// claims. The rest (images, commands, environment, volumes, probes) is
// dropped as the object is read, so that a plan of 10,000 models keeps a
// few hundred bytes per pod group, not the whole pod (BENCHMARKS.md).
func schedulingSpec(spec *corev1.PodSpec) corev1.PodSpec {
	slim := func(cs []corev1.Container) []corev1.Container {
		if cs == nil {
			return nil
		}
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
		}
		return out
	}
	return corev1.PodSpec{
		Containers:     slim(spec.Containers),
		InitContainers: slim(spec.InitContainers),
		Overhead:       spec.Overhead,
		Resources:      spec.Resources,
		NodeSelector:   spec.NodeSelector,
		Affinity:       spec.Affinity,
		Tolerations:    spec.Tolerations,
		ResourceClaims: spec.ResourceClaims,
	}
}

// groups are the pod groups of what was read, in the order of the
// output, with their autoscalers and claims applied.
func (r *Reader) groups() ([]Group, []string, error) {
	byKey := func(a, b keyedErr) int { return cmp.Compare(a.sortKey, b.sortKey) }
	for _, errs := range [][]keyedErr{r.autoscalerErrs, r.templateErrs} {
		if len(errs) > 0 {
			return nil, nil, slices.MinFunc(errs, byKey).err
		}
	}
	workloads := slices.SortedStableFunc(slices.Values(r.workloads), func(a, b workload) int { return cmp.Compare(a.sortKey, b.sortKey) })
	var out []Group
	var notes []string
	for _, w := range workloads {
		if w.err != nil {
			return nil, nil, w.err
		}
		what := w.kind + "/" + w.name
		gs := slices.Clone(w.groups) // scaled here, read again by the next plan
		notes = append(notes, scaleToPeak(w.namespace, w.kind, w.name, gs, r.scaled, w.model)...)
		for _, g := range gs {
			if g.note != "" {
				notes = append(notes, fmt.Sprintf("%s (model %q): %s", what, w.model, g.note))
			}
			if g.pods == 0 && g.surge == 0 {
				continue
			}
			if g.requestsErr != nil {
				return nil, nil, fmt.Errorf("%s %q in namespace %q: %w", w.kind, w.name, w.namespace, g.requestsErr)
			}
			if g.wholeNodeGPUs {
				notes = append(notes, fmt.Sprintf("%s (model %q): KAITO sizes a preset's pods from the model and the nodes (its node estimator); the plan counts `resource.count` pods, each taking a whole node", what, w.model))
			}
			devices, claimNotes, unplaced, err := podClaims(&g.spec, w.namespace, r.templates, what, w.model)
			if err != nil {
				return nil, nil, fmt.Errorf("%s %q in namespace %q: %w", w.kind, w.name, w.namespace, err)
			}
			notes = append(notes, claimNotes...)
			out = append(out, Group{
				Model: w.model, Namespace: w.namespace, Object: what, Component: g.component, Pods: g.pods, Reason: unplaced,
				surge: g.surge, replaces: g.unavailable > 0, requests: g.requests, whole: g.wholeNodeGPUs, selector: g.selector, tols: g.spec.Tolerations,
				devices: devices,
			})
		}
	}
	return out, notes, nil
}

// toUnstructured decodes a node tree into the JSON-shaped maps the
// unstructured helpers read (integers as int64), straight from the tree:
// going through JSON text took most of a plan's time.
func toUnstructured(n *yaml.RNode) (*unstructured.Unstructured, error) {
	var v map[string]any
	if err := n.YNode().Decode(&v); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: jsonShaped(v).(map[string]any)}, nil
}

func jsonShaped(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = jsonShaped(e)
		}
	case []any:
		for i, e := range t {
			t[i] = jsonShaped(e)
		}
	case int:
		return int64(t)
	case uint64:
		return float64(t)
	}
	return v
}

// selectedPool is the pool whose selector the pods' required node labels
// contain, the most specific when several do; nil when they select none.
func selectedPool(g Group, pools []hub.NodePool) *hub.NodePool {
	var best *hub.NodePool
	for i := range pools {
		p := &pools[i]
		if !labels.SelectorFromSet(p.Selector).Matches(labels.Set(g.selector)) {
			continue
		}
		if best == nil || len(p.Selector) > len(best.Selector) {
			best = p
		}
	}
	return best
}

// untolerated is the first taint of the pool that keeps the pods off its
// nodes (ok false: none does); a PreferNoSchedule taint only makes the
// scheduler look elsewhere first (preference). A value, not a pointer:
// every pod group of a tainted pool asks, and a pointer would escape.
func untolerated(g Group, np *hub.NodePool) (taint corev1.Taint, ok bool) {
	for _, t := range np.Taints {
		taint = corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)}
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !corev1helpers.TolerationsTolerateTaint(klog.Background(), g.tols, &taint, false) {
			return taint, true
		}
	}
	return corev1.Taint{}, false
}

// nodeLabels prints required labels for a message.
func nodeLabels(m map[string]string) string {
	if len(m) == 0 {
		return "(none)"
	}
	return labels.Set(m).String()
}

// poolPlan packs one pool's pods; full: with the models that have pods
// there, its rollouts and its pods left without a node (rollouts).
func poolPlan(np *hub.NodePool, shape shape, load *poolLoad, full bool) Pool {
	p := Pool{Name: np.Name, GPUResource: np.GPUResource(), Fits: true,
		Pods: load.pods, GPUsRequested: load.gpus, Rollout: Rollout{Pods: load.rolloutPods, GPUs: load.rolloutGPUs, Fits: true, Proceeds: true}}
	if np.GPU != nil {
		p.GPUsPerNode, p.DeviceClassName = np.GPU.PerNode, np.GPU.DeviceClassName
	}
	if full {
		p.Models = poolModels(shape, load.groups)
	}
	steady, surge, mustSurge := load.steady, load.surge, load.mustSurge
	lo, hi, sized := np.Nodes.Range()
	if sized {
		p.NodesAvailable = &hi
		if np.Nodes.Autoscaled() {
			p.NodesMin, p.Autoscaled = &lo, true
		}
	}
	if !shape.known {
		return p
	}
	needed, oversize := shape.pack(steady, -1)
	p.NodesNeeded = &needed
	// A pod larger than a node never schedules, however many nodes the
	// pool has (a helper's cpu beyond a CPU node's capacity, say).
	p.PodsLargerThanANode, p.PendingPods = oversize, oversize
	p.Fits = oversize == 0
	if np.GPU != nil && np.GPU.PerNode > 0 {
		p.IdleGPUs = int64(needed)*int64(np.GPU.PerNode) - p.GPUsRequested
	}
	if sized {
		p.Fits = p.Fits && needed <= hi
		p.ShortNodes = max(0, needed-hi)
		if p.Autoscaled {
			short := max(0, needed-lo)
			p.ShortNodesAtMin = &short
		}
	}
	if full {
		// What the rollouts add, and the pods left without a node: a
		// model weighed against a cluster is placed by what runs, so a
		// weighing plan packs the pool once, not four times.
		rollouts(&p, shape, needed, hi, sized, steady, surge, mustSurge)
	}
	if price := np.PricePerNodeHour; price != nil {
		p.costCents = toCents(monthly(price, needed))
		p.CostPerMonth = money(p.costCents)
		billed := needed
		if sized {
			billed = min(max(needed, lo), hi)
			if !p.Autoscaled {
				billed = hi
			}
		}
		p.PoolCostPerMonth = money(toCents(monthly(price, billed)))
	}
	return p
}

// rollouts packs a pool with its rolling updates at their peak, with
// those that must surge, and with the pods it has nodes for.
func rollouts(p *Pool, shape shape, needed, hi int32, sized bool, steady, surge, mustSurge podSet) {
	during, duringOversize := shape.pack(steady.with(surge), -1)
	p.Rollout.Nodes = during - needed
	p.Rollout.Fits = duringOversize == 0
	stalling, stallingOversize := shape.pack(steady.with(mustSurge), -1)
	p.Rollout.Proceeds = stallingOversize == 0
	if sized {
		p.Rollout.Fits = p.Rollout.Fits && during <= hi
		p.Rollout.Proceeds = p.Rollout.Proceeds && stalling <= hi
		p.Rollout.ShortNodes = max(0, stalling-hi)
		_, p.PendingPods = shape.pack(steady, hi)
	}
}

// poolModels are the models with pods in a pool's groups, by namespace
// and name.
func poolModels(shape shape, groups []Group) []Model {
	models := map[types.NamespacedName]*Model{}
	for _, g := range groups {
		key := types.NamespacedName{Namespace: g.Namespace, Name: g.Model}
		if models[key] == nil {
			models[key] = &Model{Namespace: g.Namespace, Name: g.Model}
		}
		models[key].Pods += g.Pods
		models[key].GPUs += shape.podOf(g).gpus * int64(g.Pods)
	}
	out := []Model{}
	for _, k := range slices.SortedFunc(maps.Keys(models), func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	}) {
		out = append(out, *models[k])
	}
	return out
}

// monthly is the cost of nodes for a month in micro-units of the currency:
// integers, so that the same file gives the same figures on every machine.
func monthly(price *hub.Price, nodes int32) int64 {
	return int64(math.Round(price.Amount*1e6)) * HoursPerMonth * int64(nodes)
}

// toCents rounds micro-units to cents: each pool's cost is rounded once,
// and the total is the sum of the rounded costs, as printed.
func toCents(micro int64) int64 { return (micro + 5000) / 10000 }

// hourly is a month's cents as a price per hour, rounded to a hundredth
// of a cent: the month was rounded to cents, so the hour has no more
// exact digits, and a figure such as 98.32000000000001 (a float's
// division) would print where the price is 98.32.
func hourly(monthCents int64) float64 {
	return math.Round(float64(monthCents)*100/HoursPerMonth) / 1e4
}

// money is cents as a figure.
func money(cents int64) *float64 {
	v := float64(cents) / 100
	return &v
}
