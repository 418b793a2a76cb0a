package reporter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/providers"
)

// ClusterCapabilitiesGVK is the applied capability file the reporter holds
// against the live cluster.
var ClusterCapabilitiesGVK = schema.GroupVersionKind{Group: hub.Group, Version: v1.Version, Kind: hub.KindClusterCapabilities}

// The condition the reporter writes on a ClusterCapabilities and, while one
// is applied, on every ModelDeployment, and its reasons. It is not one of
// the conditions kstatus or the Argo CD health check read: drift is a
// warning, the model may still serve.
const (
	ConditionCapabilitiesCurrent = v1.ConditionCapabilitiesCurrent

	ReasonCapabilitiesCurrent = "CapabilitiesMatch"
	ReasonCapabilitiesDrifted = "CapabilitiesDrifted"
	ReasonCapabilitiesInvalid = "CapabilitiesInvalid"
	ReasonNodePoolChanged     = "NodePoolChanged"
	ReasonProviderChanged     = "ProviderChanged"
)

// driftDebounce gathers a burst of events (a node pool scaling, a chart
// upgrade) into one comparison.
const driftDebounce = 200 * time.Millisecond

var (
	capabilityDifferences = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "airunway_status_reporter_capabilities_differences",
		Help: "Declared facts of an applied ClusterCapabilities that the live cluster contradicts (0: the file is current).",
	}, []string{"clustercapabilities"})
	capabilityComparisons = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "airunway_status_reporter_capability_comparisons_total",
		Help: "Comparisons of the applied ClusterCapabilities with the cluster: one per change of a fact they read (a Node's labels, taints or allocatable, an operator Deployment's images or arguments, a CRD, a Gateway, a DeviceClass or ResourceSlice, a ClusterCapabilities), none while nothing changes.",
	})
	modelsDrifted = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "airunway_status_reporter_modeldeployments_capabilities_drifted",
		Help: "ModelDeployments whose node pool or provider no longer matches the applied ClusterCapabilities.",
	})
)

// CapabilitiesCheck is what the reporter found for one ModelDeployment's
// node pools and provider; nil in an Observation when no ClusterCapabilities
// is applied.
type CapabilitiesCheck struct {
	// Files names the applied ClusterCapabilities objects.
	Files []string
	// Pool and Provider list the differences of the model's node pools
	// and of its provider.
	Pool, Provider []string
}

// driftState is the last comparison's outcome, by pool and provider name.
type driftState struct {
	files            []string
	pools, providers map[string][]string
}

func (s driftState) check(annotations map[string]string) *CapabilitiesCheck {
	if len(s.files) == 0 {
		return nil
	}
	c := &CapabilitiesCheck{Files: s.files, Provider: s.providers[annotations[hub.AnnotationProvider]]}
	for _, pool := range modelPools(annotations[hub.AnnotationNodePool]) {
		c.Pool = append(c.Pool, s.pools[pool]...)
	}
	return c
}

// modelPools reads the node-pool annotation: "l4", or per component
// "prefill=h100,decode=l4".
func modelPools(annotation string) []string {
	var out []string
	for _, part := range strings.Split(annotation, ",") {
		if _, pool, ok := strings.Cut(part, "="); ok {
			part = pool
		}
		if part != "" && !slices.Contains(out, part) {
			out = append(out, part)
		}
	}
	return out
}

// drift compares every applied ClusterCapabilities with the live cluster
// (package discover's Compare) whenever a fact it reads of a Node, CRD,
// operator Deployment, Gateway, DeviceClass, ResourceSlice or
// ClusterCapabilities changes (and again
// an interval after a comparison that failed), writes the outcome to the ClusterCapabilities' status and hands it to
// the ModelDeployment reconciler.
type drift struct {
	cfg    *rest.Config
	kinds  *kinds
	writer client.Client
	models func(context.Context) (*unstructured.UnstructuredList, error)
	// enqueueAll asks for every ModelDeployment's reconcile.
	enqueueAll func(context.Context) error
	interval   time.Duration
	now        func() time.Time
	log        logr.Logger
	poked      chan struct{}
	// comparisons counts the comparisons run (the metric and the tests
	// read it).
	comparisons atomic.Int64
	// firstDone is closed once the first comparison has run: until then
	// the state says nothing, and reconciles wait (compared).
	firstDone chan struct{}
	firstOnce sync.Once

	mu    sync.RWMutex
	state driftState
}

// registerComparisons puts the comparisons counter on controller-runtime's
// registry, once per process.
var registerComparisons = sync.OnceFunc(func() { metrics.Registry.MustRegister(capabilityComparisons) })

func newDrift(cfg *rest.Config) *drift {
	registerComparisons()
	return &drift{cfg: cfg, poked: make(chan struct{}, 1), firstDone: make(chan struct{}), now: time.Now}
}

// compared reports whether the first comparison has run, whatever its
// outcome: a comparison that fails keeps the last state, and a cluster
// whose facts cannot be read must not hold every status back.
func (d *drift) compared() bool {
	select {
	case <-d.firstDone:
		return true
	default:
		return false
	}
}

// poke asks for a comparison soon; many pokes make one.
func (d *drift) poke() {
	select {
	case d.poked <- struct{}{}:
	default:
	}
}

// check returns what the last comparison found for a model.
func (d *drift) check(annotations map[string]string) *CapabilitiesCheck {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.state.check(annotations)
}

// Start implements manager.Runnable, on the leader only: it writes status.
func (d *drift) Start(ctx context.Context) error {
	c, err := d.startCache(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before the cache synced
		}
		return err
	}
	// The first comparison waits for the kinds' first pass: a
	// ClusterCapabilities read before the ResourceSlices are would find
	// every DRA pool without devices.
	select {
	case <-d.kinds.Synced():
	case <-ctx.Done():
		return nil
	}
	for {
		// A comparison runs when something it reads has changed (the
		// caches poke), never on a timer: an idle cluster costs nothing.
		// One that failed is retried after the interval.
		var retry <-chan time.Time
		if err := d.compare(ctx, c); err != nil && ctx.Err() == nil {
			d.log.Error(err, "comparing the ClusterCapabilities with the cluster")
			retry = time.After(d.interval)
		}
		d.firstOnce.Do(func() { close(d.firstDone) })
		select {
		case <-ctx.Done():
			return nil
		case <-retry:
		case <-d.poked:
			if !waitOrDone(ctx, driftDebounce) {
				return nil
			}
		}
	}
}

// waitOrDone waits for d, false if ctx ends first: a manager that is
// stopping must not wait out a debounce.
func waitOrDone(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (d *drift) NeedLeaderElection() bool { return true }

// crdGVK is read as metadata only: names and annotations.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// startCache watches Nodes, CRDs and Deployments in every namespace,
// keeping only what Compare reads (an operator's namespace is not the
// models'), and pokes on every change that matters.
func (d *drift) startCache(ctx context.Context) (cache.Cache, error) {
	crds := &metav1.PartialObjectMetadata{}
	crds.SetGroupVersionKind(crdGVK)
	c, err := cache.New(d.cfg, cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Node{}:       {Transform: trimNode},
		&appsv1.Deployment{}: {Transform: trimDeployment},
		crds:                 {Transform: trimCRD},
	}})
	if err != nil {
		return nil, err
	}
	for _, obj := range []client.Object{&corev1.Node{}, &appsv1.Deployment{}, crds} {
		inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { d.poke() },
			UpdateFunc: func(old, obj any) { pokeIfChanged(d, old, obj) },
			DeleteFunc: func(any) { d.poke() },
		}); err != nil {
			return nil, err
		}
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			d.log.Error(err, "the capabilities cache stopped")
		}
	}()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the cache of Nodes, CRDs and Deployments did not sync (is the reporter allowed to list and watch them?)")
	}
	return c, nil
}

// pokeIfChanged ignores updates that change nothing Compare reads (a
// node's heartbeat, a Deployment's status: the transforms dropped them,
// and the resourceVersion with them, which every update changes).
func pokeIfChanged(d *drift, old, obj any) {
	if !equality.Semantic.DeepEqual(old, obj) {
		d.poke()
	}
}

// trimNode keeps a Node's labels, taints and allocatable resources.
func trimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	return &corev1.Node{
		TypeMeta:   n.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels},
		Spec:       corev1.NodeSpec{Taints: n.Spec.Taints},
		Status:     corev1.NodeStatus{Allocatable: n.Status.Allocatable},
	}, nil
}

// trimDeployment keeps what gives an operator's release away: its labels,
// annotations, and its containers' images and arguments.
func trimDeployment(obj any) (any, error) {
	dep, ok := obj.(*appsv1.Deployment)
	if !ok {
		return obj, nil
	}
	annotations := dep.Annotations
	if _, ok := annotations[lastApplied]; ok {
		annotations = maps.Clone(annotations)
		delete(annotations, lastApplied)
	}
	out := &appsv1.Deployment{TypeMeta: dep.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Namespace: dep.Namespace, Name: dep.Name, Labels: dep.Labels, Annotations: annotations,
	}}
	for _, c := range dep.Spec.Template.Spec.Containers {
		out.Spec.Template.Spec.Containers = append(out.Spec.Template.Spec.Containers,
			corev1.Container{Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args})
	}
	return out, nil
}

// trimCRD keeps a CRD's name, labels and annotations: the kind it serves
// and the bundle it came from. A CRD's status and resourceVersion change
// with every condition its controller sets.
func trimCRD(obj any) (any, error) {
	crd, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: crd.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations,
	}}, nil
}

// snapshot reads the cluster as package discover sees it.
func (d *drift) snapshot(ctx context.Context, c cache.Cache) (*discover.Cluster, error) {
	cluster := &discover.Cluster{}
	nodes := &corev1.NodeList{}
	deployments := &appsv1.DeploymentList{}
	crds := &metav1.PartialObjectMetadataList{}
	crds.SetGroupVersionKind(crdGVK.GroupVersion().WithKind("CustomResourceDefinitionList"))
	for _, list := range []client.ObjectList{nodes, deployments, crds} {
		// Compare only reads: the cache's own objects, without a copy of
		// every Node and Deployment per comparison.
		if err := c.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
	}
	cluster.Nodes, cluster.Deployments, cluster.CRDs = nodes.Items, deployments.Items, crds.Items
	if err := d.snapshotDRA(ctx, cluster); err != nil {
		return nil, err
	}
	if gateways, ok := d.kinds.Reader(gatewayGVK); ok {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gatewayGVK.GroupVersion().WithKind("GatewayList"))
		if err := gateways.List(ctx, list); err != nil {
			return nil, err
		}
		for _, gw := range list.Items {
			cluster.Gateways = append(cluster.Gateways, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: gw.GetNamespace(), Name: gw.GetName()}})
		}
	}
	return cluster, nil
}

// compare holds every applied ClusterCapabilities against the cluster,
// writes each one's status when it changed, and hands the outcome to the
// ModelDeployments when it changed.
func (d *drift) compare(ctx context.Context, c cache.Cache) error {
	d.comparisons.Add(1)
	capabilityComparisons.Inc()
	files := &unstructured.UnstructuredList{}
	if r, ok := d.kinds.Reader(ClusterCapabilitiesGVK); ok {
		files.SetGroupVersionKind(ClusterCapabilitiesGVK.GroupVersion().WithKind(hub.KindClusterCapabilities + "List"))
		if err := r.List(ctx, files); err != nil {
			return err
		}
	}
	cluster, err := d.snapshot(ctx, c)
	if err != nil {
		return err
	}
	state := driftState{pools: map[string][]string{}, providers: map[string][]string{}}
	var errs []error
	capabilityDifferences.Reset()
	for i := range files.Items {
		file := &files.Items[i]
		state.files = append(state.files, file.GetName())
		diffs, invalid := compareFile(file, cluster)
		for _, df := range diffs {
			if df.Pool != "" {
				state.pools[df.Pool] = append(state.pools[df.Pool], df.Message)
			}
			if df.Provider != "" {
				state.providers[df.Provider] = append(state.providers[df.Provider], df.Message)
			}
		}
		capabilityDifferences.WithLabelValues(file.GetName()).Set(float64(len(diffs)))
		// A status that cannot be written (RBAC, a conflict) does not keep
		// the models from their warning; the write is retried next time.
		if err := d.writeStatus(ctx, file, CapabilitiesStatus(file.GetGeneration(), diffs, invalid, capabilitiesStatusOf(file), d.now())); err != nil {
			errs = append(errs, err)
		}
	}
	slices.Sort(state.files)
	d.mu.Lock()
	changed := !reflect.DeepEqual(d.state, state)
	d.state = state
	d.mu.Unlock()
	if changed {
		errs = append(errs, d.enqueueAll(ctx))
	}
	return errors.Join(append(errs, d.countDrifted(ctx, state))...)
}

// compareFile decodes an applied ClusterCapabilities as the renderer
// would read the file and compares it with the cluster; invalid says why
// it cannot be read.
func compareFile(file *unstructured.Unstructured, cluster *discover.Cluster) (diffs []discover.Difference, invalid string) {
	// The file's size limits are for what a person wrote: leave out what
	// the server adds (the status this reporter writes, managedFields).
	obj := maps.Clone(file.Object)
	delete(obj, "status")
	if m, ok := obj["metadata"].(map[string]any); ok {
		m = maps.Clone(m)
		delete(m, "managedFields")
		obj["metadata"] = m
	}
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, err.Error()
	}
	// The cache reads v1alpha1, the API server converting any other version.
	caps, problems := v1.CapabilitiesToHub(js)
	if problems.HasErrors() {
		var errs []string
		for _, p := range problems.Errors().Sorted() {
			errs = append(errs, p.String())
		}
		return nil, strings.Join(errs, "; ")
	}
	return discover.Compare(caps, cluster), ""
}

// CapabilitiesStatus is the status of an applied ClusterCapabilities: the
// CapabilitiesCurrent condition and the differences. It is pure; a
// condition keeps its transition time while its status stays.
func CapabilitiesStatus(generation int64, diffs []discover.Difference, invalid string, previous *v1.ClusterCapabilitiesStatus, now time.Time) v1.ClusterCapabilitiesStatus {
	s := v1.ClusterCapabilitiesStatus{ObservedGeneration: generation}
	cond := metav1.Condition{Type: ConditionCapabilitiesCurrent, ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now.UTC().Truncate(time.Second))}
	switch {
	case invalid != "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, ReasonCapabilitiesInvalid, "the renderer would refuse this capability file: "+invalid
	case len(diffs) == 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonCapabilitiesCurrent, "the cluster matches every declared fact"
	default:
		var messages []string
		for _, df := range diffs {
			s.Differences = append(s.Differences, v1.CapabilityDifference{
				Field: df.Field, Declared: providers.Truncate(df.Declared, 1024), Live: providers.Truncate(df.Live, 1024), Message: providers.Truncate(df.Message, 2048)})
			messages = append(messages, df.Message)
		}
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonCapabilitiesDrifted
		cond.Message = fmt.Sprintf("%d declared fact(s) differ from the cluster: %s", len(diffs), strings.Join(messages, "; "))
	}
	cond.Message = providers.Truncate(cond.Message, providers.MaxMessageBytes)
	if previous != nil {
		if prev := meta.FindStatusCondition(previous.Conditions, cond.Type); prev != nil && prev.Status == cond.Status {
			cond.LastTransitionTime = prev.LastTransitionTime
		}
	}
	s.Conditions = []metav1.Condition{cond}
	return s
}

// capabilitiesStatusOf reads an applied file's status; nil when it has none or
// it does not decode.
func capabilitiesStatusOf(file *unstructured.Unstructured) *v1.ClusterCapabilitiesStatus {
	raw, ok := file.Object["status"]
	if !ok {
		return nil
	}
	s := &v1.ClusterCapabilitiesStatus{}
	if err := convert(raw, s); err != nil {
		return nil
	}
	return s
}

// writeStatus applies the status unless the object has it already.
func (d *drift) writeStatus(ctx context.Context, file *unstructured.Unstructured, status v1.ClusterCapabilitiesStatus) error {
	if prev := capabilitiesStatusOf(file); prev != nil && equality.Semantic.DeepEqual(*prev, status) {
		return nil
	}
	return applyStatus(ctx, d.writer, ClusterCapabilitiesGVK, client.ObjectKeyFromObject(file), "", status)
}

// countDrifted sets the gauge of ModelDeployments with a difference.
func (d *drift) countDrifted(ctx context.Context, state driftState) error {
	if len(state.files) == 0 {
		modelsDrifted.Set(0)
		return nil
	}
	models, err := d.models(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, md := range models.Items {
		if c := state.check(md.GetAnnotations()); c != nil && len(c.Pool)+len(c.Provider) > 0 {
			n++
		}
	}
	modelsDrifted.Set(float64(n))
	return nil
}
