package capabilities

import (
	"fmt"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
)

// A capability file's capacity is refused, fast, when its quantity is
// out of hub.ParseQuantity's bounds; the plan reads it as int64 milli-units
// and bytes, and placement compares requests with it.
func TestResolveRefusesHostileCapacity(t *testing.T) {
	for _, tc := range []struct{ quantity, want string }{
		{"1e1000000000", `"1e1000000000" has the exponent 1000000000; a quantity's exponent must be between -99 and 99`},
		{"1E-1000000000", `"1E-1000000000" has the exponent -1000000000`},
		{"1e18Ki", `"1e18Ki" must be a positive quantity`},
		{strings.Repeat("9", 100000), "is 100000 characters long; a quantity must be at most 64"},
		{"9223372036854775808", `"9223372036854775808" is out of range; a quantity must be between -9223372036854775807m and 9223372036854775807m (about 8Pi)`},
		{"1e18", `"1e18" is out of range`},
	} {
		for _, field := range []string{"cpu", "memory"} {
			t.Run(fmt.Sprintf("%s=%.20s", field, tc.quantity), func(t *testing.T) {
				doc := capsDoc(fmt.Sprintf(`{nodePools: [{name: gpu, selector: {a: b}, capacity: {%s: "%s"}}]}`, field, tc.quantity))
				var problems diag.List
				fuzzcheck.Bounded(t, func() error {
					c, decoded := Decode([]byte(doc))
					if c == nil {
						return fmt.Errorf("cannot decode: %v", decoded)
					}
					_, problems = Resolve(c)
					problems = append(decoded, problems...)
					return nil
				})
				requireErrors(t, problems, e("spec.nodePools[0].capacity."+field, tc.want))
			})
		}
	}
}
