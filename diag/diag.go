package diag

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/airunway-render/airunway-render/internal/termsafe"
)

// Severity of a problem. Errors fail the whole run; warnings are reported and
// the output is still written.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Resource identifies the object a problem belongs to.
type Resource struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
}

// String renders the resource as apiVersion/Kind/namespace/name, leaving out
// empty parts.
func (r Resource) String() string {
	var parts []string
	for _, p := range []string{r.APIVersion, r.Kind, r.Namespace, r.Name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}

// Problem is one finding. Field is a dotted field path such as
// `spec.scaling.replicas` or `spec.env[2].name`; empty when the problem
// concerns the whole resource.
type Problem struct {
	Severity Severity
	// Code classifies a warning (codes.go); empty for errors.
	Code     Code
	Resource Resource
	File     string
	// Line is the line of Field (or of its deepest parent that is there)
	// in File, counted from 1; 0 when it is not known, as for the items
	// of a KRM ResourceList, whose lines are the list's, not the file's.
	Line    int
	Field   string
	Message string
	// Cluster is the cluster of a fleet whose render found it (plan
	// --fleet), which Message also says; "" for a single cluster.
	Cluster string
	// Pool is the node pool a warning is about (idle GPUs, a tight fit),
	// which Message also names; "" when it is about no one pool.
	Pool string
}

// String formats a problem the way it is printed on stderr.
func (p Problem) String() string {
	var b strings.Builder
	if p.Code != (Code{}) {
		fmt.Fprintf(&b, "[%s %s]", p.Severity, p.Code)
	} else {
		fmt.Fprintf(&b, "[%s]", p.Severity)
	}
	if r := p.Resource.String(); r != "" {
		b.WriteString(" " + r)
	}
	if p.Field != "" {
		b.WriteString(" " + p.Field)
	}
	b.WriteString(": " + p.Message)
	b.WriteString(p.where())
	// Names, namespaces, files and the values messages quote come from a
	// repository: a problem is one line, with nothing a terminal acts on.
	return termsafe.Escape(b.String())
}

// where is the problem's place in its file: ` (file F, line N)`, ` (file
// F)` when the line is not known, or nothing.
func (p Problem) where() string {
	var parts []string
	if p.File != "" {
		parts = append(parts, "file "+p.File)
	}
	if p.Line > 0 {
		parts = append(parts, fmt.Sprintf("line %d", p.Line))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// List collects problems in the order they were found.
type List []Problem

// Errorf appends an error at field.
func (l *List) Errorf(field, format string, args ...any) {
	*l = append(*l, Problem{Severity: Error, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Warnf appends a warning of a class (codes.go) at field.
func (l *List) Warnf(code Code, field, format string, args ...any) {
	*l = append(*l, Problem{Severity: Warning, Code: code, Field: field, Message: fmt.Sprintf(format, args...)})
}

// PoolWarnf appends a warning with a code at field about one node pool
// (Problem.Pool).
func (l *List) PoolWarnf(code Code, pool, field, format string, args ...any) {
	*l = append(*l, Problem{Severity: Warning, Code: code, Field: field, Pool: pool, Message: fmt.Sprintf(format, args...)})
}

// Infof appends an informational note at field.
func (l *List) Infof(field, format string, args ...any) {
	*l = append(*l, Problem{Severity: Info, Field: field, Message: fmt.Sprintf(format, args...)})
}

// HasErrors reports whether any problem has severity error.
func (l List) HasErrors() bool {
	for _, p := range l {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

// Attach fills in the resource and file of every problem that has none yet.
func (l List) Attach(r Resource, file string) List {
	for i := range l {
		if l[i].Resource == (Resource{}) {
			l[i].Resource = r
		}
		if l[i].File == "" {
			l[i].File = file
		}
	}
	return l
}

// Sorted returns the problems ordered by severity (errors first), file,
// resource and field, so that output does not depend on input order.
func (l List) Sorted() List {
	out := append(List(nil), l...)
	rank := map[Severity]int{Error: 0, Warning: 1, Info: 2}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if rank[a.Severity] != rank[b.Severity] {
			return rank[a.Severity] < rank[b.Severity]
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if ra, rb := a.Resource.String(), b.Resource.String(); ra != rb {
			return ra < rb
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		if a.Message != b.Message {
			return a.Message < b.Message
		}
		return a.Line < b.Line
	})
	return out
}

// Errors returns only the error-severity problems.
func (l List) Errors() List {
	var out List
	for _, p := range l {
		if p.Severity == Error {
			out = append(out, p)
		}
	}
	return out
}

// Report prints the errors and warnings readably, one per line, in the
// list's order (info stays in the KRM results, but for FleetSkipped), and when any is an error a
// last line counting them and saying what they left undone ("nothing was
// rendered"). kustomize shows a function's stderr and nothing else, so this
// is what most users read.
func (l List) Report(w io.Writer, undone string) {
	l.report(w, undone, true)
}

// Summary prints only Report's last line: the count, when there are
// errors.
func (l List) Summary(w io.Writer, undone string) {
	l.report(w, undone, false)
}

func (l List) report(w io.Writer, undone string, lines bool) {
	errs, warns := 0, 0
	for _, p := range l {
		switch p.Severity {
		case Error:
			errs++
		case Warning:
			warns++
		case Info:
			if p.Code != FleetSkipped {
				continue
			}
		default:
			continue
		}
		if lines {
			fmt.Fprintln(w, p.String())
		}
	}
	if errs > 0 {
		fmt.Fprintf(w, "airunway-render: %d error(s), %d warning(s); %s\n", errs, warns, undone)
	}
}
