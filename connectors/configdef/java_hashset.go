package configdef

import (
	"slices"
	"unicode/utf16"
)

// javaHashSetOrder returns the strings in the order a java.util.HashSet built by adding them
// one by one iterates them. Several Kafka messages list the options of a set, and clients
// (and our golden tests) see that order.
func javaHashSetOrder(values []string) []string {
	// HashMap starts with 16 buckets and doubles whenever size exceeds 3/4 of the capacity;
	// a resize keeps the relative order of entries that land in the same bucket.
	capacity := 16
	for len(values) > capacity*3/4 {
		capacity *= 2
	}
	type entry struct {
		s      string
		bucket int
	}
	entries := make([]entry, len(values))
	for i, s := range values {
		entries[i] = entry{s: s, bucket: int(javaSpreadHash(s) & uint32(capacity-1))}
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return a.bucket - b.bucket })
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.s
	}
	return out
}

// javaSpreadHash is HashMap.hash(String): String.hashCode over UTF-16 units, with the high
// half folded into the low half.
func javaSpreadHash(s string) uint32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	x := uint32(h)
	return x ^ (x >> 16)
}
