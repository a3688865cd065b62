package configdef

// Key defines one configuration key, as Java's ConfigDef.ConfigKey does.
//
// Default holds the default value when HasDefault is true; a nil Default with HasDefault is
// a default of null (the key is optional and unset). Default may be given either as the typed
// value (see the package documentation) or, for convenience, as the raw string Java would
// parse (for example ".*, foo" for a LIST); Define normalises it.
//
// Group "" stands for Java's null group. Keys without a group and with OrderInGroup 0 get
// order -1, and an empty DisplayName becomes Name, matching Java's short define() overloads.
type Key struct {
	Name          string
	Type          Type
	Default       any
	HasDefault    bool
	Validator     Validator
	Importance    Importance
	Documentation string
	Group         string
	OrderInGroup  int
	Width         Width
	DisplayName   string
	Dependents    []string
	Recommender   Recommender
}

// Recommender mirrors ConfigDef.Recommender: given the values parsed so far it offers valid
// values for a key and says whether the key is relevant (visible) at all.
type Recommender interface {
	ValidValues(name string, parsed map[string]any) []string
	Visible(name string, parsed map[string]any) bool
}
