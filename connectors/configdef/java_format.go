package configdef

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// JavaString renders a parsed value the way Java's String.valueOf renders the corresponding
// Java object; error messages embed values in this form.
func JavaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case ClassName:
		return "class " + string(x)
	case Password:
		return HiddenPassword
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return JavaDouble(x)
	case fmt.Stringer:
		return x.String()
	default:
		return fmt.Sprint(x)
	}
}

// JavaDouble formats f as Java's Double.toString does: plain decimal notation with at least
// one fractional digit for magnitudes in [1e-3, 1e7), computerized scientific notation
// ("1.0E-4") otherwise.
func JavaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	// Shortest round-tripping digits, as Java 19+ produces them.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d[.ddd]e±xx
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	if f >= 1e-3 && f < 1e7 {
		if exp >= 0 {
			for len(digits) < exp+1 {
				digits += "0"
			}
			intPart, frac := digits[:exp+1], digits[exp+1:]
			if frac == "" {
				frac = "0"
			}
			return sign + intPart + "." + frac
		}
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(exp)
}

// javaTrim is java.lang.String.trim: it strips every code point up to and including U+0020
// from both ends, control characters included.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// isJavaRegexSpace reports whether r is in Java's \s class.
func isJavaRegexSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\x0b', '\f', '\r':
		return true
	}
	return false
}
