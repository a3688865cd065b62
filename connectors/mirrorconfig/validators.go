package mirrorconfig

import "github.com/kmirror/kmirror/connectors/configdef"

// pluginVersionValidator is ConnectorConfig.PluginVersionValidator: the value must be a valid
// version requirement. Connect reports the bare Maven message ("Unbounded range: [4.0").
type pluginVersionValidator struct{}

func (pluginVersionValidator) Validate(_ string, value any) error {
	s, ok := value.(string)
	if !ok {
		return nil
	}
	if _, err := versionRequirement(&s); err != nil {
		return configdef.ConfigErrorf(err.Error())
	}
	return nil
}

func (pluginVersionValidator) String() string { return "a plugin version or Maven version range" }

// converterClassValidator is Connect's ConcreteSubClassValidator plus
// InstantiableClassValidator for converter keys. Every class kmirror can resolve is
// instantiable, so only the interface check can fail.
type converterClassValidator struct {
	iface string
}

func (v converterClassValidator) Validate(_ string, value any) error {
	c, ok := value.(configdef.ClassName)
	if !ok {
		return nil
	}
	if !implements(string(c), v.iface) {
		return configdef.ConfigErrorf("Class class " + string(c) + " does not implement the " + v.iface + " interface")
	}
	return nil
}

func (v converterClassValidator) String() string {
	return "A concrete subclass of org.apache.kafka.connect.storage." + v.iface + ", A class with a public, no-argument constructor"
}

// aliasValidator is the validator Connect puts on transforms, predicates and
// topic.creation.groups: not null, no alias twice.
func aliasValidator(desc string) configdef.Validator {
	unique := configdef.ValidatorFunc(desc, func(name string, value any) error {
		list, _ := value.([]string)
		seen := map[string]bool{}
		for _, a := range list {
			if seen[a] {
				return configdef.NewConfigError(name, list, "Duplicate alias provided.")
			}
			seen[a] = true
		}
		return nil
	})
	return configdef.All(configdef.NonNull{}, unique)
}

// nullOrAtLeastZero is transaction.boundary.interval.ms's validator: null means "use the
// worker's offset flush interval".
func nullOrAtLeastZero() configdef.Validator {
	atLeastZero := configdef.AtLeast(0)
	return configdef.ValidatorFunc(atLeastZero.String(), func(name string, value any) error {
		if value == nil {
			return nil
		}
		return atLeastZero.Validate(name, value)
	})
}

// visibleWhenSet is the recommender Connect attaches to the version keys: no suggestions
// (the connector's own definition carries an empty recommender) and visible only once the
// key it versions has a value.
type visibleWhenSet struct {
	key string
}

func (visibleWhenSet) ValidValues(string, map[string]any) []string { return []string{} }

func (r visibleWhenSet) Visible(_ string, parsed map[string]any) bool { return parsed[r.key] != nil }
