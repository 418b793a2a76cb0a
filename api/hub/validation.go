package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/api/resource"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/airunway-render/airunway-render/diag"
)

// Ceilings enforced by upstream's validating webhook.
const (
	MaxReplicas = 32
	MaxGPUCount = 64
	MaxVolumes  = 8
	// MaxAdapters is upstream's LoRA branch's `maxItems` for
	// `spec.adapters`.
	MaxAdapters = 64
	// MaxScaleDownDelaySeconds bounds `scaleDownDelaySeconds` at an hour,
	// the HPA's own ceiling for a stabilization window.
	MaxScaleDownDelaySeconds = 3600
)

var (
	maxMemory    = resource.MustParse("4Ti")
	maxCPU       = resource.MustParse("512")
	VolumeNameRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9\-]*[a-z0-9])?$`)
	// forbiddenMountAt are upstream's runtime-owned directories plus /run,
	// where /var/run usually points (the service account token lives
	// below both).
	forbiddenMountAt = []string{"/dev", "/proc", "/sys", "/etc", "/var/run", "/run"}
	// AdapterSourceRe is a Hugging Face repository as an adapter source:
	// hf://<org>/<repo>, with the characters the Hub allows in each part.
	AdapterSourceRe = regexp.MustCompile(`^hf://[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)
	AccessModes     = []string{"ReadWriteOnce", "ReadWriteMany", "ReadOnlyMany", "ReadWriteOncePod"}
)

// Override keys upstream bans at any depth: the first group would let a
// ModelDeployment author escalate privileges, the second would bypass the
// sizing ceilings above.
var (
	SecurityOverrideKeys = []string{"securityContext", "serviceAccountName", "serviceAccount", "hostNetwork", "hostPID", "hostIPC", "automountServiceAccountToken", "nodeName", "priorityClassName", "runtimeClassName"}
	SizingOverrideKeys   = []string{"replicas", "resources"}
)

// Override keys this renderer bans beyond upstream. With the first group
// banned too, no override can give a pod what the Pod Security Standards
// baseline forbids (upstream's list leaves host paths and ports open);
// `namespace`, at any depth, would point the object or one of its
// references out of the ModelDeployment's namespace. The identity keys are
// banned at the top: they are the renderer's, and `status` the operator's.
var (
	hostOverrideKeys     = []string{"hostPath", "hostPort", "hostUsers"}
	identityOverrideKeys = []string{"apiVersion", "kind", "metadata", "status"}
)

// ValidateModelDeployment checks a defaulted ModelDeployment against every
// upstream admission and reconciler rule that needs no cluster. Rules about
// one served version's own fields are its conversion's; rules that need the
// cluster's providers are checked during selection.
func ValidateModelDeployment(md *ModelDeployment) diag.List {
	var l diag.List
	validateMetadata(md, &l)
	s := &md.Spec
	validateModel(md, &l)
	validateEngine(s, &l)
	validateMocker(md, &l)
	validateScalingAndResources(md, &l)
	validateOverrides(s, &l)
	validateStorage(md, &l)
	validateEnv(s, &l)
	validateAdapters(s, &l)
	validateAutoscaling(s, &l)
	validateGatewayRef(s, &l)
	validatePlacement(md, &l)
	return l
}

func validateMetadata(md *ModelDeployment, l *diag.List) {
	switch {
	case md.Name == "":
		l.Errorf("metadata.name", "must be set")
	case strings.Contains(md.Name, "."):
		l.Errorf("metadata.name", "%q must not contain dots: the name is used for generated object names and labels (use %q)", md.Name, strings.ReplaceAll(md.Name, ".", "-"))
	default:
		for _, msg := range utilvalidation.IsDNS1123Label(md.Name) {
			l.Errorf("metadata.name", "%q is not a valid name: %s", md.Name, msg)
		}
	}
	if md.Namespace == "" {
		// Not an error: a kustomization's `namespace:` or Argo CD's
		// destination may be meant to place it. But the rendered objects
		// then carry none either, and land wherever they are applied.
		l.Warnf(diag.NoNamespace, "metadata.namespace", "is not set, so neither the ModelDeployment nor the objects rendered from it carry a namespace: they land in whatever namespace applies them (kubectl's context, Argo CD's destination); set `metadata.namespace`, or `namespace:` in the kustomization")
		return
	}
	for _, msg := range utilvalidation.IsDNS1123Label(md.Namespace) {
		l.Errorf("metadata.namespace", "%q is not a valid namespace: %s", md.Namespace, msg)
	}
}

func validateModel(md *ModelDeployment, l *diag.List) {
	m := &md.Spec.Model
	checkEnum(l, "spec.model.source", m.Source, SourceHuggingFace, SourceCustom)
	if m.Source == SourceHuggingFace && m.ID == "" {
		l.Errorf("spec.model.id", "model.id is required when `spec.model.source` is %q", SourceHuggingFace)
	}
	checkToken(l, "spec.model.id", m.ID)
	checkToken(l, "spec.model.servedName", m.ServedName)
	if m.ServedName != "" && m.Source == SourceCustom {
		l.Warnf(diag.IgnoredField, "spec.model.servedName", "servedName is not applicable when `spec.model.source` is %q", SourceCustom)
	}
}

func validateEngine(s *ModelDeploymentSpec, l *diag.List) {
	checkEnum(l, "spec.serving.mode", s.Mode(), ModeAggregated, ModeDisaggregated)
	e := s.Engine
	if e == nil {
		return
	}
	if e.Type != "" {
		checkEnum(l, "spec.engine.type", e.Type, Engines...)
	}
	if e.ContextLength != nil && e.Type == EngineTRTLLM {
		l.Warnf(diag.IgnoredField, "spec.engine.contextLength", "is ignored by the %q engine", EngineTRTLLM)
	}
	if Bool(e.TrustRemoteCode) {
		l.Warnf(diag.TrustRemoteCode, "spec.engine.trustRemoteCode", "is true: the model repository may run arbitrary code in the model server")
	}
	for _, k := range slices.Sorted(maps.Keys(e.Args)) {
		checkArgValue(l, "spec.engine.args."+k, e.Args[k])
	}
	for i, tok := range e.ExtraArgs {
		if strings.ContainsRune(tok, 0) {
			l.Errorf(fmt.Sprintf("spec.engine.extraArgs[%d]", i), "%q must not contain a NUL character: no command line can carry it", tok)
		}
	}
	for i, tok := range e.ExtraArgs {
		key, ok := FlagKey(tok)
		if !ok {
			continue
		}
		if _, dup := e.Args[key]; dup {
			l.Errorf(fmt.Sprintf("spec.engine.extraArgs[%d]", i), "%q sets the same flag as `spec.engine.args` key %q; set it in only one of `spec.engine.args` and `spec.engine.extraArgs`", tok, key)
		}
	}
}

// checkToken checks a value that providers put on the command line as one
// token: a model ID or served name. Whitespace would split it into extra
// flags in a shell-joined command, and a leading dash would make it a flag
// everywhere; real model IDs have neither.
func checkToken(l *diag.List, field, value string) {
	switch {
	case strings.ContainsFunc(value, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		l.Errorf(field, "%q must not contain whitespace or control characters: it is passed to the model server as one command-line token", value)
	case strings.HasPrefix(value, "-"):
		l.Errorf(field, "%q must not start with '-': the model server would read it as a flag", value)
	}
}

// checkArgValue checks an `engine.args` value, which follows its `--key` as
// the next token. A value that starts with '-' would be read as a flag of
// its own (`--enforce-eager --trust-remote-code` sets both), unless it is a
// number such as -1.
func checkArgValue(l *diag.List, field, value string) {
	if strings.ContainsRune(value, 0) {
		l.Errorf(field, "%q must not contain a NUL character: no command line can carry it", value)
	}
	if strings.HasPrefix(value, "-") {
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			l.Errorf(field, "%q must not start with '-' unless it is a number: the model server would read it as another flag (put extra flags in `spec.engine.extraArgs`)", value)
		}
	}
}

// FlagKey returns the flag name of an extraArgs token: "--key" and
// "--key=value" give "key". Only tokens that start with exactly two dashes
// followed by something else are flags, as upstream parses them.
func FlagKey(token string) (string, bool) {
	if !strings.HasPrefix(token, "--") || len(token) < 3 || token[2] == '-' {
		return "", false
	}
	key := token[2:]
	if i := strings.IndexByte(key, '='); i >= 0 {
		key = key[:i]
	}
	return key, key != ""
}

func validateScalingAndResources(md *ModelDeployment, l *diag.List) {
	s := &md.Spec
	if s.Scaling != nil {
		checkRange(l, "spec.scaling.replicas", s.Scaling.Replicas, MaxReplicas)
		validateComponent(l, "spec.scaling.prefill", s.Scaling.Prefill)
		validateComponent(l, "spec.scaling.decode", s.Scaling.Decode)
	}
	if r := s.Resources; r != nil {
		if r.GPU != nil {
			checkRange(l, "spec.resources.gpu.count", r.GPU.Count, MaxGPUCount)
		}
		checkQuantity(l, "spec.resources.memory", r.Memory, maxMemory)
		checkQuantity(l, "spec.resources.cpu", r.CPU, maxCPU)
	}
	if s.Mode() != ModeDisaggregated {
		return
	}
	if s.GPUCount() > 0 {
		l.Errorf("spec.resources.gpu", "cannot specify both resources.gpu and scaling.prefill/decode in disaggregated mode: move the GPU request to `spec.scaling.prefill.gpu` and `spec.scaling.decode.gpu`")
	}
	if s.Scaling == nil || s.Scaling.Prefill == nil || s.Scaling.Decode == nil {
		l.Errorf("spec.scaling", "disaggregated mode requires scaling.prefill and scaling.decode")
		return
	}
	if IsMocker(md) {
		return
	}
	for _, c := range []struct {
		name string
		spec *ComponentScalingSpec
	}{{"prefill", s.Scaling.Prefill}, {"decode", s.Scaling.Decode}} {
		if c.spec.GPUCount() <= 0 {
			l.Errorf("spec.scaling."+c.name+".gpu.count", "disaggregated mode requires scaling.%s.gpu.count > 0", c.name)
		}
	}
}

// validateMocker applies upstream's rule (webhook and reconciler) that the
// Dynamo mocker backend only emulates vLLM.
func validateMocker(md *ModelDeployment, l *diag.List) {
	if e := md.Spec.EngineType(); e != "" && e != EngineVLLM && IsMocker(md) {
		l.Errorf("spec.engine.type", "%q is not supported with annotation %s: %s: Dynamo mocker mode only supports the vllm engine", e, AnnotationDynamoTestBackend, MockerBackend)
	}
}

// GatewayEnabled reports whether the ModelDeployment is served through the
// cluster's Gateway API Inference Extension (gateway capability g, nil when
// the cluster has none): unless `spec.gateway.enabled` is false, and never
// for Dynamo's mocker, which serves no real model. The render engine asks
// once per model and hands the answer to the provider and the gateway, so
// a provider's topology and the route to it cannot disagree.
func (md *ModelDeployment) GatewayEnabled(g *GatewayCapability) bool {
	s := &md.Spec
	return g != nil && (s.Gateway == nil || s.Gateway.Enabled == nil || *s.Gateway.Enabled) && !IsMocker(md)
}

// IsMocker reports whether the ModelDeployment asks for Dynamo's test-only
// mocker backend, which waives the GPU rules.
func IsMocker(md *ModelDeployment) bool {
	return md.Annotations[AnnotationDynamoTestBackend] == MockerBackend && md.Spec.ProviderName() == ProviderDynamo
}

func validateComponent(l *diag.List, field string, c *ComponentScalingSpec) {
	if c == nil {
		return
	}
	checkRange(l, field+".replicas", c.Replicas, MaxReplicas)
	if c.GPU != nil {
		checkRange(l, field+".gpu.count", c.GPU.Count, MaxGPUCount)
	}
	checkQuantity(l, field+".memory", c.Memory, maxMemory)
}

func checkRange(l *diag.List, field string, v *int32, max int32) {
	if v == nil {
		return
	}
	if *v < 0 {
		l.Errorf(field, "must be greater than or equal to 0, got %d", *v)
	}
	if *v > max {
		l.Errorf(field, "must be less than or equal to %d, got %d", max, *v)
	}
}

func checkQuantity(l *diag.List, field, value string, max resource.Quantity) {
	if value == "" {
		return
	}
	q, err := ParseQuantity(value)
	switch {
	case errors.Is(err, ErrQuantityOutOfRange) && !strings.HasPrefix(value, "-"):
		l.Errorf(field, "%q exceeds the maximum of %s", value, max.String())
		return
	case err != nil:
		l.Errorf(field, "%v", err)
		return
	}
	if q.Sign() < 0 {
		l.Errorf(field, "%q must not be negative", value)
	}
	if q.Cmp(max) > 0 {
		l.Errorf(field, "%q exceeds the maximum of %s", value, max.String())
	}
}

func checkEnum(l *diag.List, field, value string, allowed ...string) {
	for _, a := range allowed {
		if value == a {
			return
		}
	}
	l.Errorf(field, "%q is not supported: must be one of %s", value, QuoteList(allowed))
}

// QuoteList formats allowed values for messages: "a", "b", "c".
func QuoteList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

func validateOverrides(s *ModelDeploymentSpec, l *diag.List) {
	if s.Provider == nil || len(s.Provider.Overrides) == 0 {
		return
	}
	var v any
	if err := json.Unmarshal(s.Provider.Overrides, &v); err != nil {
		l.Errorf("spec.provider.overrides", "must be valid JSON (<redacted %d bytes>)", len(s.Provider.Overrides))
		return
	}
	if _, ok := v.(map[string]any); !ok {
		l.Errorf("spec.provider.overrides", "must be a JSON object")
		return
	}
	for _, k := range identityOverrideKeys {
		if _, ok := v.(map[string]any)[k]; ok {
			l.Errorf("spec.provider.overrides."+k, "overriding `%s` is forbidden: the renderer sets `apiVersion`, `kind` and `metadata` (a name or namespace there would move the object away from its ModelDeployment), and `status` belongs to the provider's operator", k)
		}
	}
	walkOverrides(v, "spec.provider.overrides", l)
}

// walkOverrides reports banned keys at any depth. A banned key's subtree is
// not descended, so a key nested in another banned key is reported once.
func walkOverrides(v any, at string, l *diag.List) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			field := at + "." + k
			switch {
			case at == "spec.provider.overrides" && slices.Contains(identityOverrideKeys, k):
				// reported by validateOverrides
			case k == "namespace":
				l.Errorf(field, "overriding `namespace` is forbidden: an override must not move an object, or point a reference, out of the ModelDeployment's namespace")
			case slices.Contains(hostOverrideKeys, k):
				l.Errorf(field, "overriding %q is forbidden: it gives the pod access to its node, which the Pod Security Standards baseline forbids", k)
			case slices.Contains(SecurityOverrideKeys, k):
				l.Errorf(field, "overriding %q is forbidden: security-sensitive pod fields must not be set through overrides", k)
			case slices.Contains(SizingOverrideKeys, k):
				l.Errorf(field, "overriding %q is forbidden: use `spec.scaling` and `spec.resources`, which enforce the sizing limits", k)
			default:
				walkOverrides(t[k], field, l)
			}
		}
	case []any:
		for i, e := range t {
			if e == nil {
				l.Errorf(fmt.Sprintf("%s[%d]", at, i), "must not be null: a null deletes a key, but a list item cannot be deleted; leave the item out")
				continue
			}
			walkOverrides(e, fmt.Sprintf("%s[%d]", at, i), l)
		}
	}
}

// validateEnv also refuses a name set twice: Dynamo's and KubeRay's CRDs
// key container env by name, so the API server would refuse the object
// (found by FuzzRender), and elsewhere the later value silently wins.
func validateEnv(s *ModelDeploymentSpec, l *diag.List) {
	first := map[string]int{}
	for i, e := range s.Env {
		at := fmt.Sprintf("spec.env[%d].name", i)
		if e.Name == "" {
			l.Errorf(at, "must be set")
			continue
		}
		if j, dup := first[e.Name]; dup {
			l.Errorf(at, "%q duplicates `spec.env[%d].name`: each variable must be set once", e.Name, j)
			continue
		}
		first[e.Name] = i
	}
}

func validateStorage(md *ModelDeployment, l *diag.List) {
	if md.Spec.Model.Storage == nil {
		return
	}
	vols := md.Spec.Model.Storage.Volumes
	if len(vols) > MaxVolumes {
		l.Errorf("spec.model.storage.volumes", "must have at most %d items, got %d", MaxVolumes, len(vols))
	}
	seen := map[string]map[string]int{"name": {}, "mountPath": {}, "claimName": {}}
	purposes := map[string]int{}
	for i := range vols {
		v := &vols[i]
		at := fmt.Sprintf("spec.model.storage.volumes[%d]", i)
		validateVolume(md, v, at, l)
		for key, value := range map[string]string{"name": v.Name, "mountPath": v.MountPath, "claimName": v.ResolvedClaimName(md.Name)} {
			if value == "" {
				continue
			}
			if j, dup := seen[key][value]; dup {
				l.Errorf(at+"."+key, "%q duplicates `spec.model.storage.volumes[%d].%s`: each volume must have a unique %s", value, j, key, key)
			} else {
				seen[key][value] = i
			}
		}
		purposes[v.Purpose]++
		if v.Purpose != PurposeCustom && purposes[v.Purpose] == 2 {
			l.Errorf(at+".purpose", "only one volume may have purpose %q", v.Purpose)
		}
	}
}

func validateVolume(md *ModelDeployment, v *StorageVolume, at string, l *diag.List) {
	if v.Name == "" {
		l.Errorf(at+".name", "must be set")
	} else if len(v.Name) > 63 || !VolumeNameRe.MatchString(v.Name) {
		l.Errorf(at+".name", "%q must be a DNS label: lower-case letters, digits and '-', at most 63 characters, starting and ending with a letter or digit", v.Name)
	}
	checkEnum(l, at+".purpose", v.Purpose, PurposeModelCache, PurposeCompilationCache, PurposeCustom)
	if v.AccessMode != "" {
		checkEnum(l, at+".accessMode", v.AccessMode, AccessModes...)
	}
	validateVolumeSize(md, v, at, l)
	validateMountPath(v, at, l)
	if Bool(v.ReadOnly) && v.Purpose == PurposeCompilationCache {
		l.Warnf(diag.ReadOnlyCache, at+".readOnly", "a read-only compilation cache cannot be written by the engine")
	}
	if Bool(v.ReadOnly) && v.Purpose == PurposeModelCache && md.Spec.Model.Source == SourceHuggingFace {
		l.Warnf(diag.ReadOnlyCache, at+".readOnly", "the model cache is read-only: model download will be skipped")
	}
}

func validateVolumeSize(md *ModelDeployment, v *StorageVolume, at string, l *diag.List) {
	if v.Size == nil {
		if v.ClaimName == "" {
			l.Errorf(at+".claimName", "claimName is required when `size` is not set (it must name an existing PersistentVolumeClaim)")
		}
		if v.AccessMode != "" {
			l.Errorf(at+".accessMode", "may only be set together with `size` (it applies to a managed PVC)")
		}
		if v.StorageClassName != nil {
			l.Errorf(at+".storageClassName", "may only be set together with `size` (it applies to a managed PVC)")
		}
		return
	}
	switch q, err := ParseQuantity(v.SizeString()); {
	case err != nil && !errors.Is(err, ErrNotAQuantity):
		l.Errorf(at+".size", "%v", err)
	case err != nil || q.Sign() <= 0:
		l.Errorf(at+".size", "%q must be a positive quantity such as \"100Gi\"", v.SizeString())
	}
	if Bool(v.ReadOnly) {
		l.Errorf(at+".readOnly", "a managed volume (with `size`) must not be read-only: it starts empty")
	}
	derived := md.Name + "-" + v.Name
	if v.ClaimName != derived {
		l.Errorf(at+".claimName", "%q must be %q (or unset) when `size` is set: managed PVCs are named <model-deployment>-<volume>", v.ClaimName, derived)
	}
	if len(derived) > 253 {
		l.Errorf(at+".claimName", "derived claim name %q is longer than 253 characters", derived)
	}
}

func validateMountPath(v *StorageVolume, at string, l *diag.List) {
	if v.MountPath == "" {
		if v.Purpose == PurposeCustom {
			l.Errorf(at+".mountPath", "mountPath is required when purpose is %q", PurposeCustom)
		}
		return
	}
	if !strings.HasPrefix(v.MountPath, "/") {
		l.Errorf(at+".mountPath", "%q must be an absolute path", v.MountPath)
		return
	}
	clean := path.Clean(v.MountPath)
	if clean == "/" {
		l.Errorf(at+".mountPath", "%q must not be the root directory: a volume there would hide the whole container image", v.MountPath)
		return
	}
	for _, p := range forbiddenMountAt {
		if clean == p || strings.HasPrefix(clean, p+"/") {
			l.Errorf(at+".mountPath", "%q must not be %s or below it: that path belongs to the container runtime", v.MountPath, p)
		}
	}
}
