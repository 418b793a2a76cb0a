package render

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// The emit stage's file names: where a rendered object lands in a kpt
// package or a rendered directory, and why a name a repository chose may
// not lead out of it.

// ObjectFileName is the stable file name of an object in a rendered
// directory: [<namespace>/]<kind>_<name>.yaml, kind in lower case. The
// parts come from objects that pass through, which a repository controls,
// so each must be what the API server accepts and one path segment: a
// namespace a DNS-1123 label; a kind and a name neither `.` nor `..`, and
// without `/`, `\`, `%` or control characters. Anything else is a
// *FieldError: the name would lead out of the directory.
func ObjectFileName(namespace, kind, name string) (string, error) {
	if namespace != "" {
		if errs := utilvalidation.IsDNS1123Label(namespace); len(errs) > 0 {
			return "", &FieldError{Field: "metadata.namespace", Message: fmt.Sprintf("is %q: a namespace must be a DNS-1123 label (%s)", namespace, errs[0])}
		}
	}
	if err := pathSegment(kind); err != "" {
		return "", &FieldError{Field: "kind", Message: fmt.Sprintf("is %q: a kind %s", kind, err)}
	}
	if name != "" {
		if err := pathSegment(name); err != "" {
			return "", &FieldError{Field: "metadata.name", Message: fmt.Sprintf("is %q: a name %s", name, err)}
		}
	}
	return path.Join(namespace, strings.ToLower(kind)+"_"+name+".yaml"), nil
}

// pathSegment says what is wrong with s as one segment of an API path
// (apimachinery's path segment rules, the API server's test of every
// name) and of a file name on any system; "" when nothing is.
func pathSegment(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > utilvalidation.DNS1123SubdomainMaxLength:
		return fmt.Sprintf("must be at most %d characters", utilvalidation.DNS1123SubdomainMaxLength)
	case s == "." || s == "..":
		return "must not be `.` or `..`"
	case !utf8.ValidString(s):
		return "must be UTF-8 text"
	case strings.ContainsFunc(s, func(r rune) bool { return r == '/' || r == '\\' || r == '%' || unicode.IsControl(r) }):
		return "must not contain `/`, `\\`, `%` or control characters"
	}
	return ""
}

// FieldError is a problem with one field of an object, for
// Options.Encode to report: Render reports it at the field.
type FieldError struct {
	Field, Message string
}

func (e *FieldError) Error() string { return "`" + e.Field + "` " + e.Message }
