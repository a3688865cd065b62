package configdef

import (
	"fmt"
	"maps"
	"slices"
)

// ClassResolver maps a class name or alias to its canonical class name. It reports false when
// no such class exists; Parse then fails with Java's "Class X could not be found." message.
type ClassResolver func(nameOrAlias string) (canonical string, ok bool)

// Def is an ordered set of config keys. Build it with New and Define; once built it is only
// read, so it may be shared between goroutines.
type Def struct {
	keys    []Key
	index   map[string]int
	groups  []string
	classes ClassResolver
}

// New returns an empty Def. Without a ClassResolver every syntactically valid Java class name
// is accepted for CLASS keys.
func New() *Def {
	return &Def{index: map[string]int{}}
}

// Clone returns a copy that can be extended without touching d, like Java's
// new ConfigDef(base).
func (d *Def) Clone() *Def {
	c := &Def{
		keys:    append([]Key(nil), d.keys...),
		index:   maps.Clone(d.index),
		groups:  append([]string(nil), d.groups...),
		classes: d.classes,
	}
	return c
}

// WithClassResolver sets how CLASS values are resolved and returns d.
func (d *Def) WithClassResolver(r ClassResolver) *Def {
	d.classes = r
	return d
}

// Define adds a key and returns d so calls chain. A key defined twice or a default its own
// validator rejects is a programming error, as in Java, and panics.
func (d *Def) Define(k Key) *Def {
	if _, dup := d.index[k.Name]; dup {
		panic(fmt.Sprintf("configdef: Configuration %s is defined twice.", k.Name))
	}
	k = d.normalise(k)
	if k.Group != "" && !slices.Contains(d.groups, k.Group) {
		d.groups = append(d.groups, k.Group)
	}
	d.index[k.Name] = len(d.keys)
	d.keys = append(d.keys, k)
	return d
}

// Replace swaps the definition of an existing key in place, keeping its position; unknown
// keys are appended. It mirrors LinkedHashMap.put, which Connect relies on when a
// connector's own ConfigDef redefines a framework key.
func (d *Def) Replace(k Key) *Def {
	i, ok := d.index[k.Name]
	if !ok {
		return d.Define(k)
	}
	k = d.normalise(k)
	if k.Group != "" && !slices.Contains(d.groups, k.Group) {
		d.groups = append(d.groups, k.Group)
	}
	d.keys[i] = k
	return d
}

func (d *Def) normalise(k Key) Key {
	if k.Width == "" {
		k.Width = WidthNone
	}
	if k.DisplayName == "" {
		k.DisplayName = k.Name
	}
	if k.Group == "" && k.OrderInGroup == 0 {
		k.OrderInGroup = -1
	}
	if k.Dependents == nil {
		k.Dependents = []string{}
	}
	if k.HasDefault && k.Default != nil {
		v, err := d.normaliseDefault(k)
		if err != nil {
			panic(fmt.Sprintf("configdef: invalid default for %s: %v", k.Name, err))
		}
		k.Default = v
		if k.Validator != nil {
			if err := k.Validator.Validate(k.Name, v); err != nil {
				panic(fmt.Sprintf("configdef: default rejected by validator: %v", err))
			}
		}
	}
	return k
}

// normaliseDefault converts convenient Go literals to the typed representation.
func (d *Def) normaliseDefault(k Key) (any, error) {
	switch v := k.Default.(type) {
	case string:
		if k.Type == TypeClass {
			// Defaults name classes kmirror knows by their canonical names; resolving them
			// here would make definitions depend on the resolver being set first.
			return ClassName(javaTrim(v)), nil
		}
		return d.parseType(k.Name, v, k.Type)
	case int:
		switch k.Type {
		case TypeInt:
			return int32(v), nil
		case TypeShort:
			return int16(v), nil
		case TypeLong:
			return int64(v), nil
		case TypeDouble:
			return float64(v), nil
		}
	case int32, int16, int64, float64, bool, []string, ClassName, Password:
		return v, nil
	}
	return nil, fmt.Errorf("unsupported default %#v for type %s", k.Default, k.Type)
}

// Keys returns the keys in definition order.
func (d *Def) Keys() []Key {
	return append([]Key(nil), d.keys...)
}

// Names returns the key names in definition order.
func (d *Def) Names() []string {
	names := make([]string, len(d.keys))
	for i, k := range d.keys {
		names[i] = k.Name
	}
	return names
}

// Lookup returns the key with the given name.
func (d *Def) Lookup(name string) (Key, bool) {
	i, ok := d.index[name]
	if !ok {
		return Key{}, false
	}
	return d.keys[i], true
}

// Has reports whether a key with the given name is defined.
func (d *Def) Has(name string) bool {
	_, ok := d.index[name]
	return ok
}

// Groups returns the groups of the keys in the order they first appeared.
func (d *Def) Groups() []string {
	return append([]string(nil), d.groups...)
}
