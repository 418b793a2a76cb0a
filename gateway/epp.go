package gateway

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// Endpoint-picker defaults.
const (
	// DefaultEndpointPickerImage is the GAIE release upstream AI Runway
	// pins; it reads `inference.networking.k8s.io/v1` pools only.
	DefaultEndpointPickerImage = "registry.k8s.io/gateway-api-inference-extension/epp:v1.5.0"
	// DefaultV1Alpha2EndpointPickerImage is the last GAIE release that can
	// read `inference.networking.x-k8s.io/v1alpha2` pools (with
	// `--pool-group`, which pickers have from v1.0.0 to v1.4.x).
	DefaultV1Alpha2EndpointPickerImage = "registry.k8s.io/gateway-api-inference-extension/epp:v1.4.0"
	// MinimalEndpointPickerConfig is the plugin configuration of a picker
	// nobody configured: the picker's built-in default profile.
	MinimalEndpointPickerConfig = "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n"

	eppContainer  = "epp"
	eppConfigKey  = "default-plugins.yaml"
	eppConfigDir  = "/config"
	eppConfigVol  = "plugins-config"
	eppHealthName = "inference-extension"
	// eppGracePeriod lets the picker drain streams, as upstream sets it.
	eppGracePeriod = 130
)

// eppName names every picker object `<md>-epp`, shortened with a hash when
// that passes 63 characters (providers.DerivedName).
func eppName(md *hub.ModelDeployment) string { return providers.DerivedName(md.Name, "-epp") }

// pickerSettings are the image and plugin configuration of the picker:
// the provider's (llm-d registers its scheduler) > the capability file's
// cluster-wide `gateway.endpointPicker` > the defaults; image and config
// are chosen independently, as upstream does.
func (pl *plan) pickerSettings() (image, config string) {
	image, config = DefaultEndpointPickerImage, MinimalEndpointPickerConfig
	if pl.group == PoolGroupV1Alpha2 {
		image = DefaultV1Alpha2EndpointPickerImage
	}
	for _, p := range []*hub.EndpointPicker{pl.caps.EndpointPicker, pl.engine.EndpointPicker} {
		if p == nil {
			continue
		}
		if p.Image != "" {
			image = p.Image
		}
		if p.ConfigData != "" {
			config = p.ConfigData
		}
	}
	return image, config
}

// endpointPicker renders the picker the pool names: ServiceAccount, Role,
// RoleBinding, ConfigMap, Deployment and Service, all `<md>-epp`.
func (pl *plan) endpointPicker() ([]providers.Object, error) {
	image, config := pl.pickerSettings()
	objs := []any{
		&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: pl.objectMeta()},
		&rbacv1.Role{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: pl.objectMeta(), Rules: pl.eppRules()},
		&rbacv1.RoleBinding{
			TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: pl.objectMeta(),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: eppName(pl.md)},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: eppName(pl.md), Namespace: pl.md.Namespace}},
		},
		&corev1.ConfigMap{TypeMeta: typeMeta("v1", "ConfigMap"), ObjectMeta: pl.objectMeta(), Data: map[string]string{eppConfigKey: config}},
		pl.eppDeployment(image),
		pl.eppService(),
	}
	out := make([]providers.Object, 0, len(objs))
	for _, o := range objs {
		obj, err := providers.FromTyped(o)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func (pl *plan) objectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        eppName(pl.md),
		Namespace:   pl.md.Namespace,
		Labels:      providers.Merge(pl.labels(), pl.objectLabels()),
		Annotations: providers.GeneratedAnnotations(pl.md, nil),
	}
}

// eppRules let the picker watch the model pods and its pool, hold its
// leader lease, and read the objectives and rewrites of the pool's API.
func (pl *plan) eppRules() []rbacv1.PolicyRule {
	read := []string{"get", "watch", "list"}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: read},
		{APIGroups: []string{pl.group}, Resources: []string{"inferencepools"}, Verbs: read},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create", "get", "update"}},
	}
	if pl.group == PoolGroupV1Alpha2 {
		rules[1].Resources = append(rules[1].Resources, "inferenceobjectives", "inferencemodelrewrites")
	} else {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{PoolGroupV1Alpha2}, Resources: []string{"inferenceobjectives", "inferencemodelrewrites"}, Verbs: read})
	}
	return rules
}

// eppArgs point the picker at its pool. The namespace comes from the pod's
// own (`$(NAMESPACE)`), so a kustomize namespace change keeps it right; a
// v1alpha2 pool needs `--pool-group`, as pickers default to the v1 group.
func (pl *plan) eppArgs() []string {
	args := []string{"--pool-name", pl.pool.name, "--pool-namespace", "$(NAMESPACE)"}
	if pl.group == PoolGroupV1Alpha2 {
		args = append(args, "--pool-group", PoolGroupV1Alpha2)
	}
	return append(args, "--zap-encoder", "json", "--config-file", eppConfigDir+"/"+eppConfigKey, "--tracing=false")
}

func (pl *plan) eppDeployment(image string) *appsv1.Deployment {
	replicas := int32(1)
	grace := int64(eppGracePeriod)
	health := eppHealthName
	probe := func(delay, period, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: EndpointPickerHealthPort, Service: &health}},
			InitialDelaySeconds: delay, PeriodSeconds: period, FailureThreshold: failures,
		}
	}
	container := corev1.Container{
		Name:            eppContainer,
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args:            pl.eppArgs(),
		Ports: []corev1.ContainerPort{
			{Name: "grpc", ContainerPort: EndpointPickerPort, Protocol: corev1.ProtocolTCP},
			{Name: "grpc-health", ContainerPort: EndpointPickerHealthPort, Protocol: corev1.ProtocolTCP},
		},
		Env: []corev1.EnvVar{
			{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		},
		LivenessProbe:  probe(30, 10, 5),
		ReadinessProbe: probe(10, 5, 0),
		VolumeMounts:   []corev1.VolumeMount{{Name: eppConfigVol, MountPath: eppConfigDir}},
	}
	return &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: pl.objectMeta(),
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			// One picker at a time: two would split the pool's load view.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: pl.labels()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: pl.labels()},
				Spec: corev1.PodSpec{
					ServiceAccountName:            eppName(pl.md),
					TerminationGracePeriodSeconds: &grace,
					Containers:                    []corev1.Container{container},
					Volumes: []corev1.Volume{{Name: eppConfigVol, VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: eppName(pl.md)}},
					}}},
					NodeSelector: pl.placement.NodeSelector,
					Tolerations:  pl.placement.Tolerations,
				},
			},
		},
	}
}

func (pl *plan) eppService() *corev1.Service {
	h2c := "kubernetes.io/h2c"
	return &corev1.Service{
		TypeMeta:   typeMeta("v1", "Service"),
		ObjectMeta: pl.objectMeta(),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: pl.labels(),
			Ports: []corev1.ServicePort{{
				Name: "grpc-ext-proc", Protocol: corev1.ProtocolTCP, Port: EndpointPickerPort,
				TargetPort: intstr.FromInt32(EndpointPickerPort), AppProtocol: &h2c,
			}},
		},
	}
}
