package gpus

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/api/hub"
)

// A row is complete enough to be read: a name, resources, a product
// label; a DRA driver brings its class of whole GPUs; no resource, label,
// driver or class belongs to two vendors.
func TestVendorsAreWellFormed(t *testing.T) {
	require.Equal(t, hub.DefaultGPUResource, Vendors[0].Resources[0], "the default GPU resource is read first")
	seen := map[string]string{}
	claim := func(what, by string) {
		if what == "" {
			return
		}
		require.NotContains(t, seen, what, "%s is claimed by %s and %s", what, seen[what], by)
		seen[what] = by
	}
	for _, v := range Vendors {
		require.NotEmpty(t, v.Name)
		require.NotEmpty(t, v.Resources, v.Name)
		require.NotEmpty(t, v.ProductLabel, v.Name)
		for _, r := range v.Resources {
			claim(r, v.Name)
			require.Same(t, &Vendors[indexOf(v.Name)], ForResource(r))
		}
		claim(v.ProductLabel, v.Name)
		claim(v.MemoryLabel, v.Name)
		claim(v.DRADriver, v.Name)
		if v.DRADriver != "" {
			require.NotEmpty(t, v.WholeGPUClass, "%s: a DRA driver needs its class of whole GPUs", v.Name)
			require.Same(t, &Vendors[indexOf(v.Name)], ForDriver(v.DRADriver))
		}
		for class := range v.RefusedClasses {
			claim(class, v.Name)
			_, instead, refused := RefusedClass(class)
			require.True(t, refused)
			require.Equal(t, v.WholeGPUClass, instead)
		}
	}
	require.Nil(t, ForResource("example.com/fpga"))
	require.Nil(t, ForDriver("nic.example.com"))
	require.True(t, IsSlice("nvidia.com/mig-1g.5gb"))
	require.False(t, IsSlice("nvidia.com/gpu"))
	require.True(t, IsWhole("nvidia.com/gpu"))
	require.True(t, IsWhole("amd.com/gpu"))
	require.False(t, IsWhole("nvidia.com/gpu.shared"))
	require.True(t, IsShared("nvidia.com/gpu.shared"))
	require.False(t, IsShared("nvidia.com/mig-1g.5gb"))
	require.False(t, IsShared("nvidia.com/gpu"))
}

func indexOf(name string) int {
	for i, v := range Vendors {
		if v.Name == name {
			return i
		}
	}
	return -1
}
