// Package reporter is the status reporter: in GitOps mode nothing in the
// cluster reconciles a ModelDeployment, so the reporter reads the health of
// the provider objects the renderer produced and writes it back into
// `ModelDeployment.status`, where Argo CD's health check, kstatus and Flux
// find it (DESIGN §5). cmd/airunway-status-reporter runs it.
//
// Compute (status.go) is the pure heart: from the provider's translation of
// its primary object (providers.Reporter, upstream-behaviour.md §5) and the
// renderer's decision annotations it derives phase, message, replicas,
// endpoint, provider and engine, and the conditions: Ready (True, False, or
// Unknown when the operator has left a not-ready object untouched for
// StaleAfter), plus Reconciling or Stalled only while abnormal, all carrying
// the observed generation. Transition times survive while a condition's
// status does not change, so an unchanged observation yields identical
// status.
//
// Around it (manager.go) is a controller-runtime manager with leader
// election, metrics and probes:
//
//   - kinds.go asks discovery, at start and every interval, which provider
//     kinds the cluster serves, and keeps one informer cache per served
//     kind, limited to objects labelled as rendered by airunway. A kind that
//     appears or disappears re-queues every ModelDeployment; an event on a
//     rendered object re-queues the model named by its generated-from
//     annotation. The caches feed the controller, so they run only on the
//     leader.
//   - controller.go observes one ModelDeployment (its primary object, its
//     route's Gateway via gateway.go, its current status), computes the
//     status and applies it to the status subresource by server-side apply,
//     only when it differs, so a resync writes nothing. A not-ready model is
//     re-queued for when it would turn stale, since silence makes no event.
//
// The reporter never writes anything but ModelDeployment status; deploy/base
// grants it exactly that.
package reporter
