// Package reporter is the status reporter: in GitOps mode nothing in the
// cluster reconciles a ModelDeployment, so the reporter reads the health of
// the provider objects the renderer produced and writes it back into
// `ModelDeployment.status`, where Argo CD's health check, kstatus and Flux
// find it (docs/status-reporter.md). cmd/airunway-status-reporter runs it.
//
// Compute (status.go) is the pure heart: from the provider's translation of
// its primary object (providers.Reporter, after upstream's per-provider
// StatusTranslator) and the
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
//     leader. Every cache keeps only what is read (trim.go): no managed
//     field sets or last-applied copy, and of a provider object only its
//     metadata, status and the fields its translation declares
//     (providers.Reporter.HealthFields), which holds a model to about
//     24 KiB at 10,000 models (BenchmarkReporterScale).
//   - controller.go observes one ModelDeployment (its primary object, its
//     route's Gateway via gateway.go, its current status), computes the
//     status and applies it to the status subresource by server-side apply,
//     only when the conditions it owns (OwnedConditions) and the rest of
//     its status differ, so a resync writes nothing; a write the cache
//     calls for is confirmed against the live object first, since the
//     cache of a new leader can lag behind the old leader's last writes.
//     A not-ready model is
//     re-queued for when it would turn stale, since silence makes no event.
//   - drift.go compares each applied ClusterCapabilities (a capability
//     file) with the live cluster whenever a fact it reads changes (its
//     caches keep only those facts, so a heartbeat or a rollout's status
//     starts no comparison), writes the outcome into that
//     ClusterCapabilities' status, and hands it to the controller, which
//     warns on each model whose node pool or provider no longer matches.
//     Where resource.k8s.io/v1 is served, it also watches DeviceClasses
//     and ResourceSlices (dra.go) for pools whose GPUs are DRA devices,
//     trimmed to a slice's driver, node and devices' attributes and
//     capacities (a node's identical GPUs once, with a count; no device
//     names, UUIDs or resourceVersion), so a driver republishing the
//     same devices starts no comparison.
//     Reconciles wait for the first comparison, so no status is written
//     without CapabilitiesCurrent only to gain it a moment later.
//
// It reads, with cluster-wide access, objects it does not control, so it
// treats them as hostile:
//
//   - the translations read fields leniently (providers.Fields): a field of
//     the wrong type never panics and is named, and an object whose status
//     cannot be read makes the model Pending with Ready=Unknown
//     (ProviderStatusUnreadable), the message naming the fields;
//   - every string copied into the status (provider messages, Service
//     names, the Gateway's address, API errors, annotations) is cut to
//     providers.MaxMessageBytes (1024 bytes, at a UTF-8 boundary, ending in
//     "…(truncated)"), and an engine the CRD's enum would refuse is left
//     out, so no provider object can get a status write refused or make
//     one large;
//   - a failed reconcile (an API error, a conflict, throttling past what
//     client-go retries itself) is retried from RetryBaseDelay, doubling
//     per model up to RetryMaxDelay, 10 a second at most overall; one
//     reconcile is bounded by Options.ReconcileTimeout, so an API server
//     that never answers cannot stall it;
//   - a ModelDeployment deleted between being read and its status write is
//     not a failure: the write finds it gone (a status write never creates
//     an object), the reconcile ends, and the
//     airunway_status_reporter_deleted_before_write_total metric counts it.
//
// Every replica also serves the ModelDeployment conversion webhook
// (conversion.go, webhook.go). Anything in the cluster that can reach its
// Service can send it a review, so it is bounded too:
//
//   - a review is at most 8 MiB (HTTP 413 beyond) and an object in it at
//     most 3 MiB; three reviews are converted at once, and one more waits
//     a second for a slot, then gets HTTP 429 with Retry-After; a review's
//     body and answer have deadlines. The reporter's own server
//     (webhookHTTPServer) holds at most 1,024 connections, each with 3 s
//     for its handshake and headers of at most 8 KiB. The heap at the
//     review bound (TestWebhookMemoryBound) and the resident memory under
//     connection floods (TestWebhookConnectionFlood) are measured: each at
//     most half the pod's memory limit.
//   - it speaks TLS 1.3, or TLS 1.2 with ECDHE and an AEAD cipher only,
//     and HTTP/1.1 only unless --enable-http2 (Options.Conversion's
//     EnableHTTP2), as kubebuilder's webhooks since the HTTP/2 Rapid Reset
//     advisories.
//   - its certificate (certs.go) is cert-manager's, re-read from a
//     directory when its files change, or its own, kept in a Secret:
//     issued for a year and renewed by the leader when a third is left, in
//     two steps a minute apart (the new CA joins the CRD's caBundle before
//     any replica serves the certificate it signed). The leader verifies
//     the Secret it finds (the key, a chain to its ca.crt, every host of
//     --conversion-hosts among the names, valid five minutes ahead) and
//     replaces one that fails at once, saying why. Either way /readyz fails while the
//     served certificate is expired, not yet valid, or within five minutes
//     of its expiry.
//
// The reporter writes the status of ModelDeployments and of
// ClusterCapabilities, and, for the webhook, its Secret and the CRD's
// caBundle; for leader election, its Lease and the Events announcing a new
// leader. It writes nothing else, and deploy/base grants it exactly that.
package reporter
