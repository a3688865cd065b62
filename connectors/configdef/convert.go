package configdef

import (
	"strings"
)

// ConvertToString renders a parsed value as Java's ConfigDef.convertToString does for the
// given type: lists joined with "," (no spaces), classes by name, passwords as "[hidden]",
// doubles as Double.toString. A nil value returns nil (JSON null). With an empty type the
// value's own Java rendering is used.
func ConvertToString(v any, t Type) *string {
	if v == nil {
		return nil
	}
	var s string
	switch t {
	case TypeList:
		if list, ok := v.([]string); ok {
			s = strings.Join(list, ",")
		} else {
			s = JavaString(v)
		}
	case TypeClass:
		s = classString(v)
	case TypePassword:
		s = HiddenPassword
	case TypeDouble:
		if f, ok := v.(float64); ok {
			s = JavaDouble(f)
		} else {
			s = JavaString(v)
		}
	default:
		s = JavaString(v)
	}
	return &s
}

func classString(v any) string {
	switch c := v.(type) {
	case ClassName:
		return string(c)
	case string:
		return c
	}
	return JavaString(v)
}

// javaNumber renders a validator bound the way Java prints the Number it was given: Integer
// and Long bounds without a fraction, Double bounds with Double.toString.
func javaNumber(n any) string {
	if x, ok := n.(float32); ok {
		return JavaDouble(float64(x))
	}
	return JavaString(n) // the integers and float64 as Java prints them
}

// toFloat widens a numeric value for comparisons, as Java's Number.doubleValue.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}
