package reporter

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
)

// watchedKind is a kind the reporter reads when the cluster serves it.
type watchedKind struct {
	gvk schema.GroupVersionKind
	// everything watches all objects of the kind in every namespace
	// (Gateways, which the renderer does not write); otherwise only the
	// objects labelled as rendered by airunway, in the reporter's scope.
	everything bool
	// quiet kinds make no event of an update that leaves the trimmed
	// object as it was (a ResourceSlice republished with a new pool
	// generation and the same devices).
	quiet bool
	// owners maps an object to the ModelDeployments whose status it feeds.
	owners func(k *kinds, obj *unstructured.Unstructured) []types.NamespacedName
}

// kinds keeps one informer cache per watched kind the cluster serves. It
// asks discovery every interval, so a provider CRD installed or removed
// after start is picked up without a restart; a discovery error (the API
// server restarting) changes nothing.
type kinds struct {
	cfg        *rest.Config
	disco      discovery.DiscoveryInterface
	namespaces []string
	interval   time.Duration
	wanted     []watchedKind
	// enqueue asks for one ModelDeployment's reconcile, enqueueAll for
	// every one's (when a kind appears or disappears).
	enqueue    func(context.Context, types.NamespacedName)
	enqueueAll func(context.Context) error
	// changed asks for the ClusterCapabilities to be compared again (a
	// Gateway or a ClusterCapabilities changed).
	changed func()
	log     logr.Logger

	mu     sync.RWMutex
	active map[schema.GroupVersionKind]*kindCache
	// failed holds why a served kind cannot be watched (e.g. RBAC).
	failed map[schema.GroupVersionKind]error
	// misses counts consecutive passes that did not find an active kind;
	// one miss right after an API server restart proves nothing.
	misses   map[schema.GroupVersionKind]int
	synced   chan struct{}
	syncOnce sync.Once
	// lister (the manager's uncached reader) checks a kind can be listed
	// before its cache starts, so a forbidden kind fails at once instead
	// of after a sync timeout.
	lister client.Reader
}

// missesToStop is how many discovery passes in a row must miss a watched
// kind before its cache stops.
const missesToStop = 2

type kindCache struct {
	cache  cache.Cache
	cancel context.CancelFunc
}

// managedSelector picks the objects the renderer wrote: every generated
// object carries this label, which keeps unrelated Deployments out of memory.
var managedSelector = labels.SelectorFromSet(labels.Set{hub.LabelManagedBy: hub.ManagedByValue})

// Start implements manager.Runnable; it runs only on the elected leader,
// because the caches exist to feed the controller.
func (k *kinds) Start(ctx context.Context) error {
	defer k.stopAll()
	ticker := time.NewTicker(k.interval)
	defer ticker.Stop()
	for {
		if k.check(ctx) {
			k.syncOnce.Do(func() { close(k.synced) })
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Synced is closed once the first discovery pass has started a cache for
// every served kind; before that a missing reader does not mean a missing
// CRD.
func (k *kinds) Synced() <-chan struct{} { return k.synced }

// WatchError says why a served kind cannot be watched; nil if it can or
// is not served.
func (k *kinds) WatchError(gvk schema.GroupVersionKind) error {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.failed[gvk]
}

// Reader returns the cache of a served kind.
func (k *kinds) Reader(gvk schema.GroupVersionKind) (client.Reader, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	c, ok := k.active[gvk]
	if !ok {
		return nil, false
	}
	return c.cache, true
}

// check runs one discovery pass and reports whether discovery answered.
func (k *kinds) check(ctx context.Context) bool {
	served, err := k.served()
	if err != nil {
		k.log.Error(err, "discovery failed; keeping the watched kinds as they are")
		return false
	}
	changed := false
	for _, s := range k.startCaches(ctx, served) {
		gvk := s.kind.gvk
		changed = k.setFailed(gvk, s.err) || changed
		if s.err != nil {
			k.log.Error(s.err, "cannot watch kind", "kind", gvk.String())
			continue
		}
		k.log.Info("watching kind", "kind", gvk.String())
		changed = true
	}
	for _, w := range k.wanted {
		_, active := k.Reader(w.gvk)
		switch {
		case served[w.gvk] && active:
			k.misses[w.gvk] = 0
		case served[w.gvk]:
			// Its start failed above, and setFailed said why.
		case active:
			if k.misses[w.gvk]++; k.misses[w.gvk] < missesToStop {
				continue
			}
			k.stop(w.gvk)
			k.log.Info("kind no longer served; stopped watching", "kind", w.gvk.String())
			changed = true
		default:
			changed = k.setFailed(w.gvk, nil) || changed
		}
	}
	if changed {
		// A kind started or stopped (the ClusterCapabilities CRD removed,
		// say) sends no object event the comparison would hear of.
		k.changed()
		if err := k.enqueueAll(ctx); err != nil {
			k.log.Error(err, "cannot list ModelDeployments to re-check")
		}
	}
	return true
}

// startedCache is the outcome of starting one kind's cache.
type startedCache struct {
	kind watchedKind
	err  error
}

// startCaches starts the caches of the wanted kinds that are served and
// not watched yet, all at once, and returns each one's outcome in the
// wanted order. Started one after another, each waiting for its list,
// they held back a first start's writes by about 5 s at 3,000 models
// (BENCHMARKS.md, "Against the API server's ceiling").
func (k *kinds) startCaches(ctx context.Context, served map[schema.GroupVersionKind]bool) []startedCache {
	var out []startedCache
	for _, w := range k.wanted {
		if _, active := k.Reader(w.gvk); served[w.gvk] && !active {
			out = append(out, startedCache{kind: w})
		}
	}
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() { out[i].err = k.startCache(ctx, out[i].kind) })
	}
	wg.Wait()
	return out
}

// setFailed records why a kind cannot be watched and reports whether that
// changed what the models' status should say.
func (k *kinds) setFailed(gvk schema.GroupVersionKind, err error) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	prev, had := k.failed[gvk]
	if err == nil {
		delete(k.failed, gvk)
		return had
	}
	k.failed[gvk] = err
	return !had || prev.Error() != err.Error()
}

// served asks discovery, one request per group-version, which wanted kinds
// the cluster serves. A group-version that is not found is not served;
// any other error fails the whole pass.
func (k *kinds) served() (map[schema.GroupVersionKind]bool, error) {
	out := map[schema.GroupVersionKind]bool{}
	var versions []schema.GroupVersion
	for _, w := range k.wanted {
		if gv := w.gvk.GroupVersion(); !slices.Contains(versions, gv) {
			versions = append(versions, gv)
		}
	}
	for _, gv := range versions {
		list, err := k.disco.ServerResourcesForGroupVersion(gv.String())
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("discovery of %s: %w", gv, err)
		}
		for _, r := range list.APIResources {
			out[gv.WithKind(r.Kind)] = true
		}
	}
	return out, nil
}

// startCache starts an informer for one kind and waits for it to sync, so
// a reconcile never reads a half-filled cache.
func (k *kinds) startCache(ctx context.Context, w watchedKind) error {
	opts := cache.Options{DefaultTransform: transformFor(w.gvk)}
	probe := &unstructured.UnstructuredList{}
	probe.SetGroupVersionKind(w.gvk.GroupVersion().WithKind(w.gvk.Kind + "List"))
	listOpts := []client.ListOption{client.Limit(1)}
	if !w.everything {
		opts.DefaultLabelSelector = managedSelector
		opts.DefaultNamespaces = namespaceConfig(k.namespaces)
		listOpts = append(listOpts, client.MatchingLabelsSelector{Selector: managedSelector})
		if len(k.namespaces) > 0 {
			listOpts = append(listOpts, client.InNamespace(k.namespaces[0]))
		}
	}
	if err := k.lister.List(ctx, probe, listOpts...); err != nil {
		return fmt.Errorf("cannot list %s: %w", w.gvk, err)
	}
	c, err := cache.New(k.cfg, opts)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(w.gvk)
	inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	notify := func(objs ...any) {
		for _, key := range eventOwners(k, w, objs...) {
			k.enqueue(ctx, key)
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { notify(obj) },
		UpdateFunc: func(old, obj any) {
			if w.quiet && equality.Semantic.DeepEqual(old, obj) {
				return
			}
			notify(old, obj)
		},
		DeleteFunc: func(obj any) { notify(obj) },
	}); err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		if err := c.Start(cctx); err != nil {
			k.log.Error(err, "cache stopped", "kind", w.gvk.String())
		}
	}()
	syncCtx, done := context.WithTimeout(ctx, 2*time.Minute)
	defer done()
	if !c.WaitForCacheSync(syncCtx) {
		cancel()
		return fmt.Errorf("the cache of %s did not sync (is the reporter allowed to list and watch it?)", w.gvk)
	}
	k.mu.Lock()
	k.active[w.gvk] = &kindCache{cache: c, cancel: cancel}
	k.mu.Unlock()
	return nil
}

func (k *kinds) stop(gvk schema.GroupVersionKind) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c, ok := k.active[gvk]; ok {
		c.cancel()
		delete(k.active, gvk)
	}
	delete(k.misses, gvk)
}

func (k *kinds) stopAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for gvk, c := range k.active {
		c.cancel()
		delete(k.active, gvk)
	}
}

// namespaceConfig turns the reporter's scope into cache options; no
// namespaces means all of them.
func namespaceConfig(namespaces []string) map[string]cache.Config {
	if len(namespaces) == 0 {
		return nil
	}
	out := map[string]cache.Config{}
	for _, ns := range namespaces {
		out[ns] = cache.Config{}
	}
	return out
}

// generatedFrom maps a rendered object to the ModelDeployment it was
// rendered from, by the annotation every generated object carries.
func generatedFrom(_ *kinds, obj *unstructured.Unstructured) []types.NamespacedName {
	name := obj.GetAnnotations()[hub.AnnotationGeneratedFrom]
	if name == "" {
		return nil
	}
	return []types.NamespacedName{{Namespace: obj.GetNamespace(), Name: name}}
}

// eventOwners lists, once each, the ModelDeployments that one event's
// objects (an update's old and new object) feed. Once matters: a key
// enqueued a second time while its first reconcile runs is reconciled
// again as soon as that one ends, so a failed status write would be
// retried at once instead of after RetryBaseDelay.
func eventOwners(k *kinds, w watchedKind, objs ...any) []types.NamespacedName {
	var keys []types.NamespacedName
	seen := map[types.NamespacedName]bool{}
	for _, o := range objs {
		if tomb, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = tomb.Obj
		}
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		for _, key := range w.owners(k, u) {
			if !seen[key] {
				seen[key] = true
				keys = append(keys, key)
			}
		}
	}
	return keys
}
