package hub

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
)

// CheckQuantities checks, with ParseQuantity, every value of obj (a JSON
// object as the unstructured helpers hold it) that converting it into a
// value of into's type would parse as a resource.Quantity: the converter
// (runtime.DefaultUnstructuredConverter, like encoding/json) calls
// resource.ParseQuantity on each, unbounded, wherever the type has one (a
// pod spec has them in containers' resources, overhead, emptyDir volumes,
// ephemeral volume claims; a Node in its capacity and allocatable). at is
// obj's path, which the error's field starts with. Call it before the
// conversion. It follows only the fields whose types hold a Quantity, and
// builds a path only for the error, so that it costs the plan little.
func CheckQuantities(obj map[string]any, into any, at string) error {
	fe := checkQuantities(obj, reflect.TypeOf(into))
	if fe == nil {
		return nil
	}
	path := at
	for i := len(fe.path) - 1; i >= 0; i-- {
		if seg := fe.path[i]; strings.HasPrefix(seg, "[") || path == "" {
			path += seg
		} else {
			path += "." + seg
		}
	}
	return fmt.Errorf("`%s`: %w", path, fe.err)
}

// fieldError is a refused quantity and its path, innermost segment first:
// each level adds its own on the way out.
type fieldError struct {
	path []string
	err  error
}

func (e *fieldError) Error() string { return e.err.Error() }

func (e *fieldError) in(segment string) *fieldError {
	e.path = append(e.path, segment)
	return e
}

func checkQuantities(v any, t reflect.Type) *fieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == quantityType {
		return checkQuantityValue(v)
	}
	switch t.Kind() {
	case reflect.Struct:
		m, _ := v.(map[string]any)
		for _, f := range quantityFieldsOf(t) {
			switch e, ok := m[f.name]; {
			case f.inline:
				if err := checkQuantities(m, f.typ); err != nil {
					return err
				}
			case ok:
				if err := checkQuantities(e, f.typ); err != nil {
					return err.in(f.name)
				}
			}
		}
	case reflect.Slice, reflect.Array:
		list, _ := v.([]any)
		for i, e := range list {
			if err := checkQuantities(e, t.Elem()); err != nil {
				return err.in(fmt.Sprintf("[%d]", i))
			}
		}
	case reflect.Map:
		m, _ := v.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if err := checkQuantities(m[k], t.Elem()); err != nil {
				return err.in(k)
			}
		}
	}
	return nil
}

// checkQuantityValue checks one value as Quantity.UnmarshalJSON reads it:
// a string trimmed of spaces, or a number as JSON writes it.
func checkQuantityValue(v any) *fieldError {
	var text string
	switch t := v.(type) {
	case string:
		text = strings.TrimSpace(t)
	case int64, float64, int, int32:
		data, err := json.Marshal(t)
		if err != nil {
			return &fieldError{err: fmt.Errorf("%v is not a quantity: %w", t, err)}
		}
		text = string(data)
	default:
		return nil // null, or not a quantity at all: the converter says so
	}
	if _, err := ParseQuantity(text); err != nil {
		return &fieldError{err: err}
	}
	return nil
}

var quantityType = reflect.TypeFor[resource.Quantity]()

// quantityField is a struct field whose type holds a Quantity, by the
// JSON name the converter reads it under; an inline one (an embedded
// struct, `json:",inline"`) is read at its parent's level.
type quantityField struct {
	name   string
	inline bool
	typ    reflect.Type
}

// quantityFields caches quantityFieldsOf by struct type.
var quantityFields sync.Map

// quantityFieldsOf returns the fields of struct type t whose types hold
// a Quantity: a pod spec's resources and volumes, not its labels, args
// or probes.
func quantityFieldsOf(t reflect.Type) []quantityField {
	if cached, ok := quantityFields.Load(t); ok {
		return cached.([]quantityField)
	}
	var out []quantityField
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) || !holdsQuantity(f.Type, map[reflect.Type]bool{}) {
			continue
		}
		inline := (f.Anonymous && name == "") || slices.Contains(strings.Split(opts, ","), "inline")
		out = append(out, quantityField{name: cmp.Or(name, f.Name), inline: inline, typ: f.Type})
	}
	quantityFields.Store(t, out)
	return out
}

// holdsQuantity reports whether a Quantity is reachable from t through
// pointers, structs, slices, arrays and maps; seen cuts recursive types.
func holdsQuantity(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == quantityType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return holdsQuantity(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsQuantity(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}
