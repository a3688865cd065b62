package api

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// Some of Connect's error messages print a java.util.HashMap with its toString ("{k1=v1, k2=v2}"), and a
// HashMap iterates in bucket order, not insertion order. The helpers here reproduce that order so that
// kmirror's messages read exactly like Connect's: buckets are hash(key) & (capacity-1) with Java's
// String.hashCode and HashMap's hash spreading; keys sharing a bucket keep their insertion order. (Buckets
// that grow into trees hold eight or more keys, which never happens at these sizes.)

// javaStringHash is Java's String.hashCode over the string's UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaHashMapOrder returns keys, given in insertion order, in the order a HashMap of the given capacity
// iterates them.
func javaHashMapOrder(keys []string, capacity int) []string {
	type entry struct {
		key    string
		bucket uint32
		pos    int
	}
	entries := make([]entry, len(keys))
	for i, k := range keys {
		h := uint32(javaStringHash(k))
		entries[i] = entry{key: k, bucket: (h ^ h>>16) & uint32(capacity-1), pos: i}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.bucket, b.bucket), cmp.Compare(a.pos, b.pos))
	})
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.key
	}
	return out
}

// hashMapCopyCapacity is the table size of new HashMap<>(m) for a map of n entries (JDK 19 and later, which
// size the table as ceil(n / 0.75) rounded up to a power of two).
func hashMapCopyCapacity(n int) int {
	return tableSizeFor(int(math.Ceil(float64(n) / 0.75)))
}

// hashMapGrownCapacity is the table size of new HashMap<>() after n puts: 16, doubled whenever the size
// exceeds three quarters of it.
func hashMapGrownCapacity(n int) int {
	c := 16
	for float64(n) > 0.75*float64(c) {
		c *= 2
	}
	return c
}

func tableSizeFor(n int) int {
	c := 1
	for c < n {
		c *= 2
	}
	return c
}

// javaMapString renders keys (in insertion order) and their values as Java's AbstractMap.toString of a HashMap
// with the given capacity.
func javaMapString(keys []string, capacity int, value func(key string) string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range javaHashMapOrder(keys, capacity) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(value(k))
	}
	b.WriteByte('}')
	return b.String()
}

// javaConfigString prints a connector config the way Connect prints the Map<String, String> it validates: a
// HashMap copied from the request's map (WorkerConfigTransformer).
func javaConfigString(p *props) string {
	return javaMapString(p.keys, hashMapCopyCapacity(len(p.keys)), func(k string) string {
		if v := p.values[k]; v != nil {
			return *v
		}
		return "null"
	})
}

// javaValueString is String.valueOf of a value decoded from JSON the way Connect holds offsets: strings as is,
// integers as Long, other numbers as Double, maps and lists with their toString.
func javaValueString(v any) string {
	switch v := v.(type) {
	case nil, string, bool, int64, float64:
		return configdef.JavaString(v)
	case *jsonObject:
		return javaMapString(v.keys, hashMapGrownCapacity(len(v.keys)), func(k string) string { return javaValueString(v.values[k]) })
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = javaValueString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return "?"
	}
}
