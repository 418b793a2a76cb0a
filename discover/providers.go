package discover

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// operator is how a provider shows in a cluster (providers.Detector).
type operator struct {
	provider string
	providers.Detection
}

// operators are the providers discovery can find, in name order, from the
// providers' own detection data; a provider without it needs nothing
// installed (needsNothing).
var operators, needsNothing = detections()

func detections() (found []operator, always []string) {
	for _, p := range builtin.Providers() {
		if d, ok := p.(providers.Detector); ok {
			found = append(found, operator{provider: p.Name(), Detection: d.Detection()})
		} else {
			always = append(always, p.Name())
		}
	}
	return found, always
}

// NeedsNothing says a provider renders plain Kubernetes workloads and
// needs nothing installed (vLLM): discovery lists it in every cluster, so
// its presence there is a choice, not a fact.
func NeedsNothing(provider string) bool { return slices.Contains(needsNothing, provider) }

// ProviderCRD names the CRD whose presence says a provider is installed;
// "" for a provider that installs none.
func ProviderCRD(provider string) string {
	o, _ := operatorFor(provider)
	return o.CRD
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
	if slices.Contains(o.Names, d.Labels["app.kubernetes.io/name"]) {
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
	return slices.ContainsFunc(o.Images, func(suffix string) bool { return strings.HasSuffix(repo, suffix) })
}

func (o operator) version(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if repo, tag := splitImage(c.Image); o.isImage(repo) && looksLikeRelease(tag) {
			return strings.TrimPrefix(tag, "v")
		}
	}
	if o.VersionArg != "" {
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, a := range append(slices.Clone(c.Command), c.Args...) {
				if v, ok := strings.CutPrefix(a, o.VersionArg); ok && looksLikeRelease(v) {
					return strings.TrimPrefix(v, "v")
				}
			}
		}
	}
	if v := d.Labels["app.kubernetes.io/version"]; looksLikeRelease(v) {
		return strings.TrimPrefix(v, "v")
	}
	if o.Chart != "" {
		if v, ok := strings.CutPrefix(d.Labels["helm.sh/chart"], o.Chart+"-"); ok && looksLikeRelease(v) {
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
// is installed, those without a CRD whose Deployment runs (llm-d's
// scheduler), and those that need nothing installed (vLLM).
func discoverProviders(c *Cluster) ([]hub.ProviderCapability, []Note) {
	var out []hub.ProviderCapability
	var notes []Note
	for _, o := range operators {
		field := fmt.Sprintf("spec.providers[%s]", o.provider)
		found, r, others := o.findRelease(c.Deployments)
		if o.CRD != "" && !c.HasCRD(o.CRD) || o.CRD == "" && !found {
			continue
		}
		p := hub.ProviderCapability{Name: o.provider}
		switch {
		case o.CRD == "":
			notes = append(notes, Note{Field: field, Text: fmt.Sprintf("%s runs (%s); %s: set `version`", o.Runs, r.from, o.NoRelease)})
		case !found:
			notes = append(notes, Note{Field: field, Text: fmt.Sprintf("CRD %s is installed, but no operator Deployment was recognised: set `version`, or the newest supported release is assumed", o.CRD)})
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
	for _, name := range needsNothing {
		out = append(out, hub.ProviderCapability{Name: name})
		notes = append(notes, Note{Field: fmt.Sprintf("spec.providers[%s]", name), Text: fmt.Sprintf("renders plain Kubernetes workloads and needs no operator: remove %s to keep models on the operators above", name)})
	}
	return out, notes
}
