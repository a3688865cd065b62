package configdef

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Values holds the typed values Parse produced, one per defined key.
//
// The accessors panic when the key is not defined or holds another type: both are
// programming errors (asking a definition for a key it does not have), like Java's
// AbstractConfig throwing ConfigException from getInt. A null value reads as the zero value.
type Values struct {
	values    map[string]any
	types     map[string]Type
	originals map[string]string
}

// Parse converts raw properties into typed values, as Java's ConfigDef.parse: keys are
// handled in definition order and the first problem is returned as a *ConfigError with
// Java's text. Properties that are not defined are kept only in Originals.
func (d *Def) Parse(props map[string]string) (Values, error) {
	if undefined := d.undefinedDependents(); len(undefined) > 0 {
		return Values{}, ConfigErrorf("Some configurations in are referred in the dependents, but not defined: " +
			strings.Join(undefined, ","))
	}
	v := Values{
		values:    make(map[string]any, len(d.keys)),
		types:     make(map[string]Type, len(d.keys)),
		originals: maps.Clone(props),
	}
	for _, k := range d.keys {
		var parsed any
		if raw, ok := props[k.Name]; ok {
			p, err := d.parseType(k.Name, raw, k.Type)
			if err != nil {
				return Values{}, err
			}
			parsed = p
		} else if !k.HasDefault {
			return Values{}, MissingRequired(k.Name)
		} else {
			parsed = k.Default
		}
		if k.Validator != nil {
			if err := k.Validator.Validate(k.Name, parsed); err != nil {
				return Values{}, err
			}
		}
		v.values[k.Name] = parsed
		v.types[k.Name] = k.Type
	}
	return v, nil
}

func (d *Def) undefinedDependents() []string {
	var out []string
	for _, k := range d.keys {
		for _, dep := range k.Dependents {
			if !d.Has(dep) && !slices.Contains(out, dep) {
				out = append(out, dep)
			}
		}
	}
	return out
}

// Originals returns the raw properties Parse was given, defined or not.
func (v Values) Originals() map[string]string { return maps.Clone(v.originals) }

// Get returns the typed value of a defined key (nil for null).
func (v Values) Get(name string) any {
	if _, ok := v.types[name]; !ok {
		panic(fmt.Sprintf("configdef: Unknown configuration '%s'", name))
	}
	return v.values[name]
}

// IsNull reports whether a defined key's value is null.
func (v Values) IsNull(name string) bool { return v.Get(name) == nil }

// String returns a STRING value.
func (v Values) String(name string) string { return get[string](v, name, TypeString) }

// Int returns an INT value.
func (v Values) Int(name string) int { return int(get[int32](v, name, TypeInt)) }

// Short returns a SHORT value.
func (v Values) Short(name string) int16 { return get[int16](v, name, TypeShort) }

// Long returns a LONG value.
func (v Values) Long(name string) int64 { return get[int64](v, name, TypeLong) }

// Double returns a DOUBLE value.
func (v Values) Double(name string) float64 { return get[float64](v, name, TypeDouble) }

// Bool returns a BOOLEAN value.
func (v Values) Bool(name string) bool { return get[bool](v, name, TypeBoolean) }

// List returns a copy of a LIST value.
func (v Values) List(name string) []string {
	return slices.Clone(get[[]string](v, name, TypeList))
}

// Password returns a PASSWORD value.
func (v Values) Password(name string) Password { return get[Password](v, name, TypePassword) }

// Class returns the canonical class name of a CLASS value.
func (v Values) Class(name string) string { return string(get[ClassName](v, name, TypeClass)) }

func get[T any](v Values, name string, want Type) T {
	var zero T
	t, ok := v.types[name]
	if !ok {
		panic(fmt.Sprintf("configdef: Unknown configuration '%s'", name))
	}
	if t != want {
		panic(fmt.Sprintf("configdef: configuration %s is of type %s, not %s", name, t, want))
	}
	raw := v.values[name]
	if raw == nil {
		return zero
	}
	x, ok := raw.(T)
	if !ok {
		panic(fmt.Sprintf("configdef: configuration %s holds %T", name, raw))
	}
	return x
}
