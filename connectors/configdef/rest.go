package configdef

import "slices"

// ConfigKeyInfo is the JSON definition of a key in Connect's REST API
// (rest/entities/ConfigKeyInfo.java). Fields are in Jackson's output order; note that the
// order in group is serialised as "order".
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
	Order         int      `json:"order"`
}

// ConfigValueInfo is the JSON validation result of a key (rest/entities/ConfigValueInfo.java).
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// ConfigInfo pairs a definition with its validation result; either may be null.
type ConfigInfo struct {
	Definition *ConfigKeyInfo   `json:"definition"`
	Value      *ConfigValueInfo `json:"value"`
}

// ConfigInfos is the body of PUT /connector-plugins/{plugin}/config/validate.
type ConfigInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

// KeyInfo converts a key definition as AbstractHerder.convertConfigKey does: required is true
// and default_value null when the key has no default; otherwise the default is rendered with
// ConvertToString (null stays null).
func KeyInfo(k Key) ConfigKeyInfo {
	info := ConfigKeyInfo{
		Name:          k.Name,
		Type:          string(k.Type),
		Required:      !k.HasDefault,
		Importance:    string(k.Importance),
		Documentation: k.Documentation,
		Width:         string(k.Width),
		DisplayName:   k.DisplayName,
		Dependents:    slices.Clone(k.Dependents),
		Order:         k.OrderInGroup,
	}
	if k.HasDefault {
		info.DefaultValue = ConvertToString(k.Default, k.Type)
	}
	if k.Group != "" {
		g := k.Group
		info.Group = &g
	}
	if info.Width == "" {
		info.Width = string(WidthNone)
	}
	if info.DisplayName == "" {
		info.DisplayName = k.Name
	}
	if info.Dependents == nil {
		info.Dependents = []string{}
	}
	return info
}

// ValueInfo converts a validation result to its JSON shape, with empty lists rather than null.
func ValueInfo(v ConfigValue) ConfigValueInfo {
	info := ConfigValueInfo{
		Name:              v.Name,
		Value:             v.Value,
		RecommendedValues: slices.Clone(v.RecommendedValues),
		Errors:            slices.Clone(v.Errors),
		Visible:           v.Visible,
	}
	if info.RecommendedValues == nil {
		info.RecommendedValues = []string{}
	}
	if info.Errors == nil {
		info.Errors = []string{}
	}
	return info
}
