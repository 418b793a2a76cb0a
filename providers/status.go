package providers

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/airunway-render/airunway-render/api/hub"
)

// Phases a ModelDeployment's status reports, as upstream's enum spells them.
const (
	PhasePending   = "Pending"
	PhaseDeploying = "Deploying"
	PhaseRunning   = "Running"
	PhaseFailed    = "Failed"
)

// Health is what a provider's primary object says about the deployment,
// translated into ModelDeployment terms, as upstream's per-provider
// StatusTranslator does (providers/<name>/status.go in kaito-project/airunway).
type Health struct {
	Phase   string
	Message string
	// Replicas and Endpoint are nil when the object does not say.
	Replicas *Replicas
	Endpoint *Endpoint
	// Unreadable lists the fields of the object the translation needed
	// but could not read (a list where an object belongs, a number written
	// as a string, a condition without a type...), each naming the field
	// path, what it holds and what is allowed. When it is not empty the
	// rest of Health is not to be trusted: the status reporter says the
	// health is unknown and names these fields.
	Unreadable []string
}

// Replicas of the model server.
type Replicas struct {
	Desired, Ready, Available int32
}

// Endpoint is the in-cluster Service of the model server.
type Endpoint struct {
	Service string
	Port    int32
}

// String is the endpoint as the renderer records it on the model
// (hub.AnnotationEndpoint): "service:port".
func (e Endpoint) String() string { return fmt.Sprintf("%s:%d", e.Service, e.Port) }

// Endpointer is implemented by providers that know, from the model alone,
// the Service and port clients call (the one Health reports once the
// object runs): the renderer records it on the model, and `preview`
// holds it across an upgrade.
type Endpointer interface {
	Endpoint(md *hub.ModelDeployment) Endpoint
}

// Primary names the object whose status stands for a ModelDeployment.
type Primary struct {
	GVK  schema.GroupVersionKind
	Name string
	// Kind as upstream names it in messages ("Workspace", "Deployments").
	Noun string
}

// Reporter is implemented by providers whose health the status reporter
// reads back from the cluster.
type Reporter interface {
	// Primary names the primary object of a rendered ModelDeployment.
	Primary(md *hub.ModelDeployment) Primary
	// Health translates the primary object's status. It must not panic on
	// any JSON the API server may serve, and reports fields of the wrong
	// type in Health.Unreadable.
	Health(obj *unstructured.Unstructured) Health
	// HealthFields lists the fields outside `metadata` and `status` that
	// Health reads, as dotted paths ("[]" for every item of a list): the
	// status reporter caches only those of each primary object
	// (KeepForHealth), and a test holds Health to them.
	HealthFields() []string
}

// PrimaryKinds is implemented by a Reporter whose primary object is one of
// several kinds, as the renderer recorded it on the model
// (hub.AnnotationWorkload): the status reporter watches every one. Primary
// of a model without the record gives the default kind.
type PrimaryKinds interface {
	PrimaryKinds() []schema.GroupVersionKind
}

// WorkloadChooser is implemented by a provider that renders one of several
// primary kinds: Workload names the one it renders for the request, ""
// for its default, and the render records it (hub.AnnotationWorkload).
type WorkloadChooser interface {
	Workload(req *Request) string
}

// KeepForHealth returns what Health needs of an object: its apiVersion,
// kind, metadata and status, and the fields paths name (HealthFields). A
// path through a value of another shape than it says keeps that value
// whole, so Health still reports it unreadable.
func KeepForHealth(obj map[string]any, paths []string) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"apiVersion", "kind", "metadata", "status"} {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	for _, p := range paths {
		keepPath(obj, out, strings.Split(p, "."))
	}
	return out
}

// keepPath copies the value at path from src into dst, creating the maps
// (and, for "[]", the lists of maps) on the way.
func keepPath(src, dst map[string]any, path []string) {
	key, rest := path[0], path[1:]
	v, ok := src[key]
	if !ok {
		return
	}
	if len(rest) == 0 {
		dst[key] = v
		return
	}
	if rest[0] == "[]" {
		items, isList := v.([]any)
		if !isList || len(rest) == 1 {
			dst[key] = v
			return
		}
		kept, _ := dst[key].([]any)
		if len(kept) != len(items) {
			kept = make([]any, len(items))
		}
		for i, item := range items {
			m, isMap := item.(map[string]any)
			if !isMap {
				kept[i] = item
				continue
			}
			into, _ := kept[i].(map[string]any)
			if into == nil {
				into = map[string]any{}
			}
			keepPath(m, into, rest[1:])
			kept[i] = into
		}
		dst[key] = kept
		return
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		dst[key] = v
		return
	}
	into, _ := dst[key].(map[string]any)
	if into == nil {
		into = map[string]any{}
		dst[key] = into
	}
	keepPath(m, into, rest)
}

// MaxMessageBytes bounds every string the status reporter copies from
// another object (a provider's message, a Service name, a Gateway
// address) into a ModelDeployment's status: longer ones are cut to this
// many bytes, at a UTF-8 character boundary, ending in TruncatedMarker.
// It is far below the 32768 characters Kubernetes allows a condition
// message, so a provider object, however large its status, can neither
// get a status write rejected nor make one bloat etcd.
const MaxMessageBytes = 1024

// TruncatedMarker ends a string Truncate cut.
const TruncatedMarker = "…(truncated)"

// Truncate returns s as valid UTF-8 (invalid bytes become U+FFFD) of at
// most limit bytes: a longer s is cut at a character boundary and ends in
// TruncatedMarker. limit must be at least len(TruncatedMarker). It reads
// at most 4×limit bytes of s, so a huge s costs no more than a short one.
func Truncate(s string, limit int) string {
	cut := false
	if len(s) > 4*limit {
		s, cut = s[:4*limit], true
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= limit && !cut {
		return s
	}
	n := min(max(limit-len(TruncatedMarker), 0), len(s))
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + TruncatedMarker
}

// Condition is a status condition as the providers' CRDs write it.
type Condition struct {
	Type, Status, Reason, Message string
}

// Fields reads the fields of an object a translation needs, leniently and
// without panicking on any JSON: a field that is absent or null reads as
// its zero value, and so does one of the wrong type, which is also
// recorded (Problems) with its path, what it holds and what is allowed.
// Strings read are cut to MaxMessageBytes.
type Fields struct {
	obj map[string]any
	// at is the path of obj in the object ("" at its root).
	at       string
	problems *[]string
}

// Read starts reading an object's fields.
func Read(obj *unstructured.Unstructured) *Fields {
	return &Fields{obj: obj.Object, problems: &[]string{}}
}

// maxProblems bounds the problems Fields reports: an object with
// thousands of malformed entries is named by its first few.
const maxProblems = 8

// Problems are the fields read so far that had the wrong type, sorted;
// past maxProblems the last one says how many more there are.
func (f *Fields) Problems() []string {
	if len(*f.problems) == 0 {
		return nil
	}
	out := slices.Clone(*f.problems)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxProblems {
		out = append(out[:maxProblems-1], fmt.Sprintf("and %d more fields", len(out)-maxProblems+1))
	}
	return out
}

// Problem records a field whose value is not allowed (e.g. out of range).
func (f *Fields) Problem(path []string, format string, args ...any) {
	*f.problems = append(*f.problems, f.path(path...)+" "+fmt.Sprintf(format, args...))
}

// field returns the value at path: nil when it or any parent is absent or
// null; a parent that is not an object is a problem.
func (f *Fields) field(path []string) any {
	var v any = f.obj
	for i, p := range path {
		if v == nil {
			return nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			f.wrongType(path[:i], v, "an object")
			return nil
		}
		v = m[p]
	}
	return v
}

func (f *Fields) wrongType(path []string, v any, want string) {
	f.Problem(path, "is %s, want %s", typeName(v), want)
}

// String reads a string field; "" when absent.
func (f *Fields) String(path ...string) string {
	switch v := f.field(path).(type) {
	case nil:
		return ""
	case string:
		return Truncate(v, MaxMessageBytes)
	default:
		f.wrongType(path, v, "a string")
		return ""
	}
}

// Int32 reads a count: an integer from 0 to 2147483647; (0, false) when
// absent or not one.
func (f *Fields) Int32(path ...string) (int32, bool) {
	v := f.field(path)
	var n float64
	switch x := v.(type) {
	case nil:
		return 0, false
	case int64:
		n = float64(x)
	case int32:
		n = float64(x)
	case int:
		n = float64(x)
	case float64:
		n = x
	default:
		f.wrongType(path, v, "an integer")
		return 0, false
	}
	if n != math.Trunc(n) || n < 0 || n > math.MaxInt32 {
		f.Problem(path, "is %v, want an integer from 0 to %d", v, math.MaxInt32)
		return 0, false
	}
	return int32(n), true
}

// Map reads an object field; nil when absent.
func (f *Fields) Map(path ...string) map[string]any {
	switch v := f.field(path).(type) {
	case nil:
		return nil
	case map[string]any:
		return v
	default:
		f.wrongType(path, v, "an object")
		return nil
	}
}

// List reads a list field; nil when absent.
func (f *Fields) List(path ...string) []any {
	switch v := f.field(path).(type) {
	case nil:
		return nil
	case []any:
		return v
	default:
		f.wrongType(path, v, "a list")
		return nil
	}
}

// Each calls fn with a reader of every entry of the object field at path
// (a map of objects, such as Dynamo's services), in key order. An entry
// that is null is skipped; one that is not an object is a problem.
func (f *Fields) Each(path []string, fn func(key string, entry *Fields)) {
	m := f.Map(path...)
	for _, k := range sortedKeys(m) {
		if entry := f.entry(f.path(append(slices.Clone(path), k)...), m[k]); entry != nil {
			fn(k, entry)
		}
	}
}

// EachItem calls fn with a reader of every entry of the list field at
// path, in order. An entry that is null is skipped; one that is not an
// object is a problem.
func (f *Fields) EachItem(path []string, fn func(entry *Fields)) {
	for i, item := range f.List(path...) {
		if entry := f.entry(fmt.Sprintf("%s[%d]", f.path(path...), i), item); entry != nil {
			fn(entry)
		}
	}
}

// entry reads v, found at the rendered path at, as an object.
func (f *Fields) entry(at string, v any) *Fields {
	switch m := v.(type) {
	case nil:
		return nil
	case map[string]any:
		return &Fields{obj: m, at: at, problems: f.problems}
	default:
		*f.problems = append(*f.problems, fmt.Sprintf("%s is %s, want an object", at, typeName(v)))
		return nil
	}
}

// Conditions reads the conditions list at path (`status.conditions`
// unless given) by type. An entry without a type, or without a status,
// is a problem, as is one whose fields are not strings; a status other
// than True and False reads as neither.
func (f *Fields) Conditions(path ...string) map[string]Condition {
	if len(path) == 0 {
		path = []string{"status", "conditions"}
	}
	out := map[string]Condition{}
	f.EachItem(path, func(entry *Fields) {
		c := Condition{Type: entry.String("type"), Status: entry.String("status"), Reason: entry.String("reason"), Message: entry.String("message")}
		for _, field := range []string{"type", "status"} {
			if raw := entry.obj[field]; raw == nil || raw == "" {
				entry.Problem([]string{field}, "is missing, want a non-empty string")
			}
		}
		if c.Type != "" {
			out[c.Type] = c
		}
	})
	return out
}

// maxKeyBytes cuts the keys a path names (a map key is the provider's
// data too).
const maxKeyBytes = 64

// simpleKey is a map key a path can show as `.key`; others are quoted.
var simpleKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// path renders a field path relative to f as `status.services["a b"].replicas`.
func (f *Fields) path(path ...string) string {
	var b strings.Builder
	b.WriteString(f.at)
	for _, p := range path {
		if short := Truncate(p, maxKeyBytes); short == p && simpleKey.MatchString(p) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		} else {
			fmt.Fprintf(&b, "[%q]", short)
		}
	}
	if b.Len() == 0 {
		return "the object"
	}
	return b.String()
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, int32, int, float64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// SaturatingAdd adds counts without wrapping past 2147483647.
func SaturatingAdd(a, b int32) int32 {
	return int32(min(int64(a)+int64(b), math.MaxInt32))
}
