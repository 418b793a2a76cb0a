package discover

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/airunway-render/airunway-render/api/hub"
)

// operator is how a provider shows in a cluster: the CRD of the kind the
// renderer writes for it, and how its operator's Deployment gives away the
// release.
type operator struct {
	provider string
	// crd is the CustomResourceDefinition of the rendered kind; empty for
	// a provider without one.
	crd string
	// images are repository suffixes of the operator's image, whose tag is
	// the release (KAITO's without a leading v, KubeRay's with one).
	images []string
	// names are app.kubernetes.io/name values of the operator Deployment.
	names []string
	// chart is the Helm chart name, whose helm.sh/chart label ends in the
	// chart version.
	chart string
	// versionArg is an argument of the manager that says the release.
	versionArg string
}

// operators are the providers discovery can find, by name. vLLM needs no
// operator, and llm-d has none: its inference scheduler's image shows it
// is there, but not which llm-d release it belongs to.
var operators = []operator{
	{provider: hub.ProviderDynamo, crd: "dynamographdeployments.nvidia.com",
		images: []string{"/ai-dynamo/kubernetes-operator"}, chart: "dynamo-operator", versionArg: "--operator-version="},
	{provider: hub.ProviderKAITO, crd: "workspaces.kaito.sh",
		images: []string{"/aks/kaito/workspace"}, names: []string{"workspace", "ai-toolchain-operator"}, chart: "workspace"},
	{provider: hub.ProviderKubeRay, crd: "rayservices.ray.io",
		images: []string{"/kuberay/operator"}, names: []string{"kuberay-operator"}, chart: "kuberay-operator"},
	{provider: hub.ProviderLLMD, images: []string{"/llm-d/llm-d-inference-scheduler"}},
}

// ProviderCRD names the CRD whose presence says a provider is installed;
// "" for vLLM and llm-d, which install none.
func ProviderCRD(provider string) string {
	o, _ := operatorFor(provider)
	return o.crd
}

// operatorFor returns the provider's entry in operators.
func operatorFor(provider string) (operator, bool) {
	i := slices.IndexFunc(operators, func(o operator) bool { return o.provider == provider })
	if i < 0 {
		return operator{}, false
	}
	return operators[i], true
}

// release is an operator release found in the cluster, and where.
type release struct {
	version, from string
}

// findRelease looks for the operator's Deployment and reads its release:
// the image tag, else the manager's version argument, else the
// app.kubernetes.io/version label, else the helm.sh/chart label. found is
// false when no Deployment looks like the operator's; version is empty
// when one does but says no release. Deployments the renderer generated
// are skipped: an endpoint picker it deploys may run llm-d's scheduler.
func (o operator) findRelease(deployments []appsv1.Deployment) (found bool, r release, others []release) {
	for i := range deployments {
		d := &deployments[i]
		if d.Annotations[hub.AnnotationGeneratedFrom] != "" || !o.matches(d) {
			continue
		}
		got := release{version: o.version(d), from: fmt.Sprintf("Deployment %s/%s", d.Namespace, d.Name)}
		if !found {
			found, r = true, got
		} else {
			others = append(others, got)
		}
	}
	return found, r, others
}

func (o operator) matches(d *appsv1.Deployment) bool {
	if slices.Contains(o.names, d.Labels["app.kubernetes.io/name"]) {
		return true
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if repo, _ := splitImage(c.Image); o.isImage(repo) {
			return true
		}
	}
	return false
}

func (o operator) isImage(repo string) bool {
	return slices.ContainsFunc(o.images, func(suffix string) bool { return strings.HasSuffix(repo, suffix) })
}

func (o operator) version(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if repo, tag := splitImage(c.Image); o.isImage(repo) && looksLikeRelease(tag) {
			return strings.TrimPrefix(tag, "v")
		}
	}
	if o.versionArg != "" {
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, a := range append(slices.Clone(c.Command), c.Args...) {
				if v, ok := strings.CutPrefix(a, o.versionArg); ok && looksLikeRelease(v) {
					return strings.TrimPrefix(v, "v")
				}
			}
		}
	}
	if v := d.Labels["app.kubernetes.io/version"]; looksLikeRelease(v) {
		return strings.TrimPrefix(v, "v")
	}
	if o.chart != "" {
		if v, ok := strings.CutPrefix(d.Labels["helm.sh/chart"], o.chart+"-"); ok && looksLikeRelease(v) {
			return strings.TrimPrefix(v, "v")
		}
	}
	return ""
}

// splitImage splits an image reference into its repository and tag; a
// digest is dropped, and a reference by digest alone has no tag.
func splitImage(image string) (repo, tag string) {
	image, _, _ = strings.Cut(image, "@")
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[:colon], image[colon+1:]
	}
	return image, ""
}

// looksLikeRelease accepts X.Y[.Z…] with an optional leading v: "latest",
// "main" or a commit are no release.
func looksLikeRelease(s string) bool {
	s = strings.TrimPrefix(s, "v")
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts[:2] {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// discoverProviders lists the providers the cluster runs: those whose CRD
// is installed, llm-d when its scheduler runs, and vLLM, which needs
// nothing installed.
func discoverProviders(c *Cluster) ([]hub.ProviderCapability, []Note) {
	var out []hub.ProviderCapability
	var notes []Note
	for _, o := range operators {
		field := fmt.Sprintf("spec.providers[%s]", o.provider)
		found, r, others := o.findRelease(c.Deployments)
		if o.crd != "" && !c.HasCRD(o.crd) || o.crd == "" && !found {
			continue
		}
		p := hub.ProviderCapability{Name: o.provider}
		switch {
		case o.provider == hub.ProviderLLMD:
			notes = append(notes, Note{Field: field, Text: fmt.Sprintf("llm-d's inference scheduler runs (%s); llm-d has no operator, so its release is not visible: set `version`", r.from)})
		case !found:
			notes = append(notes, Note{Field: field, Text: fmt.Sprintf("CRD %s is installed, but no operator Deployment was recognised: set `version`, or the newest supported release is assumed", o.crd)})
		case r.version == "":
			notes = append(notes, Note{Field: field, Text: fmt.Sprintf("%s shows no release (an image by digest or an untagged one): set `version`", r.from)})
		default:
			p.Version = r.version
			notes = append(notes, Note{Field: field + ".version", Text: "from " + r.from})
		}
		for _, other := range others {
			notes = append(notes, Note{Field: field, Text: fmt.Sprintf("another operator Deployment too: %s (release %q)", other.from, other.version)})
		}
		out = append(out, p)
	}
	out = append(out, hub.ProviderCapability{Name: hub.ProviderVLLM})
	notes = append(notes, Note{Field: "spec.providers[vllm]", Text: "plain Deployments need no operator: remove vllm to keep models on the operators above"})
	return out, notes
}
