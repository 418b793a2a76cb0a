package reporter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airunway-render/airunway-render/providers/builtin"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// Options configure the reporter's manager; zero values take the defaults
// documented on each field.
type Options struct {
	// Namespaces limits the ModelDeployments and rendered objects watched;
	// empty means every namespace. Gateways are read in every namespace.
	Namespaces []string
	// MetricsAddr serves /metrics ("0" disables it); ProbeAddr serves
	// /healthz and /readyz ("0" disables them).
	MetricsAddr, ProbeAddr string
	// LeaderElection makes replicas elect one writer through a Lease named
	// LeaderElectionID in LeaderElectionNamespace (default: the pod's).
	LeaderElection          bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod tune the election
	// (controller-runtime's defaults: 15s, 10s, 2s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// DiscoveryInterval is how often the served provider kinds are
	// re-checked (default 30s).
	DiscoveryInterval time.Duration
	// StaleAfter is how long a not-ready object may go unwritten before
	// its status is Unknown (default 5m).
	StaleAfter time.Duration
	// SyncPeriod re-reconciles every ModelDeployment this often (default
	// 10m); a resync that changes nothing writes nothing.
	SyncPeriod time.Duration
	// ReconcileTimeout bounds one ModelDeployment's reconcile, its API
	// requests included (default 30s), so an API server that accepts a
	// request and never answers cannot stall the reporter: the reconcile
	// fails and is retried like any other failure.
	ReconcileTimeout time.Duration
	// Workers is how many ModelDeployments are reconciled at once (default
	// 4): a burst of provider changes is written this many at a time
	// instead of one status PATCH round trip after another.
	Workers int
	// Conversion configures the ModelDeployment conversion webhook; its
	// zero value serves none.
	Conversion ConversionOptions
	Logger     logr.Logger
}

// Defaults of the Options (and the command's flags).
const (
	// DefaultLeaderElectionID names the Lease the replicas share.
	DefaultLeaderElectionID  = "airunway-status-reporter"
	DefaultDiscoveryInterval = 30 * time.Second
	DefaultSyncPeriod        = 10 * time.Minute
	DefaultReconcileTimeout  = 30 * time.Second
	DefaultWorkers           = 4
)

// A failed reconcile (an API error, a conflict, a timeout) is retried
// after RetryBaseDelay, doubling per consecutive failure of the same
// ModelDeployment up to RetryMaxDelay; a success resets it. All
// ModelDeployments together retry at most 10 times a second (bursts of
// 100), so an API server in trouble is not hammered.
const (
	RetryBaseDelay = 100 * time.Millisecond
	RetryMaxDelay  = 2 * time.Minute
)

var (
	statusWrites = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "airunway_status_reporter_status_writes_total",
		Help: "Status subresource writes of ModelDeployments by the status reporter.",
	})
	goneWrites = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "airunway_status_reporter_deleted_before_write_total",
		Help: "Status writes dropped because the ModelDeployment was deleted after the reporter read it (not an error).",
	})
)

// registerMetrics puts the counters on controller-runtime's registry, once
// per process however many reporters it starts (the tests start several);
// in New rather than init, so importing the package registers nothing.
var registerMetrics = sync.OnceFunc(func() {
	metrics.Registry.MustRegister(statusWrites, goneWrites, capabilityDifferences, modelsDrifted)
})

// Reporter is a configured manager plus the counters tests read.
type Reporter struct {
	manager.Manager
	writes, reconciles, failures, gone atomic.Int64
}

// Gone is how many status writes found their ModelDeployment deleted.
func (r *Reporter) Gone() int64 { return r.gone.Load() }

// Failures is how many reconciles returned an error.
func (r *Reporter) Failures() int64 { return r.failures.Load() }

// Writes is how many status writes this reporter made.
func (r *Reporter) Writes() int64 { return r.writes.Load() }

// Reconciles is how many ModelDeployments this reporter has examined.
func (r *Reporter) Reconciles() int64 { return r.reconciles.Load() }

// New builds the manager: a controller for ModelDeployments, fed by the
// caches of the provider kinds the cluster serves, with /metrics,
// /healthz and /readyz.
func New(cfg *rest.Config, o Options) (*Reporter, error) {
	registerMetrics()
	o = withDefaults(o)
	mgr, err := ctrl.NewManager(cfg, managerOptions(o))
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	rep := &Reporter{Manager: mgr}
	// Provider events, drift and discovery ask for reconciles through
	// this channel; the controller reads it as a source.
	events := make(chan event.GenericEvent, 4096)
	d := newDrift(cfg)
	k, err := newKinds(cfg, o, mgr, d, events)
	if err != nil {
		return nil, err
	}
	if err := addDrift(mgr, o, d, k); err != nil {
		return nil, err
	}
	if err := addController(mgr, o, newReconciler(mgr, o, rep, k, d), events); err != nil {
		return nil, err
	}
	if o.Conversion.Addr != "" {
		if err := addConversionWebhook(mgr, o.Conversion, o.Logger.WithName("conversion")); err != nil {
			return nil, err
		}
	}
	if err := addChecks(mgr); err != nil {
		return nil, err
	}
	return rep, nil
}

// newKinds builds and registers the watcher of the provider kinds: it
// pokes the drift comparison and enqueues models through events.
func newKinds(cfg *rest.Config, o Options, mgr manager.Manager, d *drift, events chan<- event.GenericEvent) (*kinds, error) {
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	k := &kinds{
		changed: d.poke,
		cfg:     cfg, disco: disco, namespaces: o.Namespaces, interval: o.DiscoveryInterval,
		wanted: wantedKinds(), log: o.Logger.WithName("kinds"),
		active: map[schema.GroupVersionKind]*kindCache{}, synced: make(chan struct{}),
		failed: map[schema.GroupVersionKind]error{}, misses: map[schema.GroupVersionKind]int{},
		enqueue: func(ctx context.Context, key types.NamespacedName) {
			obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
			select {
			case events <- event.GenericEvent{Object: obj}:
			case <-ctx.Done():
			}
		},
		lister: mgr.GetAPIReader(),
	}
	k.enqueueAll = func(ctx context.Context) error {
		list, err := listModels(ctx, mgr)
		if err != nil {
			return err
		}
		for i := range list.Items {
			k.enqueue(ctx, client.ObjectKeyFromObject(&list.Items[i]))
		}
		return nil
	}
	return k, mgr.Add(k)
}

// listModels lists the ModelDeployments in the manager's cache.
func listModels(ctx context.Context, mgr manager.Manager) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(ModelDeploymentGVK.GroupVersion().WithKind(ModelDeploymentGVK.Kind + "List"))
	return list, mgr.GetCache().List(ctx, list)
}

// addDrift wires the ClusterCapabilities comparison to the kinds it reads
// and registers it (it runs on the leader only).
func addDrift(mgr manager.Manager, o Options, d *drift, k *kinds) error {
	d.kinds, d.writer, d.enqueueAll = k, mgr.GetClient(), k.enqueueAll
	d.models = func(ctx context.Context) (*unstructured.UnstructuredList, error) { return listModels(ctx, mgr) }
	d.interval, d.log = o.DiscoveryInterval, o.Logger.WithName("capabilities")
	return mgr.Add(d)
}

// newReconciler is the ModelDeployment reconciler, counting into rep and
// the metrics.
func newReconciler(mgr manager.Manager, o Options, rep *Reporter, k *kinds, d *drift) *reconciler {
	return &reconciler{
		client: mgr.GetClient(), live: mgr.GetAPIReader(), kinds: k, drift: d, reporters: reporters(), staleAfter: o.StaleAfter, now: time.Now, writeTimeout: o.ReconcileTimeout,
		wrote:      func() { statusWrites.Inc(); rep.writes.Add(1) },
		reconciled: func() { rep.reconciles.Add(1) },
		failed:     func() { rep.failures.Add(1) },
		gone:       func() { goneWrites.Inc(); rep.gone.Add(1) },
	}
}

// addController registers the controller: ModelDeployment events and the
// requests sent through events, o.Workers at a time.
func addController(mgr manager.Manager, o Options, r *reconciler, events <-chan event.GenericEvent) error {
	md := &unstructured.Unstructured{}
	md.SetGroupVersionKind(ModelDeploymentGVK)
	// Registered now, so the cache syncs on standbys too: /readyz means
	// something, enqueueAll can list, and a new leader starts warm.
	if _, err := mgr.GetCache().GetInformer(context.Background(), md, cache.BlockUntilSynced(false)); err != nil {
		return fmt.Errorf("watching ModelDeployments (is the CRD installed?): %w", err)
	}
	return builder.ControllerManagedBy(mgr).
		Named("modeldeployment-status").
		For(md).
		WatchesRawSource(source.Channel(events, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{
			RateLimiter:             retryLimiter(),
			ReconciliationTimeout:   o.ReconcileTimeout,
			MaxConcurrentReconciles: o.Workers,
		}).
		Complete(r)
}

// addChecks registers /healthz and /readyz.
func addChecks(mgr manager.Manager) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("cache", cacheSynced(mgr.GetCache()))
}

// retryLimiter spaces the retries of failed reconciles as RetryBaseDelay
// and RetryMaxDelay say. controller-runtime's default limiter contributes
// the overall 10 per second; its own per-item backoff (5ms doubling up
// to 1000s) is always the shorter until RetryMaxDelay caps both.
func retryLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedWithMaxWaitRateLimiter(workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](RetryBaseDelay, RetryMaxDelay),
		workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
	), RetryMaxDelay)
}

func withDefaults(o Options) Options {
	if o.LeaderElectionID == "" {
		o.LeaderElectionID = DefaultLeaderElectionID
	}
	if o.DiscoveryInterval <= 0 {
		o.DiscoveryInterval = DefaultDiscoveryInterval
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = StaleAfter
	}
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = DefaultSyncPeriod
	}
	if o.ReconcileTimeout <= 0 {
		o.ReconcileTimeout = DefaultReconcileTimeout
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o
}

func managerOptions(o Options) manager.Options {
	mo := manager.Options{
		Logger: o.Logger,
		// Reads of ModelDeployments go to the cache, not the API server.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Cache: cache.Options{
			DefaultNamespaces: namespaceConfig(o.Namespaces),
			SyncPeriod:        &o.SyncPeriod,
			// Only ModelDeployments live in this cache; provider kinds have
			// their own (kinds.go), so a read of anything else is a bug
			// and must not start an informer behind our back.
			ReaderFailOnMissingInformer: true,
			// Without managed field sets and the last-applied copy, which
			// weigh more than the rest of a model (trim.go).
			DefaultTransform: trimModel,
		},
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:        o.ProbeAddr,
		LeaderElection:                o.LeaderElection,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		// One controller per process in production; tests run several
		// managers in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if o.LeaseDuration > 0 {
		mo.LeaseDuration = &o.LeaseDuration
	}
	if o.RenewDeadline > 0 {
		mo.RenewDeadline = &o.RenewDeadline
	}
	if o.RetryPeriod > 0 {
		mo.RetryPeriod = &o.RetryPeriod
	}
	return mo
}

// wantedKinds are the primary kinds of every built-in provider, plus the
// HTTPRoutes the gateway renders, the Gateways they attach to, the
// applied ClusterCapabilities, and the DRA DeviceClasses and
// ResourceSlices they are compared with.
func wantedKinds() []watchedKind {
	var out []watchedKind
	seen := map[schema.GroupVersionKind]bool{}
	all := reporters()
	for _, name := range slices.Sorted(maps.Keys(all)) {
		for _, gvk := range primaryKinds(all[name]) {
			if !seen[gvk] {
				seen[gvk] = true
				out = append(out, watchedKind{gvk: gvk, owners: generatedFrom})
			}
		}
	}
	out = append(out,
		watchedKind{gvk: routeGVK, owners: generatedFrom},
		watchedKind{gvk: gatewayGVK, everything: true, owners: func(k *kinds, gw *unstructured.Unstructured) []types.NamespacedName {
			k.changed() // a parent Gateway may have come or gone
			return gatewayOwners(k, gw)
		}},
		watchedKind{gvk: ClusterCapabilitiesGVK, everything: true, owners: func(k *kinds, _ *unstructured.Unstructured) []types.NamespacedName {
			k.changed()
			return nil // the comparison enqueues the models it concerns
		}})
	out = append(out, draKinds()...)
	slices.SortFunc(out, func(a, b watchedKind) int { return strings.Compare(a.gvk.String(), b.gvk.String()) })
	return out
}

// primaryKinds are the kinds a provider's primary object may be: its one
// kind, whatever the ModelDeployment (only the name depends on it), or
// those it lists where the renderer records which (providers.PrimaryKinds).
func primaryKinds(rep providers.Reporter) []schema.GroupVersionKind {
	if k, ok := rep.(providers.PrimaryKinds); ok {
		return k.PrimaryKinds()
	}
	return []schema.GroupVersionKind{rep.Primary(&hub.ModelDeployment{}).GVK}
}

// reporters are the built-in providers' status translations by name.
func reporters() map[string]providers.Reporter {
	out := map[string]providers.Reporter{}
	for name, p := range builtin.ByName() {
		if rep, ok := p.(providers.Reporter); ok {
			out[name] = rep
		}
	}
	return out
}

// cacheSynced is ready once the ModelDeployment cache has synced, on every
// replica (standbys too, so a rolling update is not held up by leadership).
func cacheSynced(c cache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the ModelDeployment cache has not synced")
		}
		return nil
	}
}
