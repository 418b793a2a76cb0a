package dynamo

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

	modelTypeLoRA = "lora"
	envLoRAOn     = "DYN_LORA_ENABLED"
)

// checkAdapters refuses what the operator cannot load: Dynamo's LoRA
// support is its vLLM backend's (SGLang is in progress upstream, TensorRT-LLM
// has none), and the mocker has no adapters to load. Every supported Dynamo
// release has the DynamoModel (0.9 and later; the capability file's range
// starts at 1.1.0).
func checkAdapters(req *providers.Request, l *diag.List) {
	if len(req.MD.Spec.Adapters) == 0 {
		return
	}
	switch {
	case hub.IsMocker(req.MD):
		l.Errorf("spec.adapters", "are not loaded by Dynamo's mocker backend (annotation %s: %s); remove `spec.adapters` or the annotation", hub.AnnotationDynamoTestBackend, hub.MockerBackend)
	case req.Engine != hub.EngineVLLM:
		l.Errorf("spec.adapters", "are loaded by Dynamo's vllm backend only, not by %q; use `spec.engine.type: vllm` or remove `spec.adapters`", req.Engine)
	}
}

// modelRef is the workers' discovery key for the operator's DynamoModel
// controller, which matches it against each DynamoModel's `baseModelName`
// within the namespace. It is the ModelDeployment's name, not the model id
// the operator's examples use: the key only selects pods (nothing checks it
// against the served model), and another graph in the namespace serving the
// same model id would otherwise get this model's adapters too. It also
// never changes for a model, which matters because the operator refuses a
// change of `baseModelName`.
func (r *renderer) modelRef() *modelReference {
	if len(r.md.Spec.Adapters) == 0 {
		return nil
	}
	return &modelReference{Name: r.md.Name}
}

// loraArgs are vLLM's LoRA flags for the worker: room for every adapter,
// loaded at runtime by the operator rather than named on the command line.
func (r *renderer) loraArgs() []string {
	if len(r.md.Spec.Adapters) == 0 {
		return nil
	}
	cl := providers.NewCommandLine(r.md)
	cl.AddLoRACapacity(len(r.md.Spec.Adapters))
	return cl.Tokens()
}

// dynamoModels renders one DynamoModel per adapter, named
// `<model deployment>-<adapter>`.
func (r *renderer) dynamoModels() []*dynamoModel {
	md := r.md
	ref := r.modelRef()
	var out []*dynamoModel
	for _, a := range md.Spec.Adapters {
		out = append(out, &dynamoModel{
			APIVersion: APIVersion,
			Kind:       ModelKind,
			Metadata: metav1.ObjectMeta{
				Name:        md.Name + "-" + a.Name,
				Namespace:   md.Namespace,
				Labels:      providers.BaseLabels(md, r.engine),
				Annotations: providers.GeneratedAnnotations(md, nil),
			},
			Spec: dynamoModelSpec{
				ModelName:     a.Name,
				BaseModelName: ref.Name,
				ModelType:     modelTypeLoRA,
				Source:        &modelSource{URI: a.Source},
			},
		})
	}
	return out
}
