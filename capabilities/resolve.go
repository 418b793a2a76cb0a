package capabilities

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/internal/nearest"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the embedded default capability file.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Resolved is a checked capability file ready for rendering: the cluster's
// data, which providers read, and each provider's compiled selection rules,
// which only selection runs.
type Resolved struct {
	hub.ResolvedCapabilities
	// Labels are the cluster's labels (`metadata.labels`): region, tier,
	// compliance… what a model's cluster selector matches in a fleet.
	Labels map[string]string
	// Fleet is the fleet's clusters, nil when the file declares none.
	Fleet *hub.FleetCapability
	// rules holds each installed provider's rules, by provider name.
	rules map[string][]Rule
	// embedded: the built-in default, which describes no cluster of a
	// fleet.
	embedded bool
	// cost is what the run's rules have spent (nil for the embedded
	// default, whose built-in rules are trusted).
	cost *ruleCost
}

// Embedded reports whether this is the embedded default capability file
// (no file was given): it names no cluster, so models assigned to
// clusters of a fleet are all rendered for it.
func (r *Resolved) Embedded() bool { return r.embedded }

// Rules returns the selection rules of an installed provider, in the order
// the capability file (or the built-in description) lists them.
func (r *Resolved) Rules(provider string) []Rule { return r.rules[provider] }

// Rule is a CEL selection rule of a capability file (or a built-in one).
type Rule struct {
	Condition string
	Priority  int32
	// compile returns the compiled rule: compiled when the file was
	// resolved, or for a built-in rule on first use.
	compile func() (*compiledRule, error)
	// Field is where the rule is in the capability file.
	Field     string
	tooCostly *atomic.Bool
}

var (
	defaultOnce     sync.Once
	defaultResolved *Resolved
)

// Default returns the resolved embedded default capability file.
func Default() *Resolved {
	defaultOnce.Do(func() {
		c, problems := Decode(defaultYAML)
		if problems.HasErrors() {
			panic(fmt.Sprintf("embedded default capabilities: %v", problems))
		}
		r, problems := Resolve(c)
		if problems.HasErrors() {
			panic(fmt.Sprintf("embedded default capabilities: %v", problems))
		}
		r.Source = "the embedded default capabilities"
		r.embedded = true
		r.cost = nil
		defaultResolved = r
	})
	return defaultResolved
}

// Decode parses a ClusterCapabilities document (YAML or JSON) strictly.
func Decode(data []byte) (*hub.ClusterCapabilities, diag.List) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		var l diag.List
		l.Errorf("", "is not valid YAML: %s", yamlerr.Describe(yamlerr.InText(err, string(data), 0)))
		return nil, l
	}
	return versions.DecodeClusterCapabilities(apiVersionOf(js), js)
}

// apiVersionOf reads an object's apiVersion from its JSON, "" when there is
// none. kyaml's accessor is no use here: it assumes a well-formed mapping
// and panics on anything else. A mistyped apiVersion is the decoder's to
// report.
func apiVersionOf(js []byte) string {
	var head struct {
		APIVersion any `json:"apiVersion"`
	}
	_ = json.Unmarshal(js, &head)
	s, _ := head.APIVersion.(string)
	return s
}

// Resolve checks a capability file, converted to the hub (its apiVersion is
// checked then), and merges it over the built-in provider descriptions.
// Every problem is reported.
func Resolve(c *hub.ClusterCapabilities) (*Resolved, diag.List) {
	var l diag.List
	if c.Kind != hub.KindClusterCapabilities {
		l.Errorf("kind", "must be %q, got %q", hub.KindClusterCapabilities, c.Kind)
	}
	r := &Resolved{
		ResolvedCapabilities: hub.ResolvedCapabilities{Name: c.Name, Source: "ClusterCapabilities " + fmt.Sprintf("%q", c.Name), Gateway: c.Spec.Gateway, NodePools: c.Spec.NodePools, Autoscaling: c.Spec.Autoscaling},
		Labels:               c.Labels,
		Fleet:                c.Spec.Fleet,
		rules:                map[string][]Rule{},
		cost:                 &ruleCost{},
	}
	// A model's cluster selector is matched against these labels: a
	// label the API server would refuse could never be matched as meant.
	for _, e := range metav1validation.ValidateLabels(c.Labels, field.NewPath("metadata", "labels")) {
		l.Errorf(e.Field, "%s", e.ErrorBody())
	}
	tooManyRules := !checkRuleCount(c, &l)
	seen := map[string]int{}
	for i := range c.Spec.Providers {
		at := fmt.Sprintf("spec.providers[%d]", i)
		pc := &c.Spec.Providers[i]
		if j, dup := seen[pc.Name]; dup {
			l.Errorf(at+".name", "%q is listed twice (also at `spec.providers[%d]`); list each provider once", pc.Name, j)
			continue
		}
		seen[pc.Name] = i
		if p := resolveProvider(pc, c.Spec.RequireVersions, at, &l); p != nil {
			r.Providers = append(r.Providers, p)
			if !tooManyRules { // compiling costs milliseconds a rule
				r.rules[p.Name] = resolveRules(pc, at, &l)
			}
		}
	}
	sort.Slice(r.Providers, func(i, j int) bool { return r.Providers[i].Name < r.Providers[j].Name })
	checkGateway(c.Spec.Gateway, &l)
	checkNodePools(c.Spec.NodePools, &l)
	checkCurrencies(c.Spec.NodePools, &l)
	checkAutoscaling(c.Spec.Autoscaling, &l)
	r.Warnings = resolveWarnings(c.Spec.Warnings, &l)
	checkFleet(c.Name, c.Spec.Fleet, &l)
	r.DownloadMiBPerSecond = hub.DefaultDownloadMiBPerSecond
	if d := c.Spec.ModelDownload; d != nil {
		if d.MiBPerSecond < 1 || d.MiBPerSecond > 100000 {
			l.Errorf("spec.modelDownload.mibPerSecond", "must be from 1 to 100000 (MiB/s), got %d", d.MiBPerSecond)
		}
		r.DownloadMiBPerSecond = d.MiBPerSecond
	}
	return r, l
}

// checkFleet checks the fleet's cluster names: DNS labels as the
// annotation airunway.ai/cluster takes them, each once, this cluster's
// own among them.
func checkFleet(name string, f *hub.FleetCapability, l *diag.List) {
	if f == nil {
		return
	}
	if len(f.Clusters) == 0 {
		l.Errorf("spec.fleet.clusters", "must name every cluster of the fleet (each capability file's `metadata.name`), this one (%q) included", name)
	}
	seen := map[string]bool{}
	for i, c := range f.Clusters {
		at := fmt.Sprintf("spec.fleet.clusters[%d]", i)
		if errs := utilvalidation.IsDNS1123Label(c); len(errs) > 0 {
			l.Errorf(at, "%q must be a cluster name as `metadata.name` and the annotation airunway.ai/cluster take it: %s", c, strings.Join(errs, "; "))
		}
		if seen[c] {
			l.Errorf(at, "%q is listed twice; list each cluster once", c)
		}
		seen[c] = true
	}
	if len(f.Clusters) > 0 && !seen[name] {
		l.Errorf("spec.fleet.clusters", "must include this cluster's own name %q (`metadata.name`)%s", name, nearest.Suggestion(name, f.Clusters))
	}
	switch f.UnassignedModels {
	case "", hub.UnassignedRefuse, hub.UnassignedRender:
	default:
		l.Errorf("spec.fleet.unassignedModels", "must be %q or %q, got %q", hub.UnassignedRefuse, hub.UnassignedRender, f.UnassignedModels)
	}
}

// resolveWarnings checks the warning policy's codes.
func resolveWarnings(w *hub.WarningPolicy, l *diag.List) diag.Policy {
	if w == nil {
		return diag.Policy{}
	}
	p := diag.Policy{AsErrors: w.AsErrors}
	for i, name := range w.Ignore {
		codes, err := diag.ParseCodes([]string{name})
		if err != nil {
			l.Errorf(fmt.Sprintf("spec.warnings.ignore[%d]", i), "%v%s", err, nearest.Suggestion(name, diag.CodeNames()))
			continue
		}
		p.Ignore = append(p.Ignore, codes...)
	}
	return p
}

func resolveProvider(pc *hub.ProviderCapability, requireVersions bool, at string, l *diag.List) *hub.ResolvedProvider {
	b := BuiltinFor(pc.Name)
	if b == nil {
		l.Errorf(at+".name", "%q is not a known provider: must be one of %s%s", pc.Name, hub.QuoteList(ProviderNames()), nearest.Suggestion(pc.Name, ProviderNames()))
		return nil
	}
	version := checkVersion(b, pc.Version, requireVersions, at+".version", l)
	p := &hub.ResolvedProvider{Name: pc.Name, Version: version, Ready: pc.IsReady(), Engines: b.Engines, Images: pc.Images, NodeAutoProvisioning: pc.NodeAutoProvisioning, Workload: pc.Workload}
	checkWorkload(pc, version, at+".workload", l)
	if nap := pc.NodeAutoProvisioning; nap != nil {
		if !b.NodeAutoProvisioning {
			l.Errorf(at+".nodeAutoProvisioning", "is only supported for %s", nodeAutoProvisioners())
		} else if nap.GPUInstanceType == "" && nap.CPUInstanceType == "" {
			l.Errorf(at+".nodeAutoProvisioning", "must name `gpuInstanceType`, `cpuInstanceType` or both")
		}
	}
	if pc.Engines != nil {
		p.Engines = pc.Engines
		checkEngines(pc.Engines, at+".engines", l)
	}
	for _, engine := range slices.Sorted(maps.Keys(pc.Images)) {
		if !slices.Contains(hub.Engines, engine) {
			l.Errorf(at+".images."+engine, "%q is not an engine: keys must be one of %s", engine, hub.QuoteList(hub.Engines))
		} else if pc.Images[engine] == "" {
			l.Errorf(at+".images."+engine, "must name an image")
		}
	}
	return p
}

// checkWorkload checks the capability file's choice of kind: KAITO only,
// and an InferenceSet only where the release serves one.
func checkWorkload(pc *hub.ProviderCapability, version, at string, l *diag.List) {
	switch {
	case pc.Workload == "":
	case pc.Name != hub.ProviderKAITO:
		l.Errorf(at, "is not supported for %s: only the kaito provider renders one of several kinds", pc.Name)
	case pc.Workload != hub.WorkloadWorkspace && pc.Workload != hub.WorkloadInferenceSet:
		l.Errorf(at, "%q is not supported: must be %q or %q", pc.Workload, hub.WorkloadWorkspace, hub.WorkloadInferenceSet)
	case pc.Workload == hub.WorkloadInferenceSet:
		if v, err := hub.ParseRelease(version); err == nil && !v.AtLeast(hub.KAITOInferenceSetSince) {
			l.Errorf(at, "%q needs KAITO %s or later (the release that serves it at kaito.sh/v1beta1, on by default); the capability file declares %s", pc.Workload, hub.KAITOInferenceSetSince, version)
		}
	}
}

// resolveRules compiles a provider's selection rules: the capability
// file's when it lists any (a non-nil empty list means none), else the
// built-in ones, which compile on first use.
func resolveRules(pc *hub.ProviderCapability, at string, l *diag.List) []Rule {
	var out []Rule
	rules := BuiltinFor(pc.Name).Rules
	if pc.SelectionRules != nil {
		rules = pc.SelectionRules
	}
	for j, sr := range rules {
		ruleAt := fmt.Sprintf("%s.selectionRules[%d]", at, j)
		if pc.SelectionRules == nil {
			out = append(out, Rule{Condition: sr.Condition, Priority: sr.Priority, compile: builtinProgram(sr.Condition), Field: ruleAt + ".condition", tooCostly: new(atomic.Bool)})
			continue
		}
		if sr.Priority < 0 {
			l.Errorf(ruleAt+".priority", "must be greater than or equal to 0, got %d", sr.Priority)
		}
		compiled, err := compileRule(sr.Condition)
		if err != nil {
			l.Errorf(ruleAt+".condition", "%q is not a valid CEL expression: %v", sr.Condition, err)
			continue
		}
		out = append(out, Rule{Condition: sr.Condition, Priority: sr.Priority, compile: func() (*compiledRule, error) { return compiled, nil }, Field: ruleAt + ".condition", tooCostly: new(atomic.Bool)})
	}
	return out
}

// checkRuleCount refuses a file of more than MaxSelectionRules rules, at
// the provider whose rules cross the bound: every rule is evaluated for
// every model it could select. It reports whether the count is within.
func checkRuleCount(c *hub.ClusterCapabilities, l *diag.List) bool {
	total := 0
	for i, pc := range c.Spec.Providers {
		total += len(pc.SelectionRules)
		if total > MaxSelectionRules {
			l.Errorf(fmt.Sprintf("spec.providers[%d].selectionRules", i), "brings the file's selection rules to %d; a capability file may list at most %d (every rule is evaluated for every model it could select)", total, MaxSelectionRules)
			return false
		}
	}
	return true
}

// checkVersion checks a provider's declared operator release and returns
// the release to render for: the declared one, or, when none is declared
// and the file does not require it, the newest supported one.
func checkVersion(b *Builtin, version string, required bool, at string, l *diag.List) string {
	if b.Versions == nil {
		if version != "" {
			l.Errorf(at, "must not be set: the %q provider runs no operator (pin its image with `images` instead)", b.Name)
		}
		return ""
	}
	if version == "" {
		if required {
			l.Errorf(at, "is required: `spec.requireVersions` is true, and the operator release of %q decides what is rendered (supported: %s)", b.Name, b.Versions)
			return ""
		}
		l.Warnf(diag.UnpinnedRelease, at, "is not set: rendering for %s %s, the newest release this renderer supports; declare the release the cluster runs (`version: %q`), or set `spec.requireVersions: true` to make it mandatory", b.Name, b.NewestVersion, b.NewestVersion)
		return b.NewestVersion
	}
	v, err := hub.ParseRelease(version)
	if err != nil {
		l.Errorf(at, "%v (supported %s releases: %s)", err, b.Name, b.Versions)
		return version
	}
	if !b.Versions.Contains(v) {
		l.Errorf(at, "%s %q is not supported: supported releases are %s", b.Name, version, b.Versions)
	}
	return version
}

func checkEngines(engines []hub.EngineCapability, at string, l *diag.List) {
	for i, e := range engines {
		eat := fmt.Sprintf("%s[%d]", at, i)
		if !slices.Contains(hub.Engines, e.Name) {
			l.Errorf(eat+".name", "%q is not supported: must be one of %s", e.Name, hub.QuoteList(hub.Engines))
		}
		for j, m := range e.ServingModes {
			if m != hub.ModeAggregated && m != hub.ModeDisaggregated {
				l.Errorf(fmt.Sprintf("%s.servingModes[%d]", eat, j), "%q is not supported: must be one of %q, %q", m, hub.ModeAggregated, hub.ModeDisaggregated)
			}
		}
		checkAPIFormats(e, eat+".apiFormats", l)
	}
}

// checkAPIFormats refuses a format the engine cannot serve (upstream's
// ValidateAPIFormatsForEngine, which upstream itself never calls) and a
// format named twice: the gateway would route clients to a server that
// answers 404.
func checkAPIFormats(e hub.EngineCapability, at string, l *diag.List) {
	for i, f := range e.APIFormats {
		fat := fmt.Sprintf("%s[%d]", at, i)
		if why := hub.CheckAPIFormat(e.Name, f); why != "" {
			l.Errorf(fat, "%s", why)
		} else if slices.Index(e.APIFormats, f) < i {
			l.Errorf(fat, "%q is listed twice", f)
		}
	}
}

// Gateway facts the renderer supports.
var (
	InferencePoolVersions = []string{"inference.networking.k8s.io/v1", "inference.networking.x-k8s.io/v1alpha2"}
	GatewayChannels       = []string{"standard", "experimental"}
	GatewayAPIVersions    = hub.MustVersionRange("1.0.0", "1.8.0")
)

func checkGateway(g *hub.GatewayCapability, l *diag.List) {
	if g == nil {
		return
	}
	if !slices.Contains(InferencePoolVersions, g.InferencePoolVersion) {
		l.Errorf("spec.gateway.inferencePoolVersion", "%q is not supported: must be one of %s", g.InferencePoolVersion, hub.QuoteList(InferencePoolVersions))
	}
	if v := g.InferenceExtensionVersion; v != "" {
		if _, err := hub.ParseRelease(v); err != nil {
			l.Errorf("spec.gateway.inferenceExtensionVersion", "%q is not a release: give the Inference Extension's bundle-version, e.g. \"v1.5.0\"", v)
		}
	}
	if g.Channel != "" && !slices.Contains(GatewayChannels, g.Channel) {
		l.Errorf("spec.gateway.channel", "%q is not supported: must be one of %s", g.Channel, hub.QuoteList(GatewayChannels))
	}
	if g.GatewayAPIVersion == "" {
		l.Errorf("spec.gateway.gatewayAPIVersion", "is required: the HTTPRoute fields rendered depend on the Gateway API release the cluster serves (%s)", GatewayAPIVersions)
	} else if v, err := hub.ParseRelease(g.GatewayAPIVersion); err != nil || !GatewayAPIVersions.Contains(v) {
		l.Errorf("spec.gateway.gatewayAPIVersion", "%q is not supported: supported Gateway API releases are %s", g.GatewayAPIVersion, GatewayAPIVersions)
	}
	if g.ParentRef == nil || g.ParentRef.Name == "" {
		l.Errorf("spec.gateway.parentRef.name", "is required: generated HTTPRoutes attach to this Gateway")
	}
}

// checkAutoscaling checks the cluster's autoscaling: something declared,
// the only metrics API is the custom one, a Prometheus address is a URL.
func checkAutoscaling(a *hub.AutoscalingCapability, l *diag.List) {
	if a == nil {
		return
	}
	if a.KEDA == nil && a.MetricsAPI == "" {
		l.Errorf("spec.autoscaling", "must declare `keda`, `metricsAPI` or both: what autoscales a model server in this cluster")
	}
	if a.MetricsAPI != "" && a.MetricsAPI != hub.MetricsAPICustom && a.MetricsAPI != hub.MetricsAPIExternal {
		l.Errorf("spec.autoscaling.metricsAPI", "%q is not supported: must be %q (a Prometheus adapter's Pods metrics) or %q (its External metrics)", a.MetricsAPI, hub.MetricsAPICustom, hub.MetricsAPIExternal)
	}
	if a.HPAScaleToZero && a.MetricsAPI != hub.MetricsAPIExternal {
		l.Errorf("spec.autoscaling.hpaScaleToZero", "needs `metricsAPI: %s`: the API server allows a HorizontalPodAutoscaler zero replicas only on Object or External metrics", hub.MetricsAPIExternal)
	}
	// KEDA without a Prometheus is a valid file (discover writes it: no
	// cluster says where Prometheus is); a model autoscaled through KEDA
	// is refused until the address is set.
	if p := a.Prometheus; p != nil {
		if u, err := url.Parse(p.ServerAddress); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			l.Errorf("spec.autoscaling.prometheus.serverAddress", "%q must be an http:// or https:// URL", p.ServerAddress)
		}
	}
}

var taintEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

func checkNodePools(pools []hub.NodePool, l *diag.List) {
	seen := map[string]bool{}
	for i, p := range pools {
		at := fmt.Sprintf("spec.nodePools[%d]", i)
		if p.Name == "" {
			l.Errorf(at+".name", "must be set")
		} else if msgs := utilvalidation.IsDNS1123Label(p.Name); len(msgs) > 0 {
			l.Errorf(at+".name", "%q is not a valid pool name: %s", p.Name, strings.Join(msgs, "; "))
		}
		if seen[p.Name] {
			l.Errorf(at+".name", "%q is listed twice; pool names must be unique", p.Name)
		}
		seen[p.Name] = true
		if len(p.Selector) == 0 {
			l.Errorf(at+".selector", "must name at least one node label: a pool without a selector would match every node")
		}
		for _, k := range slices.Sorted(maps.Keys(p.Selector)) {
			if msgs := utilvalidation.IsQualifiedName(k); len(msgs) > 0 {
				l.Errorf(at+".selector", "label key %q is invalid: %s", k, strings.Join(msgs, "; "))
			}
			if msgs := utilvalidation.IsValidLabelValue(p.Selector[k]); len(msgs) > 0 {
				l.Errorf(at+".selector."+k, "label value %q is invalid: %s", p.Selector[k], strings.Join(msgs, "; "))
			}
		}
		for j, t := range p.Taints {
			tat := fmt.Sprintf("%s.taints[%d]", at, j)
			if t.Key == "" {
				l.Errorf(tat+".key", "must be set")
			}
			if !slices.Contains(taintEffects, t.Effect) {
				l.Errorf(tat+".effect", "%q is not supported: must be one of %s", t.Effect, hub.QuoteList(taintEffects))
			}
		}
		if p.GPU != nil && p.GPU.PerNode < 0 {
			l.Errorf(at+".gpu.perNode", "must be greater than or equal to 0, got %d", p.GPU.PerNode)
		}
		checkPoolNodes(p.Nodes, at+".nodes", l)
		checkPrice(p.PricePerNodeHour, at+".pricePerNodeHour", l)
		if p.GPU != nil {
			checkDevices(&pools[i], at+".gpu", l)
		}
		if p.GPU != nil && p.GPU.MemoryMiB < 0 {
			l.Errorf(at+".gpu.memoryMiB", "must be greater than or equal to 0, got %d", p.GPU.MemoryMiB)
		}
		if c := p.Capacity; c != nil {
			for _, fv := range [][2]string{{"cpu", c.CPU}, {"memory", c.Memory}} {
				checkCapacity(at+".capacity."+fv[0], fv[1], l)
			}
		}
	}
}

// checkCapacity: a pool's capacity is a positive quantity, within
// hub.ParseQuantity's bounds.
func checkCapacity(field, value string, l *diag.List) {
	if value == "" {
		return
	}
	switch q, err := hub.ParseQuantity(value); {
	case err != nil && !errors.Is(err, hub.ErrNotAQuantity):
		l.Errorf(field, "%v", err)
	case err != nil || q.Sign() <= 0:
		l.Errorf(field, "%q must be a positive quantity", value)
	}
}

// checkPoolNodes: either `count`, or `max` with an optional `min`.
func checkPoolNodes(n *hub.PoolNodes, at string, l *diag.List) {
	if n == nil {
		return
	}
	switch {
	case n.Count != nil && (n.Min != nil || n.Max != nil):
		l.Errorf(at, "must set either `count` (a fixed pool) or `min` and `max` (an autoscaled pool), not both")
	case n.Count == nil && n.Max == nil:
		l.Errorf(at, "must set `count` (a fixed pool) or `max` (an autoscaled pool, with an optional `min`)")
	}
	for _, f := range []struct {
		name string
		v    *int32
	}{{"count", n.Count}, {"min", n.Min}, {"max", n.Max}} {
		if f.v != nil && (*f.v < 0 || *f.v > MaxPoolNodes) {
			l.Errorf(at+"."+f.name, "must be between 0 and %d, got %d", MaxPoolNodes, *f.v)
		}
	}
	if n.Min != nil && n.Max != nil && *n.Min > *n.Max {
		l.Errorf(at+".min", "must not be greater than `max` (%d), got %d", *n.Max, *n.Min)
	}
}

// MaxPricePerNodeHour bounds a node's hourly price, far above any GPU
// node's, so that a month of a thousand nodes stays exact in micro-units.
const MaxPricePerNodeHour = 100000

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

func checkPrice(p *hub.Price, at string, l *diag.List) {
	if p == nil {
		return
	}
	if math.IsNaN(p.Amount) || p.Amount < 0 || p.Amount > MaxPricePerNodeHour {
		l.Errorf(at+".amount", "must be a number between 0 and %d, got %v", MaxPricePerNodeHour, p.Amount)
	}
	if !currencyCode.MatchString(p.Currency) {
		l.Errorf(at+".currency", "%q is not an ISO 4217 currency code: must be three capital letters, e.g. \"USD\" or \"EUR\"", p.Currency)
	}
}

// checkCurrencies: the plan adds the pools' costs up, so every priced pool
// must use one currency.
func checkCurrencies(pools []hub.NodePool, l *diag.List) {
	first := -1
	for i, p := range pools {
		if p.PricePerNodeHour == nil || !currencyCode.MatchString(p.PricePerNodeHour.Currency) {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		if want := pools[first].PricePerNodeHour.Currency; p.PricePerNodeHour.Currency != want {
			l.Errorf(fmt.Sprintf("spec.nodePools[%d].pricePerNodeHour.currency", i), "%q differs from %q (pool %q): every pool's price must use one currency, so that costs add up", p.PricePerNodeHour.Currency, want, pools[first].Name)
		}
	}
}

// ResolveNode decodes and resolves a ClusterCapabilities object given as a
// YAML node. The Resolved value is nil whenever problems has an error.
func ResolveNode(node *kyaml.RNode) (*Resolved, diag.List) {
	js, l := manifest.ObjectJSON(node)
	if l.HasErrors() {
		return nil, l
	}
	c, l := versions.DecodeClusterCapabilities(apiVersionOf(js), js)
	if c == nil {
		return nil, l
	}
	r, rl := Resolve(c)
	if l = append(l, rl...); l.HasErrors() {
		return nil, l
	}
	return r, l
}

// nodeAutoProvisioners names the providers whose operator provisions
// nodes itself: `the "kaito" provider`.
func nodeAutoProvisioners() string {
	var names []string
	for _, b := range Builtins {
		if b.NodeAutoProvisioning {
			names = append(names, b.Name)
		}
	}
	if len(names) == 1 {
		return fmt.Sprintf("the %q provider", names[0])
	}
	return "the providers " + hub.QuoteList(names)
}
