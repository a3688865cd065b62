package mirror

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"\t\n", nil},
		{"a", []string{"a"}},
		{"a,b", []string{"a", "b"}},
		{" a , b ", []string{"a", "b"}},
		{"a ,\t b,\nc", []string{"a", "b", "c"}},
		{"a,", []string{"a", ""}},
		{",a", []string{"", "a"}},
		{"a, ,b", []string{"a", "", "b"}},
		{"a  ,  ,b", []string{"a", "", "b"}},
		{"a b, c", []string{"a b", "c"}},
		// The comma inside a repetition splits the regex, as in Java.
		{"t{1,3}", []string{"t{1", "3}"}},
		{`.*[\-\.]internal, .*\.replica, __.*`, []string{`.*[\-\.]internal`, `.*\.replica`, `__.*`}},
	} {
		require.Equal(t, tc.want, ParseList(tc.in), "%q", tc.in)
	}
}
