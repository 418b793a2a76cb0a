package kuberay

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/airunway-render/airunway-render/api/hub"
)

// ImportPath is the application builder the Serve config names: Ray Serve
// LLM's OpenAI-compatible app (docs.ray.io serve/llm,
// `ray.serve.llm.build_openai_app`), which the rayproject/ray-llm images
// carry. Upstream AI Runway names `vllm_serve:deployment`, a module of
// KubeRay's vLLM sample that no Ray image contains (the sample downloads it
// through `runtime_env.working_dir`), so its application never deploys.
// KubeRay's own Ray Serve LLM sample
// (ray-operator/config/samples/ray-service.llm-serve.yaml) has this shape.
const ImportPath = "ray.serve.llm:build_openai_app"

// ApplicationName is the Serve application's name, as upstream's.
const ApplicationName = "llm"

// replicaActorCPUs is what one Serve replica reserves on its worker: Ray
// Serve LLM puts the replica actor (num_cpus 1 by default) into the first
// bundle of its placement group, and vLLM's Ray workers, one per GPU,
// reserve a GPU and no CPU (LLMServer.get_deployment_options,
// python/ray/llm/_internal/serve/core/server/llm_server.py).
const replicaActorCPUs = 1

// The Serve config in the order a reader expects it; go-yaml v3 keeps a
// struct's field order and sorts map keys, so the text never depends on
// map iteration. Not kyaml's encoder (the same go-yaml): the status
// reporter links this package, and must not link the render engine's
// YAML library.
type serveConfig struct {
	Applications []serveApp `yaml:"applications"`
}

type serveApp struct {
	Name        string    `yaml:"name"`
	RoutePrefix string    `yaml:"route_prefix"`
	ImportPath  string    `yaml:"import_path"`
	Args        serveArgs `yaml:"args"`
}

type serveArgs struct {
	LLMConfigs []llmConfig `yaml:"llm_configs"`
}

// llmConfig is the subset of Ray Serve LLM's LLMConfig the renderer sets
// (python/ray/llm/_internal/serve/core/configs/llm_config.py).
type llmConfig struct {
	ModelLoadingConfig   modelLoadingConfig    `yaml:"model_loading_config"`
	EngineKwargs         map[string]any        `yaml:"engine_kwargs,omitempty"`
	DeploymentConfig     deploymentConfig      `yaml:"deployment_config"`
	PlacementGroupConfig *placementGroupConfig `yaml:"placement_group_config,omitempty"`
}

// modelLoadingConfig: model_id is the name clients send (vLLM's
// served_model_name), model_source the weights. Ray Serve LLM refuses
// `model` and `served_model_name` in engine_kwargs and sets both from here.
type modelLoadingConfig struct {
	ModelID     string `yaml:"model_id"`
	ModelSource string `yaml:"model_source"`
}

type deploymentConfig struct {
	NumReplicas       *int32             `yaml:"num_replicas,omitempty"`
	AutoscalingConfig *autoscalingConfig `yaml:"autoscaling_config,omitempty"`
}

type autoscalingConfig struct {
	MinReplicas           int32 `yaml:"min_replicas"`
	MaxReplicas           int32 `yaml:"max_replicas"`
	TargetOngoingRequests int32 `yaml:"target_ongoing_requests"`
	DownscaleDelayS       int32 `yaml:"downscale_delay_s"`
}

// placementGroupConfig is where a replica's engine workers go. Ray Serve
// LLM's default is one {GPU: 1} bundle per GPU with strategy PACK, which
// may split a replica over two Ray nodes; STRICT_PACK keeps it on one
// worker pod, where NCCL runs over NVLink and /dev/shm.
type placementGroupConfig struct {
	Bundles  []map[string]int `yaml:"bundles,flow"`
	Strategy string           `yaml:"strategy"`
}

// ServeConfig is the RayService's serveConfigV2 for md: one application
// whose one LLMConfig serves the model under its served name, with the
// engine keyword arguments kwargs, scaling.replicas replicas (or Ray
// Serve's autoscaling) and, for a replica on more than one GPU, a
// placement group on one Ray node.
func ServeConfig(md *hub.ModelDeployment, kwargs map[string]any) string {
	s := &md.Spec
	served := s.Model.ServedName
	if served == "" {
		served = s.Model.ID
	}
	c := llmConfig{
		ModelLoadingConfig: modelLoadingConfig{ModelID: served, ModelSource: s.Model.ID},
		EngineKwargs:       kwargs,
	}
	if a := s.Autoscaling(); a != nil {
		c.DeploymentConfig.AutoscalingConfig = &autoscalingConfig{
			MinReplicas: *a.MinReplicas, MaxReplicas: *a.MaxReplicas,
			TargetOngoingRequests: *a.Target, DownscaleDelayS: *a.ScaleDownDelaySeconds,
		}
	} else {
		n := s.Replicas()
		c.DeploymentConfig.NumReplicas = &n
	}
	if gpus := ReplicaGPUs(s); gpus > 1 {
		bundles := make([]map[string]int, gpus)
		for i := range bundles {
			bundles[i] = map[string]int{"GPU": 1}
		}
		c.PlacementGroupConfig = &placementGroupConfig{Bundles: bundles, Strategy: "STRICT_PACK"}
	}
	config := serveConfig{Applications: []serveApp{{
		Name: ApplicationName, RoutePrefix: "/", ImportPath: ImportPath,
		Args: serveArgs{LLMConfigs: []llmConfig{c}},
	}}}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(config); err != nil {
		// Strings, numbers, booleans and the maps and lists of decoded
		// JSON always encode.
		panic(fmt.Sprintf("kuberay: encoding the Serve config: %v", err))
	}
	return b.String()
}
