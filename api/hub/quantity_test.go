package hub

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
)

// hostileQuantities are each refused, with the words of the refusal. Each
// is cheap to write and, without the bounds, costs from seconds to hours
// (resource.ParseQuantity of 1E-1000000000, Cmp of 1e1000000000) or reads
// wrong (MilliValue of 1e18 is 0, Value of 9223372036854775808 negative).
var hostileQuantities = map[string]string{
	"1e1000000000":                       `"1e1000000000" has the exponent 1000000000; a quantity's exponent must be between -99 and 99`,
	"1E-1000000000":                      `"1E-1000000000" has the exponent -1000000000; a quantity's exponent must be between -99 and 99`,
	"1e+100":                             `"1e+100" has the exponent +100`,
	"1e18Ki":                             `"1e18Ki" is not a valid quantity`,
	strings.Repeat("9", 1<<20):           `"999999999999999999999999"... is 1048576 characters long; a quantity must be at most 64`,
	"0." + strings.Repeat("0", 70) + "1": "is 73 characters long",
	"1e" + strings.Repeat("9", 60):       "has the exponent 999999999999",
	"9223372036854775808":                `"9223372036854775808" is out of range; a quantity must be between -9223372036854775807m and 9223372036854775807m (about 8Pi)`,
	"-9223372036854775808":               "is out of range",
	"1e18":                               "is out of range",
	"8Ei":                                "is out of range",
	"1E":                                 "is out of range", // exa: beyond 8Pi
	"1Ei":                                "is out of range",
	"9223372036854775808m":               "is out of range",
	"1e99":                               "is out of range",
}

func TestParseQuantityRefusesHostile(t *testing.T) {
	for in, want := range hostileQuantities {
		var err error
		fuzzcheck.Bounded(t, func() error { _, err = ParseQuantity(in); return nil })
		require.Error(t, err, "%.30q", in)
		require.Contains(t, err.Error(), want)
		var qe *QuantityError
		require.True(t, errors.As(err, &qe))
		require.Equal(t, in, qe.Quantity)
		require.Equal(t, strings.Contains(want, "not a valid quantity"), errors.Is(err, ErrNotAQuantity), in)
		require.Equal(t, strings.Contains(want, "out of range"), errors.Is(err, ErrQuantityOutOfRange), in)
	}
}

// Every quantity Kubernetes could store usefully parses as
// resource.ParseQuantity parses it, to the same value and text.
func TestParseQuantityKeepsNormal(t *testing.T) {
	for _, in := range []string{
		"0", "1", "500m", "4", "32Gi", "4Ti", "0.5", "1.5Gi", "100M", "1e3", "5E-3", "1P", "7Pi",
		"1n", "1e-9", "1e-99", "-1", "+2", "9223372036854775807m", "9007199254740991", "8Pi",
		"1." + strings.Repeat("0", 60) + "Gi", // 64 characters
	} {
		got, err := ParseQuantity(in)
		require.NoError(t, err, in)
		want := resource.MustParse(in)
		require.Zero(t, got.Cmp(want), in)
		require.Equal(t, want.String(), got.String(), in)
	}
	_, err := ParseQuantity("notanumber")
	require.EqualError(t, err, `"notanumber" is not a valid quantity (examples: "500m", "4", "32Gi")`)
}

func TestCheckQuantityRange(t *testing.T) {
	big := resource.MustParse("9223372036854775807m")
	require.NoError(t, CheckQuantityRange(big))
	big.Add(resource.MustParse("1m"))
	require.ErrorContains(t, CheckQuantityRange(big), "is out of range")
}

// CheckQuantities finds the quantities of a pod spec wherever the type
// has one, by the JSON names the converter reads, and nothing else.
func TestCheckQuantities(t *testing.T) {
	spec := func(memory any) map[string]any {
		return map[string]any{
			"containers": []any{
				map[string]any{"name": "a", "args": []any{"1e1000000000"}, "resources": map[string]any{"requests": map[string]any{"cpu": "1"}}},
				map[string]any{"name": "b", "resources": map[string]any{"limits": map[string]any{"memory": memory}}},
			},
			"nodeSelector": map[string]any{"size": "1e1000000000"},
		}
	}
	var pod corev1.PodSpec
	require.NoError(t, CheckQuantities(spec("32Gi"), &pod, "spec"), "args and labels are no quantities")
	require.NoError(t, CheckQuantities(spec(int64(1024)), &pod, "spec"))
	require.NoError(t, CheckQuantities(spec(" 32Gi "), &pod, "spec"), "UnmarshalJSON trims spaces")

	err := CheckQuantities(spec("1e1000000000"), &pod, "spec")
	require.EqualError(t, err, "`spec.containers[1].resources.limits.memory`: \"1e1000000000\" has the exponent 1000000000; a quantity's exponent must be between -99 and 99")
	require.ErrorContains(t, CheckQuantities(spec(1e300), &pod, "spec"), "`spec.containers[1].resources.limits.memory`: \"1e+300\" has the exponent +300")

	for path, obj := range map[string]map[string]any{
		"overhead.cpu":                  {"overhead": map[string]any{"cpu": "1E-1000000000"}},
		"volumes[0].emptyDir.sizeLimit": {"volumes": []any{map[string]any{"name": "v", "emptyDir": map[string]any{"sizeLimit": "1E-1000000000"}}}},
		"volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests.storage": {"volumes": []any{map[string]any{"name": "v", "ephemeral": map[string]any{
			"volumeClaimTemplate": map[string]any{"metadata": map[string]any{"name": "x"}, "spec": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1E-1000000000"}}}}}}}},
		"initContainers[0].resources.requests.nvidia.com/gpu": {"initContainers": []any{map[string]any{"resources": map[string]any{"requests": map[string]any{"nvidia.com/gpu": "1E-1000000000"}}}}},
	} {
		require.ErrorContains(t, CheckQuantities(obj, &pod, ""), "`"+path+"`: ", path)
	}

	// Embedded structs are read at their parent's level: a Node's
	// TypeMeta and ObjectMeta, then its status.
	node := map[string]any{"kind": "Node", "metadata": map[string]any{"name": "n"}, "status": map[string]any{"allocatable": map[string]any{"cpu": "1e1000000000"}}}
	require.ErrorContains(t, CheckQuantities(node, &corev1.Node{}, "items[0]"), "`items[0].status.allocatable.cpu`")
}

// FuzzParseQuantity: no input costs more than fuzzcheck's bound (the
// fuzzer would stall on one); what ParseQuantity accepts,
// resource.ParseQuantity accepts as the same value, within int64
// milli-units, so that MilliValue and Value are exact; what
// resource.ParseQuantity refuses, ParseQuantity refuses too.
func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"1", "500m", "32Gi", "1e3", "5E-3", "1Ei", "0.5", "-1", "1e1000000000", "1E-1000000000", "9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcheck.Bounded(t, func() error { return checkParseQuantity(s) })
	})
}

func checkParseQuantity(s string) error {
	q, err := ParseQuantity(s)
	if err != nil {
		if err.Error() == "" {
			return fmt.Errorf("%q: an error without a message", s)
		}
		return nil
	}
	want, werr := resource.ParseQuantity(s)
	switch {
	case werr != nil:
		return fmt.Errorf("%q: accepted, but resource.ParseQuantity refuses it: %v", s, werr)
	case q.Cmp(want) != 0:
		return fmt.Errorf("%q: parsed as %s, resource.ParseQuantity says %s", s, q.String(), want.String())
	case len(s) > MaxQuantityLength || q.Cmp(maxQuantity) > 0 || q.Cmp(minQuantity) < 0:
		return fmt.Errorf("%q: accepted out of bounds", s)
	}
	// MilliValue rounds up; an overflow is far from q. (Below 1m,
	// resource's own rounding of negative values is odd: -1e-10 gives 1.)
	abs := func(v resource.Quantity) resource.Quantity {
		if v.Sign() < 0 {
			v.Neg()
		}
		return v
	}
	one := resource.MustParse("1m")
	if a := abs(q); a.Cmp(one) >= 0 {
		diff := *resource.NewMilliQuantity(q.MilliValue(), resource.DecimalSI)
		diff.Sub(q)
		if d := abs(diff); d.Cmp(one) >= 0 {
			return fmt.Errorf("%q: MilliValue %d is not %s: it overflowed", s, q.MilliValue(), q.String())
		}
	}
	return nil
}
