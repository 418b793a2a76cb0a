package providers

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestTruncate(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name, in string
		limit    int
		want     string
	}{
		{"short is kept", "image pull backoff", 1024, "image pull backoff"},
		{"exactly the limit is kept", strings.Repeat("a", 1024), 1024, strings.Repeat("a", 1024)},
		{"one byte over is cut", strings.Repeat("a", 1025), 1024, strings.Repeat("a", 1024-len(TruncatedMarker)) + TruncatedMarker},
		{"1 MiB is cut", long, 1024, long[:1024-len(TruncatedMarker)] + TruncatedMarker},
		// 1010 bytes are kept: "é" is 2 bytes, so the cut falls inside
		// the 506th and backs off to 505 characters.
		{"cut at a character boundary", strings.Repeat("é", 600), 1024, strings.Repeat("é", 505) + TruncatedMarker},
		{"four-byte characters", strings.Repeat("🚀", 300), 1024, strings.Repeat("🚀", 252) + TruncatedMarker},
		{"invalid UTF-8 is replaced", "bad \xff byte", 1024, "bad \uFFFD byte"},
		{"limit of the marker alone", long, len(TruncatedMarker), TruncatedMarker},
		{"a huge run of invalid bytes still says it was cut", strings.Repeat("\xff", 1<<20), 1024, "\uFFFD" + TruncatedMarker},
		{"empty", "", 1024, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.in, tc.limit)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, len(got), tc.limit)
			require.True(t, utf8.ValidString(got))
			require.Equal(t, got, Truncate(got, tc.limit), "truncating twice changes nothing")
		})
	}
}

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	obj := &unstructured.Unstructured{}
	require.NoError(t, obj.UnmarshalJSON(js))
	return obj
}

// TestFields: every read of a field of the wrong type reads as its zero
// value and names the field, what it holds and what is allowed; absent
// and null fields are no problem.
func TestFields(t *testing.T) {
	const head = "apiVersion: v1\nkind: Thing\nmetadata: {name: x}\n"
	type read func(f *Fields) any
	str := func(path ...string) read { return func(f *Fields) any { return f.String(path...) } }
	num := func(path ...string) read {
		return func(f *Fields) any { n, ok := f.Int32(path...); return []any{n, ok} }
	}
	conditions := func(f *Fields) any { return f.Conditions() }
	for _, tc := range []struct {
		name, doc string
		read      read
		want      any
		problems  []string
	}{
		{"string", "status: {state: Ready}", str("status", "state"), "Ready", nil},
		{"absent string", "", str("status", "state"), "", nil},
		{"null status", "status: null", str("status", "state"), "", nil},
		{"null string", "status: {state: null}", str("status", "state"), "", nil},
		{"number as a string", "status: {state: 5}", str("status", "state"), "", []string{"status.state is a number, want a string"}},
		{"object as a string", "status: {message: {a: b}}", str("status", "message"), "", []string{"status.message is an object, want a string"}},
		{"status is a string", "status: broken", str("status", "state"), "", []string{"status is a string, want an object"}},
		{"status is a list", "status: [1, 2]", str("status", "state"), "", []string{"status is a list, want an object"}},
		{"huge string is cut", "status: {message: " + strings.Repeat("m", 1<<20) + "}", str("status", "message"),
			strings.Repeat("m", MaxMessageBytes-len(TruncatedMarker)) + TruncatedMarker, nil},

		{"count", "status: {readyReplicas: 3}", num("status", "readyReplicas"), []any{int32(3), true}, nil},
		{"integral float count", "status: {readyReplicas: 3.0}", num("status", "readyReplicas"), []any{int32(3), true}, nil},
		{"absent count", "status: {}", num("status", "readyReplicas"), []any{int32(0), false}, nil},
		{"null count", "status: {readyReplicas: null}", num("status", "readyReplicas"), []any{int32(0), false}, nil},
		{"count as a string", `status: {readyReplicas: "3"}`, num("status", "readyReplicas"), []any{int32(0), false},
			[]string{"status.readyReplicas is a string, want an integer"}},
		{"negative count", "status: {readyReplicas: -1}", num("status", "readyReplicas"), []any{int32(0), false},
			[]string{"status.readyReplicas is -1, want an integer from 0 to 2147483647"}},
		{"count past int32", "status: {readyReplicas: 4294967296}", num("status", "readyReplicas"), []any{int32(0), false},
			[]string{"status.readyReplicas is 4294967296, want an integer from 0 to 2147483647"}},
		{"fractional count", "status: {readyReplicas: 2.5}", num("status", "readyReplicas"), []any{int32(0), false},
			[]string{"status.readyReplicas is 2.5, want an integer from 0 to 2147483647"}},
		{"boolean count", "status: {readyReplicas: true}", num("status", "readyReplicas"), []any{int32(0), false},
			[]string{"status.readyReplicas is a boolean, want an integer"}},
		{"largest count", "status: {readyReplicas: 2147483647}", num("status", "readyReplicas"), []any{int32(math.MaxInt32), true}, nil},

		{"conditions", `status: {conditions: [{type: Available, status: "True", reason: R, message: M}]}`, conditions,
			map[string]Condition{"Available": {Type: "Available", Status: "True", Reason: "R", Message: "M"}}, nil},
		{"no conditions", "status: {}", conditions, map[string]Condition{}, nil},
		{"null conditions", "status: {conditions: null}", conditions, map[string]Condition{}, nil},
		{"null entry is skipped", `status: {conditions: [null, {type: A, status: "True"}]}`, conditions,
			map[string]Condition{"A": {Type: "A", Status: "True"}}, nil},
		{"conditions not a list", "status: {conditions: {type: Available}}", conditions, map[string]Condition{},
			[]string{"status.conditions is an object, want a list"}},
		{"conditions a string", "status: {conditions: Available}", conditions, map[string]Condition{},
			[]string{"status.conditions is a string, want a list"}},
		{"entry not an object", `status: {conditions: [Available, {type: A, status: "True"}]}`, conditions,
			map[string]Condition{"A": {Type: "A", Status: "True"}}, []string{"status.conditions[0] is a string, want an object"}},
		{"entry without a type", `status: {conditions: [{status: "True"}]}`, conditions, map[string]Condition{},
			[]string{"status.conditions[0].type is missing, want a non-empty string"}},
		{"entry without a status", `status: {conditions: [{type: A}, {type: B, status: ""}]}`, conditions,
			map[string]Condition{"A": {Type: "A"}, "B": {Type: "B"}},
			[]string{"status.conditions[0].status is missing, want a non-empty string", "status.conditions[1].status is missing, want a non-empty string"}},
		{"entry with a boolean status", `status: {conditions: [{type: A, status: true}]}`, conditions,
			map[string]Condition{"A": {Type: "A"}}, []string{"status.conditions[0].status is a boolean, want a string"}},
		{"unknown condition status reads as neither", `status: {conditions: [{type: A, status: Maybe}]}`, conditions,
			map[string]Condition{"A": {Type: "A", Status: "Maybe"}}, nil},
		{"entry with a list message", `status: {conditions: [{type: A, status: "True", message: [x]}]}`, conditions,
			map[string]Condition{"A": {Type: "A", Status: "True"}}, []string{"status.conditions[0].message is a list, want a string"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Read(object(t, head+tc.doc))
			require.Equal(t, tc.want, tc.read(f))
			require.Equal(t, tc.problems, f.Problems())
		})
	}
}

// TestFieldsPaths: entries of maps and lists are named by their key or
// index; keys that are not plain names are quoted (and cut), so a hostile
// key cannot pass for a path.
func TestFieldsPaths(t *testing.T) {
	f := Read(object(t, `apiVersion: v1
kind: Thing
metadata: {name: x}
status:
  services:
    Frontend: {replicas: "1"}
    "a.b c": {replicas: -2}
    `+strings.Repeat("k", 100)+`: {replicas: "1"}
    broken: 7
    gone: null
  groups: [{replicas: x}, 3]
`))
	var keys []string
	f.Each([]string{"status", "services"}, func(k string, svc *Fields) {
		keys = append(keys, k)
		svc.Int32("replicas")
	})
	f.EachItem([]string{"status", "groups"}, func(g *Fields) { g.Int32("replicas") })
	require.Equal(t, []string{"Frontend", "a.b c", strings.Repeat("k", 100)}, keys, "objects in key order; null and non-objects skipped")
	require.Equal(t, []string{
		`status.groups[0].replicas is a string, want an integer`,
		`status.groups[1] is a number, want an object`,
		`status.services.Frontend.replicas is a string, want an integer`,
		`status.services.broken is a number, want an object`,
		`status.services["a.b c"].replicas is -2, want an integer from 0 to 2147483647`,
		`status.services["` + strings.Repeat("k", 64-len(TruncatedMarker)) + TruncatedMarker + `"].replicas is a string, want an integer`,
	}, f.Problems())
}

// TestFieldsProblemsBounded: thousands of malformed entries are named by
// the first few.
func TestFieldsProblemsBounded(t *testing.T) {
	doc := "apiVersion: v1\nkind: Thing\nmetadata: {name: x}\nstatus: {conditions: [" + strings.Repeat("bad, ", 5000) + "]}"
	f := Read(object(t, doc))
	require.Empty(t, f.Conditions())
	problems := f.Problems()
	require.Len(t, problems, maxProblems)
	require.Equal(t, "status.conditions[0] is a string, want an object", problems[0])
	require.Equal(t, "and 4993 more fields", problems[maxProblems-1])
}

func TestSaturatingAdd(t *testing.T) {
	require.Equal(t, int32(5), SaturatingAdd(2, 3))
	require.Equal(t, int32(math.MaxInt32), SaturatingAdd(math.MaxInt32, 1))
	require.Equal(t, int32(math.MaxInt32), SaturatingAdd(math.MaxInt32, math.MaxInt32))
}
