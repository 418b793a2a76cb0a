package hub

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/airunway-render/airunway-render/diag"
)

// Input limits. The renderer runs on YAML from any contributor inside Argo
// CD's repo server and CI, so every input is bounded before it is decoded
// into Go values. A larger input is an error, never a truncation.
//
// The first four are one run's input budget (internal/budget), charged by
// every reader before the work they bound; yamlerr.MaxExpandedNodes bounds
// each object. Together they hold one run of `render` or the function
// under 0.95 GiB of peak RSS as shipped, with the 900 MiB soft memory limit
// the binary sets (1.8 GiB without it), whatever the input within them:
// the worst is the most nodes, in dense YAML, or the most documents, nodes
// and bytes at once (hack/procbench, BENCHMARKS.md "Inputs at the
// limits"). `render` refuses an input past them within 0.5 GiB, the
// function within 70 MiB: it counts its ResourceList's nodes before it
// parses the list, one YAML document, whole.
const (
	// MaxInputBytes bounds one run's whole input: the ResourceList on stdin,
	// or the files given to `render` together. It is far above a real
	// platform's repository (10,000 rendered models are about 25 MB) and
	// low enough that parsing it cannot exhaust a repo server.
	MaxInputBytes = 64 << 20
	// MaxInputDocuments bounds the YAML documents (objects) of one run's
	// input: the documents of the files given to `render`, the items of a
	// ResourceList. Every object costs bookkeeping beyond its bytes, about
	// 10 KiB of peak memory for the smallest as `render` holds it, so
	// 64 MiB of tiny documents would cost gigabytes (the 20 MB of the
	// issue, 381,300 documents, took 4.3 GB). 10,000 models are 10,000
	// documents; rendered with their generated objects, 24,000 (what kpt
	// hands the function the second time it renders a package).
	MaxInputDocuments = 50_000
	// MaxInputNodes bounds the YAML nodes of one run's input, counted per
	// object with aliases expanded: what the parsed trees hold, about
	// 170 bytes a node and three times that at peak, and what the tools
	// after the renderer expand. 10,000 models are 442,000 nodes, a
	// kustomize build of them with an overlay's other objects a little
	// more. Rendered with their generated objects they are 2,070,000 as the
	// function counts them: kpt's second run over one package of 10,000
	// models is at the limit, and a bigger package must be split.
	MaxInputNodes = 1 << 21
	// MaxInputDocumentBytes bounds one YAML document of the files and
	// streams the renderer reads on their own (every document but the
	// ResourceList): the parser builds a document's whole tree before its
	// nodes can be counted, at most about one node per byte. The largest
	// real objects, CRDs, are far smaller: Dynamo's is 1.6 MB.
	MaxInputDocumentBytes = 4 << 20
	// MaxObjectBytes bounds one ModelDeployment, ClusterCapabilities or
	// ModelCatalog object as JSON, after YAML aliases are expanded. The API
	// server stores at most 1.5 MiB per object, so nothing real comes near
	// it (a ModelCatalog row is about 600 bytes).
	MaxObjectBytes = 1 << 20
	// MaxObjectDepth bounds how deeply a ModelDeployment,
	// ClusterCapabilities or ModelCatalog object nests, counting the object itself as level
	// 1. The deepest real field, a probe header in an override of a Dynamo
	// worker's pod spec, is at about level 14.
	MaxObjectDepth = 64
)

// CheckLimits checks the size and nesting of one object's JSON before it is
// decoded. The depth check is a single scan; only when it fails is the
// object decoded once more, to name the path that goes too deep.
func CheckLimits(data []byte, kind string) diag.List {
	var l diag.List
	if len(data) > MaxObjectBytes {
		l.Errorf("", "is %d bytes as JSON; a %s must be at most %s (%d bytes): expand fewer YAML aliases, or move data out of it", len(data), kind, FormatBytes(MaxObjectBytes), MaxObjectBytes)
		return l
	}
	if jsonDepth(data) > MaxObjectDepth {
		l.Errorf(deepPath(data), "nests more than %d levels deep; a %s must nest at most %d levels", MaxObjectDepth, kind, MaxObjectDepth)
	}
	return l
}

// jsonDepth returns the deepest nesting of objects and arrays in data,
// skipping brackets inside strings.
func jsonDepth(data []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// deepPath names the first field path that reaches past MaxObjectDepth,
// cut there, as in `spec.provider.overrides.a.a.a`.
func deepPath(data []byte) string {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	path, _ := walkDeep(v, "", 1)
	return path
}

func walkDeep(v any, at string, depth int) (string, bool) {
	switch t := v.(type) {
	case map[string]any:
		if depth > MaxObjectDepth {
			return at, true
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := walkDeep(t[k], strings.TrimPrefix(at+"."+k, "."), depth+1); ok {
				return p, true
			}
		}
	case []any:
		if depth > MaxObjectDepth {
			return at, true
		}
		for i, e := range t {
			if p, ok := walkDeep(e, fmt.Sprintf("%s[%d]", at, i), depth+1); ok {
				return p, true
			}
		}
	}
	return "", false
}

// FormatBytes prints a byte count the way the limits are documented:
// "64 MiB", "1 MiB", "1.5 MiB", "812 KiB", "17 bytes".
func FormatBytes(n int) string {
	switch {
	case n >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MiB"
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
