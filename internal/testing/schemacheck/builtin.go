package schemacheck

import (
	"encoding/json"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	sigsjson "sigs.k8s.io/json"
)

// builtinKind knows how to decode one built-in kind and which semantic
// checks apply to it.
type builtinKind struct {
	newObj func() any
	check  func(obj any) []string // nil: strict decoding is all we check
}

var builtins = map[string]builtinKind{
	"apps/v1 Deployment": {
		newObj: func() any { return &appsv1.Deployment{} },
		check:  func(o any) []string { return checkDeployment(o.(*appsv1.Deployment)) },
	},
	"batch/v1 Job": {
		newObj: func() any { return &batchv1.Job{} },
		check:  func(o any) []string { return checkJob(o.(*batchv1.Job)) },
	},
	"v1 Service": {
		newObj: func() any { return &corev1.Service{} },
		check:  func(o any) []string { return checkService(o.(*corev1.Service)) },
	},
	"resource.k8s.io/v1 ResourceClaimTemplate": {
		newObj: func() any { return &resourcev1.ResourceClaimTemplate{} },
		check:  func(o any) []string { return checkClaimTemplate(o.(*resourcev1.ResourceClaimTemplate)) },
	},
	"autoscaling/v2 HorizontalPodAutoscaler":   {newObj: func() any { return &autoscalingv2.HorizontalPodAutoscaler{} }},
	"v1 ServiceAccount":                        {newObj: func() any { return &corev1.ServiceAccount{} }},
	"v1 ConfigMap":                             {newObj: func() any { return &corev1.ConfigMap{} }},
	"v1 PersistentVolumeClaim":                 {newObj: func() any { return &corev1.PersistentVolumeClaim{} }},
	"rbac.authorization.k8s.io/v1 Role":        {newObj: func() any { return &rbacv1.Role{} }},
	"rbac.authorization.k8s.io/v1 RoleBinding": {newObj: func() any { return &rbacv1.RoleBinding{} }},
}

func builtinKey(obj map[string]any) string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return apiVersion + " " + kind
}

func isBuiltin(obj map[string]any) bool {
	_, ok := builtins[builtinKey(obj)]
	return ok
}

// ValidateBuiltin checks a built-in kind by decoding it strictly into its
// k8s.io/api type, the same decoder (sigs.k8s.io/json) the API server uses
// for strict field validation, then running a few cheap semantic checks.
// Every problem starts with (or names) its field path.
func ValidateBuiltin(obj map[string]any) []string {
	if obj == nil {
		return []string{"schemacheck: nil object"}
	}
	b, ok := builtins[builtinKey(obj)]
	if !ok {
		return []string{fmt.Sprintf("schemacheck: %q is not a supported built-in kind", builtinKey(obj))}
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return []string{fmt.Sprintf("schemacheck: object is not JSON-serialisable: %v", err)}
	}

	typed := b.newObj()
	strictErrs, err := sigsjson.UnmarshalStrict(data, typed, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	var problems []string
	for _, e := range strictErrs {
		problems = append(problems, e.Error()) // e.g. unknown field "spec.template.spec.bogus"
	}
	if err != nil {
		// A type error leaves the typed object partly filled, so semantic
		// checks on it would be noise.
		problems = append(problems, err.Error())
		sort.Strings(problems)
		return problems
	}
	if name := typed.(metav1.Object).GetName(); name == "" {
		problems = append(problems, "metadata.name: Required value")
	}
	if b.check != nil {
		problems = append(problems, b.check(typed)...)
	}
	sort.Strings(problems)
	return problems
}

func checkDeployment(d *appsv1.Deployment) []string {
	var problems []string
	tmplLabels := labels.Set(d.Spec.Template.Labels)
	switch sel := d.Spec.Selector; {
	case sel == nil:
		problems = append(problems, "spec.selector: Required value")
	case len(sel.MatchLabels)+len(sel.MatchExpressions) == 0:
		problems = append(problems, "spec.selector: Invalid value: empty selector is invalid for deployment")
	default:
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			problems = append(problems, fmt.Sprintf("spec.selector: Invalid value: %v", err))
		} else if !s.Matches(tmplLabels) {
			problems = append(problems, fmt.Sprintf("spec.template.metadata.labels: Invalid value: %v: `selector` (%s) does not match template `labels`", d.Spec.Template.Labels, s))
		}
	}
	return append(problems, checkPodSpec("spec.template.spec", &d.Spec.Template.Spec)...)
}

func checkJob(j *batchv1.Job) []string {
	problems := checkPodSpec("spec.template.spec", &j.Spec.Template.Spec)
	// An empty restartPolicy defaults to Always, which Jobs reject.
	if rp := j.Spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever {
		problems = append(problems, fmt.Sprintf("spec.template.spec.restartPolicy: Unsupported value: %q: supported values: \"OnFailure\", \"Never\"", rp))
	}
	return problems
}

// checkClaimTemplate enforces what the API server requires of a device
// request: a name, exactly one of exactly and firstAvailable, a device
// class, a positive count for ExactCount.
func checkClaimTemplate(t *resourcev1.ResourceClaimTemplate) []string {
	var problems []string
	requests := t.Spec.Spec.Devices.Requests
	if len(requests) == 0 {
		problems = append(problems, "spec.spec.devices.requests: Required value")
	}
	for i, r := range requests {
		p := fmt.Sprintf("spec.spec.devices.requests[%d]", i)
		switch {
		case r.Name == "":
			problems = append(problems, p+".name: Required value")
		case (r.Exactly == nil) == (len(r.FirstAvailable) == 0):
			problems = append(problems, p+": Invalid value: exactly one of `exactly` or `firstAvailable` is required")
		case r.Exactly != nil && r.Exactly.DeviceClassName == "":
			problems = append(problems, p+".exactly.deviceClassName: Required value")
		case r.Exactly != nil && r.Exactly.AllocationMode == resourcev1.DeviceAllocationModeExactCount && r.Exactly.Count <= 0:
			problems = append(problems, p+".exactly.count: Invalid value: must be greater than zero")
		}
	}
	return problems
}

// checkPodSpec enforces the pod rules that rendering bugs most often break:
// containers present, names non-empty and unique, mounts backed by volumes,
// container claims backed by pod resource claims.
func checkPodSpec(path string, spec *corev1.PodSpec) []string {
	var problems []string
	claims := map[string]bool{}
	for _, c := range spec.ResourceClaims {
		claims[c.Name] = true
	}
	if len(spec.Containers) == 0 {
		problems = append(problems, path+".containers: Required value")
	}
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	names := map[string]bool{}
	check := func(field string, containers []corev1.Container) {
		for i, c := range containers {
			p := fmt.Sprintf("%s.%s[%d]", path, field, i)
			switch {
			case c.Name == "":
				problems = append(problems, p+".name: Required value")
			case names[c.Name]:
				problems = append(problems, fmt.Sprintf("%s.name: Duplicate value: %q", p, c.Name))
			}
			names[c.Name] = true
			for j, m := range c.VolumeMounts {
				if !volumes[m.Name] {
					problems = append(problems, fmt.Sprintf("%s.volumeMounts[%d].name: Not found: %q", p, j, m.Name))
				}
			}
			for j, rc := range c.Resources.Claims {
				if !claims[rc.Name] {
					problems = append(problems, fmt.Sprintf("%s.resources.claims[%d].name: Not found: %q", p, j, rc.Name))
				}
			}
		}
	}
	// Init and regular containers share one name space in the API server.
	check("initContainers", spec.InitContainers)
	check("containers", spec.Containers)
	return problems
}

func checkService(s *corev1.Service) []string {
	var problems []string
	headless := s.Spec.ClusterIP == corev1.ClusterIPNone
	if len(s.Spec.Ports) == 0 && !headless && s.Spec.Type != corev1.ServiceTypeExternalName {
		problems = append(problems, "spec.ports: Required value")
	}
	names := map[string]bool{}
	for i, p := range s.Spec.Ports {
		path := fmt.Sprintf("spec.ports[%d]", i)
		if p.Port < 1 || p.Port > 65535 {
			problems = append(problems, fmt.Sprintf("%s.port: Invalid value: %d: must be between 1 and 65535, inclusive", path, p.Port))
		}
		// Names are optional only for a single port, and must be unique.
		if len(s.Spec.Ports) > 1 && p.Name == "" {
			problems = append(problems, path+".name: Required value")
		} else if p.Name != "" && names[p.Name] {
			problems = append(problems, fmt.Sprintf("%s.name: Duplicate value: %q", path, p.Name))
		}
		names[p.Name] = true
	}
	return problems
}
