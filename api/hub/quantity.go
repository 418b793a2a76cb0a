package hub

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Quantity bounds. resource.ParseQuantity takes any number of digits and
// any decimal exponent, and what it and the Quantity methods cost grows
// with both: parsing is quadratic in the digits (a million digits take
// seconds), a negative exponent costs the parse itself (1e-1000000 takes
// 0.15 s), a positive one every comparison and sum, which build 10^exponent
// (1e1000000 takes 0.15 s per Cmp, 1e1000000000 more than ten minutes).
// Every quantity read from an input goes through ParseQuantity below, which
// refuses such a quantity before any of that work.
const (
	// MaxQuantityLength bounds a quantity as written. One in range needs
	// 29 characters at most (a sign, 16 integer digits, a point, 9
	// fractional digits, a two-letter suffix); 64 leaves room for zero
	// padding and keeps the parse in microseconds.
	MaxQuantityLength = 64
	// MaxQuantityExponent bounds the decimal exponent of a quantity
	// written as 5e9 or 5E-3. A quantity in range never needs more than
	// two digits of it (its value lies between 1e-9, Kubernetes' finest
	// unit, and 9.2e15, and a mantissa of at most 64 characters shifts
	// that by fewer than 64 places); 10^(99+64) is a few hundred bits,
	// cheap to compare and add.
	MaxQuantityExponent = 99
)

// maxQuantity is the largest magnitude a quantity may have: 2^63-1
// milli-units, about 8Pi. Kubernetes counts every resource in int64 (the
// scheduler's cpu in milli-units, memory, storage and extended resources
// in units), and Quantity.MilliValue and Value overflow without an error
// beyond it (MilliValue of 1e18 is 0, Value of 9223372036854775808 is
// negative), so nothing larger is a size any cluster can hold.
var (
	maxQuantity = *resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	minQuantity = *resource.NewMilliQuantity(-math.MaxInt64, resource.DecimalSI)
)

// What a QuantityError wraps, for callers with their own words: the text
// is no quantity at all, or a quantity beyond 2^63-1 milli-units (a field
// with a lower ceiling names its own). Other QuantityErrors are texts too
// long, or exponents too large, to parse.
var (
	ErrNotAQuantity       = errors.New("not a quantity")
	ErrQuantityOutOfRange = errors.New("quantity out of range")
)

// QuantityError is a quantity ParseQuantity refuses, and why.
type QuantityError struct {
	Quantity string
	why      string
	cause    error
}

func (e *QuantityError) Error() string { return e.why }

func (e *QuantityError) Unwrap() error { return e.cause }

// ParseQuantity is resource.ParseQuantity for quantities read from an
// input: it refuses, before parsing, a quantity longer than
// MaxQuantityLength or with a decimal exponent beyond
// MaxQuantityExponent, and, after, one whose magnitude is beyond 2^63-1
// milli-units. The error says which, the quantity quoted; callers put the
// field in front of it. Quantities written in the code may keep
// resource.MustParse.
func ParseQuantity(s string) (resource.Quantity, error) {
	if len(s) > MaxQuantityLength {
		return resource.Quantity{}, &QuantityError{s, fmt.Sprintf("%q... is %d characters long; a quantity must be at most %d", s[:24], len(s), MaxQuantityLength), nil}
	}
	if exp, ok := decimalExponent(s); ok {
		if n, err := strconv.Atoi(strings.TrimLeft(exp, "+-")); err != nil || n > MaxQuantityExponent {
			return resource.Quantity{}, &QuantityError{s, fmt.Sprintf("%q has the exponent %s; a quantity's exponent must be between -%d and %d", s, exp, MaxQuantityExponent, MaxQuantityExponent), nil}
		}
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}, &QuantityError{s, fmt.Sprintf("%q is not a valid quantity (examples: \"500m\", \"4\", \"32Gi\")", s), ErrNotAQuantity}
	}
	if err := CheckQuantityRange(q); err != nil {
		return resource.Quantity{}, &QuantityError{s, fmt.Sprintf("%q %v", s, err), ErrQuantityOutOfRange}
	}
	return q, nil
}

// MustParseQuantity is ParseQuantity for a quantity that ParseQuantity
// accepted before (when the input was validated); it panics otherwise.
func MustParseQuantity(s string) resource.Quantity {
	q, err := ParseQuantity(s)
	if err != nil {
		panic(err)
	}
	return q
}

// CheckQuantityRange refuses a quantity whose magnitude is beyond 2^63-1
// milli-units: one parsed by ParseQuantity is never, but a sum of them
// (a pod's requests) may be.
func CheckQuantityRange(q resource.Quantity) error {
	if q.Cmp(maxQuantity) > 0 || q.Cmp(minQuantity) < 0 {
		return fmt.Errorf("is out of range; a quantity must be between %s and %s (about 8Pi), what Kubernetes counts in int64 milli-units", minQuantity.String(), maxQuantity.String())
	}
	return nil
}

// decimalExponent returns the exponent of a quantity written as 5e9 or
// 5E-3, as written with its sign; ok is false for the other suffixes,
// among them E and Ei (exa and exbi). The mantissa is digits and a point,
// so the first e or E starts the suffix.
func decimalExponent(s string) (exp string, ok bool) {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return "", false
	}
	exp = s[i+1:]
	digits := strings.TrimPrefix(strings.TrimPrefix(exp, "+"), "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	return exp, true
}
