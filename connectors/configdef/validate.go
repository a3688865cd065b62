package configdef

import "slices"

// ConfigValue is the validation result for one key, Java's ConfigValue with the value already
// rendered as a string (nil for null).
type ConfigValue struct {
	Name              string
	Value             *string
	RecommendedValues []string
	Errors            []string
	Visible           bool
}

// AddError appends an error message.
func (c *ConfigValue) AddError(msg string) { c.Errors = append(c.Errors, msg) }

// Validate checks props against the definition the way ConfigDef.validateAll does and
// returns one ConfigValue per defined key, in definition order, followed by an entry for each
// dependent that is referred to but not defined. A nil map value is a property explicitly set
// to null (JSON null): it parses to null and the key's validator still runs.
//
// Java keeps validating a key after a parse failure, with a null value, so a malformed number
// on a key with a Range yields two messages; this is reproduced on purpose.
func (d *Def) Validate(props map[string]*string) []ConfigValue {
	out := make([]ConfigValue, 0, len(d.keys))
	parsed := make(map[string]any, len(d.keys))
	for _, k := range d.keys {
		cv := ConfigValue{Name: k.Name, Visible: true, RecommendedValues: []string{}, Errors: []string{}}
		var value any
		raw, set := props[k.Name]
		switch {
		case set && raw != nil:
			v, err := d.parseType(k.Name, *raw, k.Type)
			if err != nil {
				cv.AddError(err.Error())
			} else {
				value = v
			}
		case set:
			// Explicit null: parseType(null) is null in Java, not an error.
		case !k.HasDefault:
			cv.AddError(MissingRequired(k.Name).Error())
		default:
			value = k.Default
		}
		if k.Validator != nil {
			if err := k.Validator.Validate(k.Name, value); err != nil {
				cv.AddError(err.Error())
			}
		}
		cv.Value = ConvertToString(value, k.Type)
		parsed[k.Name] = value
		out = append(out, cv)
	}
	// Recommenders see every parsed value, as Java's second pass does.
	for i, k := range d.keys {
		if k.Recommender == nil {
			continue
		}
		if rec := k.Recommender.ValidValues(k.Name, parsed); rec != nil {
			out[i].RecommendedValues = slices.Clone(rec)
		}
		out[i].Visible = k.Recommender.Visible(k.Name, parsed)
	}
	for _, dep := range d.undefinedDependents() {
		out = append(out, ConfigValue{
			Name:              dep,
			RecommendedValues: []string{},
			Errors:            []string{dep + " is referred in the dependents, but not defined."},
			Visible:           false,
		})
	}
	return out
}
