package kubefeatures

import (
	"fmt"
	"slices"
	"strings"
)

// Feature is a field whose Kubernetes release matters.
type Feature struct {
	// Name is how declarations and the matrix refer to it.
	Name string
	// Since is the first minor release whose API server keeps the field
	// with its default feature gates.
	Since Minor
	// History says when it went beta and GA, for docs/capability-file.md.
	History string
	// InputDependent features appear only when an input asks for them (a
	// volume's access mode, a DRA pool); the matrix lists them apart, as
	// "Used by … needs".
	InputDependent bool
	// UsedBy says which input brings an InputDependent feature in, for
	// the matrix: "a volume with the ReadWriteOncePod access mode".
	UsedBy string
	// in reports whether the field at path (map keys; list items as "[]")
	// with value is this feature.
	in func(path []string, value any) bool
}

// The releases the renderer is checked against: rendered objects are
// validated with the schemas of k8s.io/api SchemaRelease, and the status
// reporter's tests run on kube-apiserver ReporterTested (envtest). A test
// keeps both equal to go.mod and hack/install-envtest.sh.
const (
	SchemaRelease  Minor = 37
	ReporterTested       = "1.37.1"
)

// Minor is a Kubernetes minor release of 1.x.
type Minor int

func (m Minor) String() string { return fmt.Sprintf("1.%d", int(m)) }

// The features, oldest first.
var Features = []Feature{
	{Name: "startupProbe", Since: 18, History: "beta 1.18, GA 1.20",
		in: func(p []string, _ any) bool { return last(p, "startupProbe") }},
	{Name: "Service appProtocol", Since: 19, History: "beta 1.19, GA 1.20",
		in: func(p []string, _ any) bool { return last(p, "ports", "[]", "appProtocol") }},
	{Name: "gRPC probes", Since: 24, History: "beta 1.24, GA 1.27",
		in: func(p []string, _ any) bool {
			return last(p, "livenessProbe", "grpc") || last(p, "readinessProbe", "grpc") || last(p, "startupProbe", "grpc")
		}},
	{Name: "ReadWriteOncePod access mode", Since: 27, History: "beta 1.27, GA 1.29", InputDependent: true,
		UsedBy: "a volume with the ReadWriteOncePod access mode",
		in:     func(p []string, v any) bool { return last(p, "accessModes", "[]") && v == "ReadWriteOncePod" }},
	// Pools whose GPUs are DRA devices (capability file
	// `gpu.deviceClassName`): the pods' resource claims and the
	// ResourceClaimTemplate of resource.k8s.io/v1, GA in 1.34.
	{Name: "Dynamic Resource Allocation", Since: 34, History: "beta 1.32 (off by default), GA 1.34", InputDependent: true,
		UsedBy: "a node pool whose GPUs are DRA devices (`gpu.deviceClassName`: resource claims, ResourceClaimTemplate)",
		in: func(p []string, _ any) bool {
			return last(p, "spec", "resourceClaims") || last(p, "spec", "spec", "devices")
		}},
}

// Lookup returns the feature called name.
func Lookup(name string) (Feature, bool) {
	i := slices.IndexFunc(Features, func(f Feature) bool { return f.Name == name })
	if i < 0 {
		return Feature{}, false
	}
	return Features[i], true
}

// Scan returns the names of the features an object (decoded JSON) uses,
// in the order of Features. Nested objects count: a pod template inside a
// custom resource reaches the API server when the operator creates the pod.
func Scan(obj map[string]any) []string {
	found := map[string]bool{}
	walk(nil, obj, found)
	var names []string
	for _, f := range Features {
		if found[f.Name] {
			names = append(names, f.Name)
		}
	}
	return names
}

func walk(path []string, v any, found map[string]bool) {
	for _, f := range Features {
		if len(path) > 0 && f.in(path, v) {
			found[f.Name] = true
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			walk(append(path, k), child, found)
		}
	case []any:
		for _, child := range v {
			walk(append(path, "[]"), child, found)
		}
	}
}

// last reports whether path ends with suffix.
func last(path []string, suffix ...string) bool {
	return len(path) >= len(suffix) && slices.Equal(path[len(path)-len(suffix):], suffix)
}

// Oldest is the oldest release that keeps every named feature, with the
// features that set it; 0 and nil when names is empty. It panics on an
// unknown name: declarations are code, and a test reads them all.
func Oldest(names []string) (Minor, []string) {
	var at Minor
	var why []string
	for _, n := range names {
		f, ok := Lookup(n)
		if !ok {
			panic(fmt.Sprintf("kubefeatures: unknown feature %q", n))
		}
		switch {
		case f.Since > at:
			at, why = f.Since, []string{n}
		case f.Since == at:
			why = append(why, n)
		}
	}
	return at, why
}

// Describe says which release a set of features needs, for the matrix:
// "≥ 1.24 (gRPC probes)", or "any (core APIs only)" when it uses none.
func Describe(names []string) string {
	at, why := Oldest(names)
	if at == 0 {
		return "any (core APIs only)"
	}
	return fmt.Sprintf("≥ %s (%s)", at, strings.Join(why, ", "))
}
