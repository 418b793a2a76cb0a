package dra

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/airunway-render/airunway-render/api/hub"
)

// TestAttributeRoundTrip holds the text encoding of attributes
// to its inverse: discover writes what the twin and the selectors read.
func TestAttributeRoundTrip(t *testing.T) {
	for text, kind := range map[string]string{"42": "int", "-1": "int", "true": "bool", "false": "bool", "9.0.0": "version", "550.54.15": "version", "NVIDIA H100 80GB HBM3": "string", "9.0": "string", "True": "string"} {
		a := Attribute(text)
		got := map[bool]string{a.IntValue != nil: "int", a.BoolValue != nil: "bool", a.VersionValue != nil: "version", a.StringValue != nil: "string"}[true]
		require.Equal(t, kind, got, text)
		back, ok := AttributeText(a)
		require.True(t, ok, text)
		require.Equal(t, text, back)
	}
	s := "42"
	_, ok := AttributeText(resourcev1.DeviceAttribute{StringValue: &s})
	require.False(t, ok, "a string attribute that reads back as an int cannot round-trip")
}

func TestDeclared(t *testing.T) {
	d := Declared(&hub.PoolGPU{DeviceClassName: "gpu.nvidia.com", MemoryMiB: 81559, Attributes: map[string]string{"productName": "NVIDIA H100 80GB HBM3"}})
	require.Equal(t, "gpu.nvidia.com", d.Driver)
	q := d.Capacity["memory"].Value
	require.Equal(t, int64(81559)<<20, q.Value())
	res := CompileSelector(`device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3" && device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("79Gi")) >= 0`)
	require.Nil(t, res.Error)
	ok, _, err := res.DeviceMatches(context.Background(), d)
	require.NoError(t, err)
	require.True(t, ok)
}
