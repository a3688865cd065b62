package configdef

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// JavaDouble prints DOUBLE config values and offsets into messages that must read as Java's Double.toString:
// its output has one of Java's two shapes and parses back to the very same double.

// javaDoubleShape is Double.toString's grammar: plain decimal with at least one fractional digit, or
// computerized scientific notation with a one-digit integer part; NaN and the infinities aside.
var javaDoubleShape = regexp.MustCompile(`^-?(?:[0-9]+\.[0-9]+|[1-9]\.[0-9]+E-?[0-9]+)$`)

func FuzzJavaDouble(f *testing.F) {
	for _, x := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-3, 9.999999e-4, 1e7, 9999999.999, 1.0e-4, 123456789,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN(), 100, 1e21, 1e-300} {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		s := JavaDouble(x)
		back, err := parseJavaDouble(s)
		if err != nil {
			t.Fatalf("JavaDouble(%v) = %q, which parseJavaDouble refuses: %v", x, s, err)
		}
		switch {
		case math.IsNaN(x):
			if s != "NaN" || !math.IsNaN(back) {
				t.Fatalf("JavaDouble(NaN) = %q", s)
			}
			return
		case math.IsInf(x, 0):
			if back != x {
				t.Fatalf("JavaDouble(%v) = %q reads back %v", x, s, back)
			}
			return
		}
		if math.Float64bits(back) != bits {
			t.Fatalf("JavaDouble(%v) = %q reads back %v", x, s, back)
		}
		if !javaDoubleShape.MatchString(s) {
			t.Fatalf("JavaDouble(%v) = %q is not Double.toString's shape", x, s)
		}
		abs := math.Abs(x)
		if scientific := strings.Contains(s, "E"); scientific != (abs != 0 && (abs < 1e-3 || abs >= 1e7)) {
			t.Fatalf("JavaDouble(%v) = %q: scientific notation is for magnitudes outside [1e-3, 1e7)", x, s)
		}
	})
}

// FuzzParseJavaNumbers: the INT, LONG and DOUBLE parsers accept a value or refuse it, and a parsed integer prints
// back as the same digits (less a '+' sign and leading zeros).
func FuzzParseJavaNumbers(f *testing.F) {
	for _, s := range []string{"0", "-1", "+1", "2147483647", "2147483648", "-9223372036854775808", "007", "1_000", " 1", "",
		"+", "-", "--1", "1.5", "1e3", "1.5f", "NaN", "-Infinity", "0x10", "１"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, bits := range []int{16, 32, 64} {
			n, err := parseJavaInt(s, bits)
			if err != nil {
				continue
			}
			if n < -1<<(bits-1) || n > 1<<(bits-1)-1 {
				t.Fatalf("parseJavaInt(%q, %d) = %d, out of range", s, bits, n)
			}
			again, err := parseJavaInt(strconv.FormatInt(n, 10), bits)
			if err != nil || again != n {
				t.Fatalf("parseJavaInt(%q, %d) = %d, which reads back %d, %v", s, bits, n, again, err)
			}
		}
		if x, err := parseJavaDouble(s); err == nil && !math.IsNaN(x) {
			back, err := parseJavaDouble(JavaDouble(x))
			if err != nil || back != x {
				t.Fatalf("parseJavaDouble(%q) = %v, printed %q, reads back %v, %v", s, x, JavaDouble(x), back, err)
			}
		}
	})
}
