package dynamo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// LoRA adapters on Dynamo (docs: "LoRA Adapters" and "Managing Models with
// DynamoModel"; operator source at the commit schemas/ pins): the workers
// run vLLM with LoRA enabled and carry a `modelRef`, the operator gives
// their pods a label from its hash and a headless Service selecting them,
// and one DynamoModel per adapter makes the operator POST the adapter to
// every such pod's system port (`/v1/loras`, 9090, which the operator
// enables on every worker). The adapter's name is what clients send as
// `model`; the frontend and the router learn it from the workers.
const (
	// ModelKind is the operator's per-model resource; it shares the
	// graph's group and version.
	ModelKind = "DynamoModel"

	// AnnotationAdapters carries a digest of the adapters on the workers'
	// pods, so a changed source rolls them: a worker answers a load of an
	// adapter name it already holds with success and keeps the old weights
	// (handlers.py load_lora), and the worker's hot-swap switch would
	// reload every adapter at each of the operator's reconciles.
	AnnotationAdapters = "airunway.ai/lora-adapters"

	modelTypeLoRA = "lora"
	envLoRAOn     = "DYN_LORA_ENABLED"
)

// The releases the workers' LoRA support needs (release notes): Hugging Face
// `hf://` sources from 1.3.0 (#11816; before, only file:// and s3://), and
// the prefill worker's load endpoint, which the operator POSTs to as it does
// to decode, from 1.4.0 (#11520).
var (
	hfSourcesSince      = version.MustParseGeneric("1.3.0")
	disaggregatedSince  = version.MustParseGeneric("1.4.0")
	truthyLoRAEnvValues = []string{"true", "1", "yes"} // the worker's env_bool
)

// checkAdapters refuses what the operator cannot load: adapters on a
// release whose workers cannot fetch them, on another backend than vLLM
// (SGLang is in progress upstream, TensorRT-LLM has none), in mocker mode,
// or with LoRA switched off in `spec.env`.
func checkAdapters(req *providers.Request, l *diag.List) {
	md := req.MD
	if len(md.Spec.Adapters) == 0 {
		return
	}
	switch v, err := hub.ParseRelease(req.Provider.Version); {
	case hub.IsMocker(md):
		l.Errorf("spec.adapters", "are not loaded by Dynamo's mocker backend (annotation %s: %s); remove `spec.adapters` or the annotation", hub.AnnotationDynamoTestBackend, hub.MockerBackend)
	case req.Engine != hub.EngineVLLM:
		l.Errorf("spec.adapters", "are loaded by Dynamo's vllm backend only, not by %q; use `spec.engine.type: vllm` or remove `spec.adapters`", req.Engine)
	case err == nil && v.LessThan(hfSourcesSince):
		l.Errorf("spec.adapters", "need Dynamo %s or later, whose workers fetch `hf://` adapters; the capability file declares %q; upgrade Dynamo or remove `spec.adapters`", hfSourcesSince, req.Provider.Version)
	case err == nil && md.Spec.Mode() == hub.ModeDisaggregated && v.LessThan(disaggregatedSince):
		l.Errorf("spec.adapters", "on disaggregated serving need Dynamo %s or later, whose prefill workers load adapters too; the capability file declares %q", disaggregatedSince, req.Provider.Version)
	}
	for i, e := range md.Spec.Env {
		truthy := slices.ContainsFunc(truthyLoRAEnvValues, func(v string) bool { return strings.EqualFold(v, e.Value) })
		if e.Name == envLoRAOn && e.ValueFrom == nil && !truthy {
			l.Errorf(fmt.Sprintf("spec.env[%d]", i), "%s is %q, which switches the workers' LoRA support off, but `spec.adapters` is set; remove the variable or the adapters", envLoRAOn, e.Value)
		}
	}
}

// baseModelName is the workers' `modelRef` and every DynamoModel's
// `baseModelName`: the key the operator's DynamoModel controller matches,
// within the namespace, to find the pods to load into. It is the
// ModelDeployment's name, not the model id the operator's examples use: the
// key only selects pods (nothing checks it against the served model), and
// another graph in the namespace serving the same model id would otherwise
// get this model's adapters too. It also never changes for a model, which
// matters because the operator refuses a change of `baseModelName`.
func (r *renderer) baseModelName() string { return r.md.Name }

// modelRef is the workers' reference to the base model; nil without
// adapters, so graphs without them render as before.
func (r *renderer) modelRef() *modelReference {
	if len(r.md.Spec.Adapters) == 0 {
		return nil
	}
	return &modelReference{Name: r.baseModelName()}
}

// adaptersDigest is the AnnotationAdapters value: the first 16 hex digits
// of the sha256 of the adapters' names and sources, in order; "" without
// adapters.
func adaptersDigest(md *hub.ModelDeployment) string {
	if len(md.Spec.Adapters) == 0 {
		return ""
	}
	h := sha256.New()
	for _, a := range md.Spec.Adapters {
		fmt.Fprintf(h, "%s\x00%s\x00", a.Name, a.Source)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// dynamoModels renders one DynamoModel per adapter, named
// `<model deployment>-<adapter>`.
func (r *renderer) dynamoModels() []*dynamoModel {
	md := r.md
	var out []*dynamoModel
	for _, a := range md.Spec.Adapters {
		out = append(out, &dynamoModel{
			APIVersion: APIVersion,
			Kind:       ModelKind,
			Metadata: metav1.ObjectMeta{
				Name:        md.Name + "-" + a.Name,
				Namespace:   md.Namespace,
				Labels:      r.labels(),
				Annotations: providers.GeneratedAnnotations(md, nil),
			},
			Spec: dynamoModelSpec{
				ModelName:     a.Name,
				BaseModelName: r.baseModelName(),
				ModelType:     modelTypeLoRA,
				Source:        &modelSource{URI: a.Source},
			},
		})
	}
	return out
}
