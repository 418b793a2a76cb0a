package reporter

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/internal/termsafe"
	"github.com/airunway-render/airunway-render/providers"
)

// FieldManager is the server-side apply field manager of every status write.
const FieldManager = "airunway-status-reporter"

// ModelDeploymentGVK is the kind whose status the reporter writes.
var ModelDeploymentGVK = schema.GroupVersionKind{Group: hub.Group, Version: v1.Version, Kind: hub.KindModelDeployment}

// reconciler computes one ModelDeployment's status and applies it when it
// differs from what the object has.
type reconciler struct {
	client client.Client
	// live reads from the API server, not the cache: the last check
	// before a write (see confirm).
	live       client.Reader
	kinds      *kinds
	drift      *drift
	reporters  map[string]providers.Reporter
	staleAfter time.Duration
	now        func() time.Time
	// writeTimeout bounds a status write, which is not cancelled with the
	// reconcile (see apply).
	writeTimeout time.Duration
	// recent holds the statuses written that the cache has not shown yet.
	recent recentWrites
	// wrote, reconciled, failed and gone count (the metrics and the tests
	// read them).
	wrote, reconciled, failed, gone func()
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if !r.ready(ctx) {
		return ctrl.Result{RequeueAfter: notReadyRetry}, nil
	}
	res, err := r.reconcile(ctx, req)
	if err != nil {
		r.failed()
	} else {
		r.reconciled()
	}
	return res, err
}

// notReadyRetry is how long a reconcile waits for the first discovery pass
// and the first comparison (ready), and how long after it comes back when
// they have not happened by then.
const notReadyRetry = time.Second

// ready waits, up to notReadyRetry, for what every status needs: the first
// discovery pass (until it answers, an unwatched kind proves nothing) and
// the first comparison with the applied ClusterCapabilities (until it has
// run, a status written would lack CapabilitiesCurrent, and the condition
// would come back later with a new transition time: a newly elected leader
// would flap it on every model). The wait is in the reconcile, not a
// requeue, so the models queued at a start are written the moment both
// are done, not up to a requeue's second later (a model met between the
// end of the discovery pass and the end of the comparison would be).
func (r *reconciler) ready(ctx context.Context) bool {
	var compared <-chan struct{}
	if r.drift != nil {
		compared = r.drift.firstDone
	}
	if isClosed(r.kinds.Synced()) && (compared == nil || isClosed(compared)) {
		return true
	}
	timer := time.NewTimer(notReadyRetry)
	defer timer.Stop()
	for _, ch := range []<-chan struct{}{r.kinds.Synced(), compared} {
		if ch == nil {
			continue
		}
		select {
		case <-ch:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (r *reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	md := &unstructured.Unstructured{}
	md.SetGroupVersionKind(ModelDeploymentGVK)
	if err := r.client.Get(ctx, req.NamespacedName, md); err != nil {
		if apierrors.IsNotFound(err) {
			r.recent.take(req.NamespacedName, "") // deleted: forget its write
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	provider := md.GetAnnotations()[hub.AnnotationProvider]
	if provider == "" {
		// Not rendered by airunway-render (or by a controller that writes
		// its own status): not ours to report on.
		return ctrl.Result{}, nil
	}
	o, err := r.observe(ctx, md, provider)
	if err != nil {
		return ctrl.Result{}, err
	}
	if written, ok := r.recent.take(req.NamespacedName, md.GetResourceVersion()); ok {
		o.Previous = &written
	}
	status := Compute(o)
	write := o.Previous == nil || !equality.Semantic.DeepEqual(ours(*o.Previous), status)
	if write {
		status, write, err = r.write(ctx, md, o, status)
	}
	switch {
	case apierrors.IsNotFound(err):
		// Deleted since it was read: nothing is left to report on, and a
		// write to the status subresource never creates the object. Not a
		// failure, and nothing to retry.
		r.gone()
		log.FromContext(ctx).Info("ModelDeployment deleted before its status was written; nothing to do")
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	case write:
		r.recent.put(req.NamespacedName, md.GetResourceVersion(), status)
		if status.Conditions[0].Reason == ReasonUnreadable {
			// The message quotes the provider object's status, which
			// whoever may write it wrote: escaped for the log.
			log.FromContext(ctx).Info("cannot read the provider object's status", "message", termsafe.Escape(status.Message))
		}
		log.FromContext(ctx).V(1).Info("status written", "phase", status.Phase)
	}
	if at, ok := StaleAt(o); ok && status.Conditions[0].Reason != ReasonStale {
		return ctrl.Result{RequeueAfter: max(at.Sub(o.Now), time.Second)}, nil
	}
	return ctrl.Result{}, nil
}

// write writes the status the cache calls for, on the condition that the
// object is still the version the cache holds (its resourceVersion): then
// the status was computed from what the server has, and one request does.
// The cache can lag behind a status another replica wrote: a newly
// elected leader reconciles every model from its own cache, and a
// hand-over under load showed it re-sending statuses the old leader had
// written a moment before (TestRollingUpdate). The server then refuses
// the write (409 Conflict), and the status is confirmed against the live
// object (confirm) and written on the live version's condition. Whether
// it wrote, and what, is returned.
func (r *reconciler) write(ctx context.Context, md *unstructured.Unstructured, o Observation, status v1.ModelDeploymentStatus) (v1.ModelDeploymentStatus, bool, error) {
	err := r.apply(ctx, md, status)
	if !apierrors.IsConflict(err) {
		return status, err == nil, err
	}
	live, status, write, err := r.confirm(ctx, client.ObjectKeyFromObject(md), o)
	if err != nil || !write {
		return status, false, err
	}
	err = r.apply(ctx, live, status)
	return status, err == nil, err
}

// confirm checks a write the cache called for against the object on the
// API server: the live object, the status to write and whether the server
// lacks it. The status is computed again with the live status as the
// previous one, so a condition that did not flip keeps the transition
// time the server has. One GET per refused write, none otherwise.
func (r *reconciler) confirm(ctx context.Context, key types.NamespacedName, o Observation) (*unstructured.Unstructured, v1.ModelDeploymentStatus, bool, error) {
	md := &unstructured.Unstructured{}
	md.SetGroupVersionKind(ModelDeploymentGVK)
	if err := r.live.Get(ctx, key, md); err != nil {
		return nil, v1.ModelDeploymentStatus{}, false, err
	}
	if live, err := previousStatus(md); err == nil && live != nil {
		o.Previous = live
	}
	status := Compute(o)
	return md, status, o.Previous == nil || !equality.Semantic.DeepEqual(ours(*o.Previous), status), nil
}

// observe reads what Compute needs: the decisions, the primary object and
// its health, the gateway, and the status the object has now.
func (r *reconciler) observe(ctx context.Context, md *unstructured.Unstructured, provider string) (Observation, error) {
	o := Observation{Generation: md.GetGeneration(), Annotations: md.GetAnnotations(), Now: r.now(), StaleAfter: r.staleAfter}
	prev, err := previousStatus(md)
	if err != nil {
		log.FromContext(ctx).Info("ignoring unreadable status", "error", termsafe.Escape(err.Error()))
	}
	o.Previous = prev
	if r.drift != nil {
		o.Capabilities = r.drift.check(o.Annotations)
	}
	rep, ok := r.reporters[provider]
	if !ok {
		o.Unsupported = provider
		return o, nil
	}
	typed, err := typedModelDeployment(md)
	if err != nil {
		return o, err
	}
	o.Primary = rep.Primary(typed)
	key := types.NamespacedName{Namespace: md.GetNamespace(), Name: o.Primary.Name}
	reader, served := r.kinds.Reader(o.Primary.GVK)
	if !served {
		if err := r.kinds.WatchError(o.Primary.GVK); err != nil {
			o.WatchError = err.Error()
		} else {
			o.CRDMissing = true
		}
		return o, nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(o.Primary.GVK)
	switch err := reader.Get(ctx, key, obj); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return o, err
	case obj.GetAnnotations()[hub.AnnotationGeneratedFrom] == md.GetName():
		// An object of that name not rendered from this model is not its.
		o.Object = obj
		o.Health = rep.Health(obj)
	}
	o.Gateway, err = r.kinds.gatewayStatus(ctx, types.NamespacedName{Namespace: md.GetNamespace(), Name: md.GetName()})
	return o, err
}

// apply writes the status by server-side apply of the status subresource,
// owning exactly the fields it sets (what it stops setting is removed, and
// fields other managers own stay), on the condition that the object is
// still md's version.
func (r *reconciler) apply(ctx context.Context, md *unstructured.Unstructured, status v1.ModelDeploymentStatus) error {
	// A write that has started finishes even when the reporter is told to
	// stop (a rolling update): cancelled halfway, it might or might not
	// land, and the next leader would write the same status again. The
	// manager waits for it before releasing the Lease.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.writeTimeout)
	defer cancel()
	if err := applyStatus(ctx, r.client, ModelDeploymentGVK, client.ObjectKeyFromObject(md), md.GetResourceVersion(), status); err != nil {
		return err
	}
	r.wrote()
	return nil
}

// applyStatus writes an object's status by server-side apply of its
// status subresource, as FieldManager: the reporter owns exactly the
// fields it sets, so what it stops setting is removed and fields other
// managers own stay. With a resourceVersion, the server applies it only
// to that version of the object, and refuses it with a conflict otherwise.
//
// The patch is the status's JSON as it is, and the write asks only for the
// object's metadata back (the metadata client, protobuf): the status is
// encoded once, not through an unstructured copy, and neither the API
// server nor the reporter encodes and decodes the whole object in the
// answer, which the reporter does not read. On the two cores a first start
// shares with the API server, that CPU is the API server's.
func applyStatus(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, key types.NamespacedName, resourceVersion string, status any) error {
	patch := statusPatch{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Status: status}
	patch.Metadata.Name, patch.Metadata.Namespace, patch.Metadata.ResourceVersion = key.Name, key.Namespace, resourceVersion
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	name := key.Name
	if key.Namespace != "" {
		name = key.String()
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(key.Namespace)
	obj.SetName(key.Name)
	if err := c.Status().Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying the status of %s %s: %w", gvk.Kind, name, err)
	}
	return nil
}

// statusPatch is the body of applyStatus: the object's identity and the
// status, nothing else.
type statusPatch struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name            string `json:"name"`
		Namespace       string `json:"namespace,omitempty"`
		ResourceVersion string `json:"resourceVersion,omitempty"`
	} `json:"metadata"`
	Status any `json:"status"`
}

// recentWrites remembers, per ModelDeployment, the status last written and
// the resourceVersion of the object that write was based on. The cache
// shows a write a moment after it returns; a reconcile in that moment (a
// provider event that came in during the write) reads the object as it was
// before, and would write the same status again. While the cache still
// shows that resourceVersion, the status written is the one to compare
// with. (Versions are only compared for equality, as the API allows.)
type recentWrites struct {
	mu      sync.Mutex
	written map[types.NamespacedName]recentWrite
}

type recentWrite struct {
	basedOn string
	status  v1.ModelDeploymentStatus
}

func (w *recentWrites) put(key types.NamespacedName, basedOn string, status v1.ModelDeploymentStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written == nil {
		w.written = map[types.NamespacedName]recentWrite{}
	}
	w.written[key] = recentWrite{basedOn: basedOn, status: status}
}

// take returns the status written for key while the cache still shows the
// object at resourceVersion rv; once it shows a newer one, the entry goes.
func (w *recentWrites) take(key types.NamespacedName, rv string) (v1.ModelDeploymentStatus, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.written[key]
	if !ok {
		return v1.ModelDeploymentStatus{}, false
	}
	if e.basedOn != rv {
		delete(w.written, key)
		return v1.ModelDeploymentStatus{}, false
	}
	return e.status, true
}

// previousStatus decodes the status the object has; nil when it has none.
func previousStatus(md *unstructured.Unstructured) (*v1.ModelDeploymentStatus, error) {
	raw, ok := md.Object["status"]
	if !ok {
		return nil, nil
	}
	var s v1.ModelDeploymentStatus
	if err := convert(raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ours keeps the conditions the reporter writes, so another writer's
// conditions do not make every resync look like a change.
func ours(s v1.ModelDeploymentStatus) v1.ModelDeploymentStatus {
	conditions := s.Conditions[:0:0]
	for _, c := range s.Conditions {
		if slices.Contains(OwnedConditions, c.Type) {
			conditions = append(conditions, c)
		}
	}
	s.Conditions = conditions
	if len(s.Conditions) == 0 {
		s.Conditions = nil
	}
	return s
}

// typedModelDeployment reads the object leniently: the reporter needs the
// name and serving mode to find the primary object, and a spec the API
// server accepted is not the reporter's to reject.
func typedModelDeployment(md *unstructured.Unstructured) (*hub.ModelDeployment, error) {
	var typed v1.ModelDeployment
	if err := convert(md.Object, &typed); err != nil {
		return nil, fmt.Errorf("ModelDeployment %s/%s: %w", md.GetNamespace(), md.GetName(), err)
	}
	// The cluster has defaulted and admitted the object; reporting its
	// deprecated fields is the renderer's job, not the reporter's.
	converted, _ := typed.ConvertToHub()
	return converted, nil
}

// convert moves a value between its unstructured and typed forms through
// JSON, the form both are defined by.
func convert(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
