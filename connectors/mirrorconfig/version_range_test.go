package mirrorconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersionRequirement(t *testing.T) {
	tests := []struct {
		spec     string
		str      string
		contains bool
		err      string
	}{
		{spec: "4.1.1", str: "[4.1.1,4.1.1]", contains: true},
		{spec: " 4.0.0 ", str: "[4.0.0,4.0.0]", contains: false},
		{spec: "[4.1,5)", str: "[4.1,5)", contains: true},
		{spec: "(,4.1.1)", str: "(,4.1.1)", contains: false},
		{spec: "[3.0,3.9],[4.1.1,)", str: "[3.0,3.9],[4.1.1,)", contains: true},
		{spec: "[4.1.1-SNAPSHOT,4.1.1)", str: "[4.1.1-SNAPSHOT,4.1.1)", contains: false},
		{spec: "[4.0", err: "Unbounded range: [4.0"},
		{spec: "(4.1.1)", err: "Single version must be surrounded by []: (4.1.1)"},
		{spec: "[5,4]", err: "Range defies version ordering: [5,4]"},
		{spec: "[1,2],3", err: "Only fully-qualified sets allowed in multiple set scenario: [1,2],3"},
	}
	for _, tc := range tests {
		r, err := versionRequirement(&tc.spec)
		if tc.err != "" {
			require.EqualError(t, err, tc.err, tc.spec)
			continue
		}
		require.NoError(t, err, tc.spec)
		require.Equal(t, tc.str, r.String(), tc.spec)
		require.Equal(t, tc.contains, r.contains("4.1.1"), tc.spec)
	}
	latest := "latest"
	r, err := versionRequirement(&latest)
	require.NoError(t, err)
	require.Nil(t, r)
	r, err = versionRequirement(nil)
	require.NoError(t, err)
	require.Nil(t, r)
}

func TestInvalidConnectorVersionIsAValidationError(t *testing.T) {
	got := Validate(mustPlugin(t, SourceConnectorClass), config(SourceConnectorClass, map[string]*string{"connector.plugin.version": ptr("[4.0")}), nil)
	require.Equal(t, 1, got.ErrorCount)
	require.Equal(t, []string{"Unbounded range: [4.0"}, entry(got, "connector.plugin.version").Value.Errors)
}
