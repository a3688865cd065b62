package mirrorconfig

import (
	"slices"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/configdef"
)

// validation collects ConfigValues the way AbstractHerder.generateResult merges them: values
// of defined keys are looked up by name and a later value for the same key replaces an
// earlier one; values without a definition are kept, each one, in arrival order.
type validation struct {
	keys   *configdef.Def
	keyed  map[string]*configdef.ConfigValue
	loose  []*configdef.ConfigValue
	groups []string
}

func newValidation(keys *configdef.Def, groups []string) *validation {
	return &validation{keys: keys, keyed: map[string]*configdef.ConfigValue{}, groups: groups}
}

// add merges values in arrival order.
func (v *validation) add(values ...*configdef.ConfigValue) {
	for _, cv := range values {
		if v.keys.Has(cv.Name) {
			v.keyed[cv.Name] = cv
		} else {
			v.loose = append(v.loose, cv)
		}
	}
}

// find returns the value reported for name, if any.
func (v *validation) find(name string) *configdef.ConfigValue {
	if cv, ok := v.keyed[name]; ok {
		return cv
	}
	for _, cv := range v.loose {
		if cv.Name == name {
			return cv
		}
	}
	return nil
}

// addError attaches an error to the value reported for name, creating an entry without a
// definition when the key is not defined (its value is the raw property, or null).
func (v *validation) addError(name string, raw *string, msg string) {
	cv := v.find(name)
	if cv == nil {
		cv = newValue(name, raw)
		v.add(cv)
	}
	cv.AddError(msg)
}

// ensureError adds msg unless the value already reports it.
func (v *validation) ensureError(name string, raw *string, msg string) {
	if cv := v.find(name); cv != nil && slices.Contains(cv.Errors, msg) {
		return
	}
	v.addError(name, raw, msg)
}

// infos renders the merged result: values without a definition first, then every defined
// key in definition order (with a null value if nothing reported it), as generateResult
// lists them.
func (v *validation) infos() []configdef.ConfigInfo {
	out := make([]configdef.ConfigInfo, 0, len(v.loose)+len(v.keyed))
	for _, cv := range v.loose {
		out = append(out, configdef.ConfigInfo{Value: valueInfo(cv)})
	}
	for _, k := range v.keys.Keys() {
		def := configdef.KeyInfo(k)
		info := configdef.ConfigInfo{Definition: &def}
		if cv, ok := v.keyed[k.Name]; ok {
			info.Value = valueInfo(cv)
		}
		out = append(out, info)
	}
	return out
}

// newValue is the entry of a key without a definition. A client secret's value shows as a PASSWORD's would
// ("[hidden]"): the validate endpoint must not hand back a password because it came with an error.
func newValue(name string, raw *string) *configdef.ConfigValue {
	if raw != nil && clientconfig.IsSecret(name) {
		hidden := configdef.HiddenPassword
		raw = &hidden
	}
	return &configdef.ConfigValue{Name: name, Value: raw, RecommendedValues: []string{}, Errors: []string{}, Visible: true}
}

func valueInfo(cv *configdef.ConfigValue) *configdef.ConfigValueInfo {
	info := configdef.ValueInfo(*cv)
	return &info
}

func pointers(values []configdef.ConfigValue) []*configdef.ConfigValue {
	out := make([]*configdef.ConfigValue, len(values))
	for i := range values {
		out[i] = &values[i]
	}
	return out
}

// errorCount counts messages the way Connect does: every message of every reported value.
func errorCount(configs []configdef.ConfigInfo) int {
	n := 0
	for _, c := range configs {
		if c.Value != nil {
			n += len(c.Value.Errors)
		}
	}
	return n
}

// unionGroups appends the groups of more to groups, keeping first occurrences.
func unionGroups(groups []string, more ...[]string) []string {
	out := slices.Clone(groups)
	for _, list := range more {
		for _, g := range list {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}
