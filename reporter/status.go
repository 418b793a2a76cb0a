package reporter

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/providers"
)

// Condition types and reasons the reporter writes. Ready is what Argo CD's
// health check and kstatus read; Reconciling and Stalled follow the kstatus
// convention of being present only while abnormal.
const (
	ConditionReady       = "Ready"
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"
	// ConditionHardwareCompatible is upstream's condition (declared, never
	// set there): whether the pool's GPUs can run the model, as the
	// renderer's memory fit found (hub.AnnotationHardwareFit).
	ConditionHardwareCompatible = "HardwareCompatible"

	ReasonReady       = "DeploymentReady"
	ReasonInProgress  = "DeploymentInProgress"
	ReasonFailed      = "DeploymentFailed"
	ReasonNotFound    = "ResourceNotFound"
	ReasonCRDMissing  = "ProviderCRDMissing"
	ReasonStale       = "ProviderStale"
	ReasonUnsupported = "ProviderUnsupported"
	ReasonWatchFailed = "ProviderWatchFailed"
	ReasonUnreadable  = "ProviderStatusUnreadable"
	ReasonProgressing = "Progressing"
)

// OwnedConditions are the condition types the reporter writes, and the
// only ones it compares: another writer's conditions are not its to keep
// or remove, and a condition it writes but did not compare would make
// every resync look like a change (Compute never sets another; a test
// holds it to this list).
var OwnedConditions = []string{ConditionReady, ConditionReconciling, ConditionStalled, ConditionCapabilitiesCurrent, ConditionHardwareCompatible}

// StaleAfter is how long a provider operator may leave a not-ready primary
// object untouched before the reporter stops trusting what it says.
const StaleAfter = 5 * time.Minute

// Observation is everything the reporter read for one ModelDeployment.
type Observation struct {
	// Generation of the ModelDeployment the observation belongs to.
	Generation  int64
	Annotations map[string]string
	// Primary names the provider's primary object; Object is it, nil when
	// it does not exist (yet).
	Primary providers.Primary
	Object  *unstructured.Unstructured
	// Health is the provider's translation of Object.
	Health providers.Health
	// CRDMissing is true when the cluster does not serve Primary.GVK.
	CRDMissing bool
	// Unsupported is set when the ModelDeployment names a provider this
	// reporter does not know (rendered by a newer renderer); it says so.
	Unsupported string
	// WatchError is set when the cluster serves Primary.GVK but the
	// reporter cannot watch it (e.g. its RBAC lacks the kind).
	WatchError string
	// Gateway is where the gateway serves the model, nil without one.
	Gateway *v1.GatewayStatus
	// Capabilities is what the comparison of the applied
	// ClusterCapabilities with the cluster found for the model's node
	// pools and provider; nil when none is applied.
	Capabilities *CapabilitiesCheck
	// StaleAfter overrides the package's StaleAfter when positive.
	StaleAfter time.Duration
	// Previous is the status the ModelDeployment has now; its conditions'
	// transition times are kept while their status does not change.
	Previous *v1.ModelDeploymentStatus
	Now      time.Time
}

// Compute returns the status a ModelDeployment should have. It is pure:
// the same observation always gives the same status, so a resync that
// observes nothing new writes nothing. Every string in it is at most
// providers.MaxMessageBytes long, whatever the provider objects say.
func Compute(o Observation) v1.ModelDeploymentStatus {
	s := v1.ModelDeploymentStatus{ObservedGeneration: o.Generation}
	if name := o.Annotations[hub.AnnotationProvider]; name != "" {
		s.Provider = &v1.ProviderStatus{Name: name, SelectedReason: o.Annotations[hub.AnnotationProviderReason], ResourceName: o.Primary.Name, ResourceKind: o.Primary.GVK.Kind}
	}
	if engine := o.Annotations[hub.AnnotationEngine]; engine != "" {
		s.Engine = &v1.EngineStatus{Type: engine, SelectedReason: o.Annotations[hub.AnnotationEngineReason]}
		if !slices.Contains(hub.Engines, engine) {
			// The CRD's enum would refuse the whole status write.
			s.Engine.Type = ""
		}
	}
	s.Gateway = o.Gateway
	if s.Gateway != nil {
		g := *s.Gateway
		g.APIFormats = hub.SplitAPIFormats(o.Annotations[hub.AnnotationAPIFormats])
		s.Gateway = &g
	}
	ready := metav1.Condition{Type: ConditionReady}
	switch {
	case o.Unsupported != "":
		s.Phase = providers.PhasePending
		s.Message = fmt.Sprintf("this status reporter does not know provider %q; upgrade the reporter to match the renderer", o.Unsupported)
		ready.Status, ready.Reason = metav1.ConditionUnknown, ReasonUnsupported
	case o.WatchError != "":
		s.Phase = providers.PhasePending
		s.Message = fmt.Sprintf("the status reporter cannot watch %s %s: %s", o.Primary.GVK.GroupVersion(), o.Primary.GVK.Kind, o.WatchError)
		ready.Status, ready.Reason = metav1.ConditionUnknown, ReasonWatchFailed
	case o.CRDMissing:
		s.Phase = providers.PhaseFailed
		s.Message = fmt.Sprintf("the cluster does not serve %s %s: install the provider's CRDs, or render for a provider this cluster has", o.Primary.GVK.GroupVersion(), o.Primary.GVK.Kind)
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonCRDMissing
	case o.Object == nil:
		s.Phase = providers.PhasePending
		s.Message = fmt.Sprintf("waiting for %s %s to be applied", o.Primary.GVK.Kind, o.Primary.Name)
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonNotFound
	case len(o.Health.Unreadable) > 0:
		s.Phase = providers.PhasePending
		s.Message = fmt.Sprintf("the status reporter cannot read the status of %s %s: %s", o.Primary.GVK.Kind, o.Primary.Name, joinBounded(o.Health.Unreadable))
		ready.Status, ready.Reason = metav1.ConditionUnknown, ReasonUnreadable
	default:
		applyHealth(&s, o)
		ready.Status, ready.Reason = readiness(s.Phase)
		if at, ok := StaleAt(o); ok && !o.Now.Before(at) {
			// The message names the time, not the idle duration, so a
			// stale status stays the same bytes on every resync.
			ready.Status, ready.Reason = metav1.ConditionUnknown, ReasonStale
			s.Message = fmt.Sprintf("%s %s is not ready and its operator has not updated it since %s; its status may be out of date",
				o.Primary.GVK.Kind, o.Primary.Name, lastWrite(o.Object).UTC().Format(time.RFC3339))
		}
	}
	ready.Message = s.Message
	setCondition(&s, o, ready)
	// kstatus reads only Reconciling and Stalled: an Unknown Ready is
	// in progress to it, never current.
	switch {
	case ready.Status == metav1.ConditionTrue:
	case s.Phase == providers.PhaseFailed:
		setCondition(&s, o, metav1.Condition{Type: ConditionStalled, Status: metav1.ConditionTrue, Reason: ready.Reason, Message: s.Message})
	case ready.Status == metav1.ConditionUnknown:
		setCondition(&s, o, metav1.Condition{Type: ConditionReconciling, Status: metav1.ConditionTrue, Reason: ready.Reason, Message: s.Message})
	default:
		setCondition(&s, o, metav1.Condition{Type: ConditionReconciling, Status: metav1.ConditionTrue, Reason: ReasonProgressing, Message: s.Message})
	}
	if c := o.Capabilities; c != nil {
		setCondition(&s, o, capabilitiesCondition(c))
	}
	if c, ok := hardwareCondition(o.Annotations); ok {
		setCondition(&s, o, c)
	}
	bound(&s)
	return s
}

// capabilitiesCondition warns, without touching Ready, when the node pool
// or the provider the model was rendered for is no longer what the
// applied ClusterCapabilities says.
func capabilitiesCondition(c *CapabilitiesCheck) metav1.Condition {
	cond := metav1.Condition{Type: ConditionCapabilitiesCurrent, Status: metav1.ConditionTrue, Reason: ReasonCapabilitiesCurrent,
		Message: fmt.Sprintf("the node pool and provider it was rendered for match the cluster (ClusterCapabilities %s)", strings.Join(c.Files, ", "))}
	if len(c.Pool)+len(c.Provider) == 0 {
		return cond
	}
	cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNodePoolChanged
	if len(c.Provider) > 0 {
		cond.Reason = ReasonProviderChanged
	}
	cond.Message = "rendered for a cluster that has changed: " + strings.Join(append(slices.Clone(c.Provider), c.Pool...), "; ") + "; render again with a current capability file"
	return cond
}

// Reasons of HardwareCompatible, one per memory fit status.
const (
	ReasonMemoryFits         = "MemoryFits"
	ReasonMemoryTight        = "MemoryTight"
	ReasonShortContext       = "ShortContext"
	ReasonHardwareNotChecked = "HardwareNotChecked"
)

// hardwareCondition words the renderer's memory fit verdict: the model
// fits (also tightly, or with a shorter context than it asks) or was not
// checked (Unknown, as upstream's plan words a GPU it cannot confirm). A
// model that does not fit is never rendered, so False is not written; a
// model without GPU components, or rendered before the verdict was
// recorded, gets no condition.
func hardwareCondition(annotations map[string]string) (metav1.Condition, bool) {
	c := metav1.Condition{Type: ConditionHardwareCompatible, Status: metav1.ConditionTrue, Message: annotations[hub.AnnotationHardwareFitReason]}
	switch fit.Status(annotations[hub.AnnotationHardwareFit]) {
	case fit.StatusFits:
		c.Reason = ReasonMemoryFits
	case fit.StatusTight:
		c.Reason = ReasonMemoryTight
	case fit.StatusShortContext:
		c.Reason = ReasonShortContext
	case fit.StatusNotChecked:
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonHardwareNotChecked
	default:
		return c, false
	}
	return c, true
}

// joinBounded joins problems with "; ", stopping once the text is past
// providers.MaxMessageBytes (bound cuts it there).
func joinBounded(problems []string) string {
	var b strings.Builder
	for i, p := range problems {
		if b.Len() > providers.MaxMessageBytes {
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(providers.Truncate(p, providers.MaxMessageBytes))
	}
	return b.String()
}

// bound cuts every string of a status to providers.MaxMessageBytes: they
// come from provider objects, Gateways, API errors and annotations, none
// of which the reporter controls, and one too long for the CRD (a
// condition message allows 32768 characters) would get every write of the
// status refused.
func bound(s *v1.ModelDeploymentStatus) {
	fields := []*string{&s.Message}
	if s.Provider != nil {
		fields = append(fields, &s.Provider.Name, &s.Provider.SelectedReason, &s.Provider.ResourceName, &s.Provider.ResourceKind)
	}
	if s.Engine != nil {
		fields = append(fields, &s.Engine.SelectedReason)
	}
	if s.Endpoint != nil {
		fields = append(fields, &s.Endpoint.Service)
	}
	if s.Gateway != nil {
		fields = append(fields, &s.Gateway.Endpoint, &s.Gateway.ModelName, &s.Gateway.GatewayNamespace)
	}
	for i := range s.Conditions {
		fields = append(fields, &s.Conditions[i].Message)
	}
	for _, f := range fields {
		*f = providers.Truncate(*f, providers.MaxMessageBytes)
	}
}

// applyHealth copies the provider's translation, then words phase and
// message as upstream does: a primary object that exists but is neither
// running nor failed is Deploying.
func applyHealth(s *v1.ModelDeploymentStatus, o Observation) {
	h := o.Health
	s.Phase, s.Message = h.Phase, h.Message
	switch h.Phase {
	case providers.PhaseRunning:
		if s.Message == "" {
			s.Message = fmt.Sprintf("%s %s is ready, pods are ready", o.Primary.GVK.Kind, o.Primary.Name)
		}
	case providers.PhaseFailed:
		if s.Message == "" {
			s.Message = "deployment failed"
		}
	default:
		s.Phase = providers.PhaseDeploying
		if s.Message == "" {
			s.Message = fmt.Sprintf("%s created, waiting for pods to be ready", o.Primary.Noun)
		}
	}
	if h.Replicas != nil {
		s.Replicas = &v1.ReplicaStatus{Desired: h.Replicas.Desired, Ready: h.Replicas.Ready, Available: h.Replicas.Available}
	}
	if h.Endpoint != nil {
		s.Endpoint = &v1.EndpointStatus{Service: h.Endpoint.Service, Port: h.Endpoint.Port}
	}
}

func readiness(phase string) (metav1.ConditionStatus, string) {
	switch phase {
	case providers.PhaseRunning:
		return metav1.ConditionTrue, ReasonReady
	case providers.PhaseFailed:
		return metav1.ConditionFalse, ReasonFailed
	}
	return metav1.ConditionFalse, ReasonInProgress
}

// StaleAt is when the observed primary object turns stale if its operator
// writes nothing more; false when it cannot (it is missing, running,
// failed or unreadable). The controller re-checks then, as silence makes
// no event.
func StaleAt(o Observation) (time.Time, bool) {
	if o.Object == nil || o.CRDMissing || o.Unsupported != "" || o.WatchError != "" || len(o.Health.Unreadable) > 0 {
		return time.Time{}, false
	}
	if o.Health.Phase == providers.PhaseRunning || o.Health.Phase == providers.PhaseFailed {
		return time.Time{}, false
	}
	after := StaleAfter
	if o.StaleAfter > 0 {
		after = o.StaleAfter
	}
	return lastWrite(o.Object).Add(after), true
}

// lastWrite is when anyone last wrote the object: the newest managedFields
// entry (the API server stamps every write there), else its creation.
func lastWrite(obj *unstructured.Unstructured) time.Time {
	last := obj.GetCreationTimestamp().Time
	for _, f := range obj.GetManagedFields() {
		if f.Time != nil && f.Time.After(last) {
			last = f.Time.Time
		}
	}
	return last
}

// setCondition adds a condition with the observation's generation. The
// previous condition of its type, if any, is what meta.SetStatusCondition
// updates, so its transition time is kept while its status stays the same.
// Conditions are appended in the order Compute sets them, never in the
// previous status's order, so the result depends on the observation alone.
func setCondition(s *v1.ModelDeploymentStatus, o Observation, c metav1.Condition) {
	c.ObservedGeneration = o.Generation
	c.LastTransitionTime = metav1.NewTime(o.Now.UTC().Truncate(time.Second))
	conditions := make([]metav1.Condition, 0, 1)
	if o.Previous != nil {
		if prev := meta.FindStatusCondition(o.Previous.Conditions, c.Type); prev != nil {
			conditions = append(conditions, *prev)
		}
	}
	meta.SetStatusCondition(&conditions, c)
	s.Conditions = append(s.Conditions, conditions...)
}
