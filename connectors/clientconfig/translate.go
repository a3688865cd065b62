package clientconfig

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Translate turns the Java-named properties of one client (usually the output
// of Resolve) into librdkafka properties for the role. It injects the Java
// defaults whose absence would change behaviour (isolation.level,
// message.max.bytes, idempotence, ...), applies the settings MM2 forces on the
// role (the replication consumer gets a synthetic group.id built from client.id
// and never commits), and accepts librdkafka property names the Java clients do
// not have as a pass-through. Every key must be known: an unknown or
// unsupported key is an error naming it. All errors are returned at once,
// joined; each is a *KeyError.
//
// Translate allows no file: use Options.Translate for configs that name key stores or CA files.
func Translate(role Role, javaProps map[string]string) (Config, error) {
	return translateJoined(Options{}, role, javaProps)
}

func translateJoined(opts Options, role Role, javaProps map[string]string) (Config, error) {
	cfg, errs := translate(opts, role, javaProps)
	if len(errs) > 0 {
		joined := make([]error, len(errs))
		for i, e := range errs {
			joined[i] = e
		}
		return Config{}, errors.Join(joined...)
	}
	return cfg, nil
}

// translate is Translate returning the errors as a list, for Validate.
func translate(opts Options, role Role, javaProps map[string]string) (Config, []*KeyError) {
	t := &translator{
		opts:     opts,
		role:     role,
		kind:     role.kind(),
		in:       javaProps,
		pending:  make(map[string]bool, len(javaProps)),
		out:      map[string]string{},
		from:     map[string]string{},
		defaults: map[string]string{},
	}
	for k := range javaProps {
		t.pending[k] = true
	}
	t.cfg.MaxPollRecords = 500
	t.cfg.DefaultAPITimeout = 60 * time.Second
	t.cfg.MaxBlock = 60 * time.Second
	if role.connectProducer() {
		t.cfg.MaxBlock = NoLimit
	}

	t.checkKinds()
	t.securityProtocol()
	t.connection()
	switch t.kind {
	case kindProducer:
		t.producer()
	case kindConsumer:
		t.consumer()
	case kindAdmin:
		t.admin()
	}
	t.ssl()
	t.sasl()
	t.passThrough()
	t.applyDefaults()
	t.applyForced()
	t.checkLibRules()
	t.checkPaths()
	t.checkDeliveryOrder()

	sort.Slice(t.errs, func(i, j int) bool {
		if t.errs[i].Key != t.errs[j].Key {
			return t.errs[i].Key < t.errs[j].Key
		}
		return t.errs[i].Msg < t.errs[j].Msg
	})
	sort.Strings(t.cfg.Dropped)
	t.cfg.Dropped = slices.Compact(t.cfg.Dropped)
	sort.Strings(t.cfg.Warnings)
	t.cfg.Props = t.out
	return t.cfg, t.errs
}

// translator carries one translation. Handlers take the keys they own from in;
// what no handler took is checked against librdkafka's names at the end.
type translator struct {
	opts Options
	role Role
	kind clientKind
	in   map[string]string
	// pending holds the input keys no handler has taken yet.
	pending map[string]bool
	// out holds the librdkafka properties, under canonical names (see
	// libAliases), so that two spellings of one property cannot both be set.
	out map[string]string
	// from records, per out key, the input key that set it; "" for values
	// kmirror chose itself.
	from map[string]string
	// defaults are applied after the pass-through, where out has no value.
	defaults map[string]string
	// protocol is security.protocol in librdkafka's lower case.
	protocol string
	cfg      Config
	errs     []*KeyError
}

// get returns an input value and takes the key.
func (t *translator) get(key string) (string, bool) {
	v, ok := t.in[key]
	if ok {
		delete(t.pending, key)
	}
	return v, ok
}

// has reports whether an input key is present, without taking it.
func (t *translator) has(key string) bool {
	_, ok := t.in[key]
	return ok
}

// emit sets a librdkafka property on behalf of the input key src.
func (t *translator) emit(src, lib, value string) {
	lib = canonicalLibName(lib)
	t.out[lib] = value
	t.from[lib] = src
}

// setDefault records a value kmirror wants unless the user set the property.
func (t *translator) setDefault(lib, value string) {
	t.defaults[canonicalLibName(lib)] = value
}

// drop takes a key that is accepted but has no effect.
func (t *translator) drop(key string) {
	delete(t.pending, key)
	t.cfg.Dropped = append(t.cfg.Dropped, key)
}

func (t *translator) warn(key, format string, args ...any) {
	t.cfg.Warnings = append(t.cfg.Warnings, key+": "+fmt.Sprintf(format, args...))
}

func (t *translator) fail(key, format string, args ...any) {
	delete(t.pending, key)
	t.errs = append(t.errs, &KeyError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// integer takes a Java INT or LONG key and parses it within Java's bounds.
func (t *translator) integer(key string, min, max int64) (int64, bool) {
	v, ok := t.get(key)
	if !ok {
		return 0, false
	}
	n, err := parseInteger(v, min, max)
	if err != nil {
		t.fail(key, "%v", err)
		return 0, false
	}
	return n, true
}

// boolean takes a Java BOOLEAN key.
func (t *translator) boolean(key string) (value, ok bool) {
	v, present := t.get(key)
	if !present {
		return false, false
	}
	b, err := parseBool(v)
	if err != nil {
		t.fail(key, "%v", err)
		return false, false
	}
	return b, true
}

// sameNameEnum takes a Java STRING key that is one of two values in any case, which librdkafka knows under the
// same name and values in lower case. It reports whether the key was set.
func (t *translator) sameNameEnum(key, a, b string) bool {
	v, ok := t.get(key)
	if !ok {
		return false
	}
	switch l := strings.ToLower(strings.TrimSpace(v)); l {
	case a, b:
		t.emit(key, key, l)
	default:
		t.fail(key, "invalid value %q: must be %s or %s", v, a, b)
	}
	return true
}

// clamp bounds n to librdkafka's [lo, hi], with a warning when it had to.
func (t *translator) clamp(key string, n, lo, hi int64) int64 {
	switch {
	case n < lo:
		t.warn(key, "%d raised to %d, librdkafka's minimum", n, lo)
		return lo
	case n > hi:
		t.warn(key, "%d lowered to %d, librdkafka's maximum", n, hi)
		return hi
	}
	return n
}

// usesSSL and usesSASL follow security.protocol.
func (t *translator) usesSSL() bool  { return t.protocol == "ssl" || t.protocol == "sasl_ssl" }
func (t *translator) usesSASL() bool { return strings.HasPrefix(t.protocol, "sasl_") }

// checkKinds rejects Java keys that belong to another kind of client, such as a
// consumer key under producer.; Java would ignore them, but they are almost
// always a misplaced setting.
func (t *translator) checkKinds() {
	for key := range t.in {
		kinds, ok := javaKeyKinds(key)
		if !ok || kinds.has(t.kind) {
			continue
		}
		if key == "client.rack" {
			// Producers and admins have no rack-aware fetching; Java ignores it
			// there too.
			t.drop(key)
			continue
		}
		t.fail(key, "%s", nameProblem(t.kind, key))
	}
}

// String lists the kinds in a set, for messages.
func (s kindSet) String() string {
	var names []string
	for _, k := range []clientKind{kindConsumer, kindProducer, kindAdmin} {
		if s.has(k) {
			names = append(names, k.String()+"s")
		}
	}
	return strings.Join(names, " and ")
}
