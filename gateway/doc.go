// Package gateway renders the Gateway API Inference Extension objects of a
// ModelDeployment: what upstream AI Runway creates at run time from live
// lookups (CRD discovery, the Gateway list, the Service's port, the model
// server's `/v1/models`), computed here from the ModelDeployment and the
// capability file alone (upstream: kaito-project/airunway controller/internal/controller/
// gateway_reconciler.go and controller/internal/gateway/; see docs/gateway.md).
//
// Nothing is rendered unless the capability file declares `gateway` and
// `spec.gateway.enabled` is not false; the Dynamo mocker gets nothing, as
// upstream. Otherwise:
//
//   - InferencePool `<md>` in the API version the cluster serves:
//     `inference.networking.k8s.io/v1` (`selector.matchLabels`,
//     `targetPorts`, `endpointPickerRef`) or
//     `inference.networking.x-k8s.io/v1alpha2` (a plain `selector`,
//     `targetPortNumber`, `extensionRef`). The provider says which pods serve
//     and on which port (providers.Routable): the pod templates the renderer
//     writes carry `airunway.ai/model-deployment`; KAITO presets are
//     selected by the `kaito.sh/workspace` label KAITO puts on its pods;
//     KAITO listens on 5000, the others on 8000.
//   - The endpoint picker `<md>-epp` the pool names: ServiceAccount, Role,
//     RoleBinding, ConfigMap, Deployment and Service. Image and plugin
//     configuration come from the provider (llm-d's scheduler), else the
//     capability file's `gateway.endpointPicker`, else GAIE's picker: v1.5.0
//     for v1 pools, v1.4.0 with `--pool-group` for v1alpha2 pools (v1.5.0
//     no longer reads them). Its pods never carry the model label, so the
//     pool cannot route to its own picker.
//   - A provider that manages its own pool (Dynamo's operator creates
//     `<md>-pool`, always as v1) gets neither; the route targets its pool,
//     and a pool in another namespace gets a ReferenceGrant there.
//   - HTTPRoute `<md>` (unless `spec.gateway.httpRouteRef` names the user's
//     own) from the declared parent Gateway: path prefix `/`, header
//     X-Gateway-Model-Name equal to the model name, request timeout 300s.
//     The model name is `spec.gateway.modelName` > `spec.model.servedName`
//     (unless the provider never passes it to the server) > the provider's
//     own rule (KAITO presets: the lower-cased last segment of a Hugging
//     Face id) > `spec.model.id`; a model with none of them is an error.
//     Fields the declared Gateway API release and channel do not serve
//     (RouteFields) are left out with a warning.
//
// Gateway `allowedRoutes` patching and Body-Based Router restarts are
// imperative in upstream and belong to the platform team's one-time set-up
// (docs/gateway.md).
package gateway
