// Package reporter is the status reporter: in GitOps mode nothing in the
// cluster reconciles a ModelDeployment, so the reporter reads the health of
// the provider objects the renderer produced and writes it back into
// `ModelDeployment.status`, where Argo CD's health check, kstatus and Flux
// find it (DESIGN §5).
//
// Compute is the pure heart: from the provider's translation of its primary
// object (providers.Reporter, upstream-behaviour.md §5) and the renderer's
// decision annotations it derives phase, message, replicas, endpoint,
// provider and engine, and the conditions: Ready (True, False, or Unknown
// when the operator has left a not-ready object untouched for StaleAfter),
// plus Reconciling or Stalled only while abnormal, all carrying the
// observed generation. Transition times survive while a condition's status
// does not change, so an unchanged observation yields identical status.
package reporter
