package configdef

import (
	"slices"
	"strconv"
	"strings"
)

// Validator checks a parsed value (nil for null). Errors should be *ConfigError so that they
// carry Java's message texts. String describes the accepted values, as the Java validator's
// toString does for the documentation tables.
type Validator interface {
	Validate(name string, value any) error
	String() string
}

// Range is ConfigDef.Range: an inclusive numeric range; a nil bound is open.
type Range struct {
	min, max any
}

// AtLeast accepts numbers >= min. Pass min with the Java type the bound has in Kafka (an int
// for Integer bounds, a float64 for Double bounds): messages print it that way.
func AtLeast(min any) Range { return Range{min: min} }

// Between accepts numbers in [min, max].
func Between(min, max any) Range { return Range{min: min, max: max} }

// Validate implements Validator.
func (r Range) Validate(name string, value any) error {
	if value == nil {
		return NewConfigError(name, nil, "Value must be non-null")
	}
	n, ok := toFloat(value)
	if !ok {
		return NewConfigError(name, value, "Value must be a number")
	}
	if min, ok := toFloat(r.min); ok && n < min {
		return NewConfigError(name, value, "Value must be at least "+javaNumber(r.min))
	}
	if max, ok := toFloat(r.max); ok && n > max {
		return NewConfigError(name, value, "Value must be no more than "+javaNumber(r.max))
	}
	return nil
}

// String implements Validator.
func (r Range) String() string {
	switch {
	case r.min == nil && r.max == nil:
		return "[...]"
	case r.min == nil:
		return "[...," + javaNumber(r.max) + "]"
	case r.max == nil:
		return "[" + javaNumber(r.min) + ",...]"
	}
	return "[" + javaNumber(r.min) + ",...," + javaNumber(r.max) + "]"
}

// ValidString is ConfigDef.ValidString: the value must equal one of the strings exactly.
type ValidString struct {
	values []string
}

// In accepts exactly the given strings.
func In(values ...string) ValidString { return ValidString{values: values} }

// Validate implements Validator.
func (v ValidString) Validate(name string, value any) error {
	s, ok := value.(string)
	if !ok || !slices.Contains(v.values, s) {
		return NewConfigError(name, value, "String must be one of: "+strings.Join(v.values, ", "))
	}
	return nil
}

// String implements Validator.
func (v ValidString) String() string { return "[" + strings.Join(v.values, ", ") + "]" }

// CaseInsensitiveValidString is ConfigDef.CaseInsensitiveValidString. Java keeps the
// upper-cased options in a HashSet, so its messages list them in hash order; this type
// reproduces that order.
type CaseInsensitiveValidString struct {
	upper []string
}

// InCaseInsensitive accepts the given strings in any letter case.
func InCaseInsensitive(values ...string) CaseInsensitiveValidString {
	upper := make([]string, 0, len(values))
	for _, s := range values {
		u := strings.ToUpper(s)
		if !slices.Contains(upper, u) {
			upper = append(upper, u)
		}
	}
	return CaseInsensitiveValidString{upper: javaHashSetOrder(upper)}
}

// Validate implements Validator.
func (v CaseInsensitiveValidString) Validate(name string, value any) error {
	s, ok := value.(string)
	if !ok || !slices.Contains(v.upper, strings.ToUpper(s)) {
		return NewConfigError(name, value, "String must be one of (case insensitive): "+strings.Join(v.upper, ", "))
	}
	return nil
}

// String implements Validator.
func (v CaseInsensitiveValidString) String() string {
	return "(case insensitive) [" + strings.Join(v.upper, ", ") + "]"
}

// NonEmptyString is ConfigDef.NonEmptyString: null is fine, "" is not.
type NonEmptyString struct{}

// Validate implements Validator.
func (NonEmptyString) Validate(name string, value any) error {
	if s, ok := value.(string); ok && s == "" {
		return NewConfigError(name, value, "String must be non-empty")
	}
	return nil
}

// String implements Validator.
func (NonEmptyString) String() string { return "non-empty string" }

// NonEmptyStringWithoutControlChars is ConfigDef.NonEmptyStringWithoutControlChars, the
// validator of connector names. Null passes (a missing name is reported as missing).
type NonEmptyStringWithoutControlChars struct{}

// Validate implements Validator.
func (NonEmptyStringWithoutControlChars) Validate(name string, value any) error {
	s, ok := value.(string)
	if !ok {
		return nil
	}
	if s == "" {
		return NewConfigError(name, value, "String may not be empty")
	}
	var found []string
	for _, r := range s {
		// Character.isISOControl: U+0000..U+001F and U+007F..U+009F.
		if r <= 0x1f || (r >= 0x7f && r <= 0x9f) {
			found = append(found, strconv.Itoa(int(r)))
		}
	}
	if len(found) > 0 {
		return NewConfigError(name, value,
			"String may not contain control sequences but had the following ASCII chars: "+strings.Join(found, ", "))
	}
	return nil
}

// String implements Validator.
func (NonEmptyStringWithoutControlChars) String() string {
	return "non-empty string without ISO control characters"
}

// NonNull is ConfigDef.NonNullValidator.
type NonNull struct{}

// Validate implements Validator.
func (NonNull) Validate(name string, value any) error {
	if value == nil {
		return NewConfigError(name, "null", "entry must be non null")
	}
	return nil
}

// String implements Validator.
func (NonNull) String() string { return "non-null string" }

// Composite is ConfigDef.CompositeValidator: validators run in order and the first failure
// wins.
type Composite struct {
	validators []Validator
}

// All combines validators.
func All(validators ...Validator) Composite { return Composite{validators: validators} }

// Validate implements Validator.
func (c Composite) Validate(name string, value any) error {
	for _, v := range c.validators {
		if err := v.Validate(name, value); err != nil {
			return err
		}
	}
	return nil
}

// String implements Validator.
func (c Composite) String() string {
	parts := make([]string, len(c.validators))
	for i, v := range c.validators {
		parts[i] = v.String()
	}
	return strings.Join(parts, ", ")
}

// Func is ConfigDef.LambdaValidator: a validation function with a description.
type Func struct {
	fn   func(name string, value any) error
	desc string
}

// ValidatorFunc wraps fn as a Validator described by desc.
func ValidatorFunc(desc string, fn func(name string, value any) error) Func {
	return Func{fn: fn, desc: desc}
}

// Validate implements Validator.
func (f Func) Validate(name string, value any) error { return f.fn(name, value) }

// String implements Validator.
func (f Func) String() string { return f.desc }
