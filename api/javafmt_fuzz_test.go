package api

import (
	"slices"
	"strings"
	"testing"
)

// The Java-format helpers print request contents (config keys, offsets) into error messages, so they see
// whatever a client sends. The order they compute is HashMap's, which must be a permutation of the keys that
// keeps, within one bucket, the insertion order.

// FuzzJavaHashMapOrder: keys given as newline-separated text, in any number and with any content.
func FuzzJavaHashMapOrder(f *testing.F) {
	f.Add("tasks.max\ntopics\nsource.cluster.alias\nfoo\nname", uint8(8))
	f.Add("name\na\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm", uint8(16))
	f.Add("\x00\n\xff\n\U0001F600\n", uint8(0))
	f.Add("Aa\nBB\nAaAa\nBBBB\nAaBB", uint8(1)) // equal Java hash codes
	f.Fuzz(func(t *testing.T, text string, capLog uint8) {
		keys := strings.Split(text, "\n")
		capacity := 1 << (capLog % 31)
		got := javaHashMapOrder(keys, capacity)
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(keys))) {
			t.Fatalf("order %q is not a permutation of %q", got, keys)
		}
		bucket := func(k string) uint32 {
			h := uint32(javaStringHash(k))
			return (h ^ h>>16) & uint32(capacity-1)
		}
		for i := 1; i < len(got); i++ {
			if bucket(got[i-1]) > bucket(got[i]) {
				t.Fatalf("order %q: bucket of %q after that of %q", got, got[i-1], got[i])
			}
		}
		for _, n := range []int{len(keys), 0, 1 << 20} {
			if c := hashMapCopyCapacity(n); c < 1 || c&(c-1) != 0 || float64(n) > 0.75*float64(c) {
				t.Fatalf("copy capacity %d for %d entries", c, n)
			}
			if c := hashMapGrownCapacity(n); c < 16 || c&(c-1) != 0 || float64(n) > 0.75*float64(c) {
				t.Fatalf("grown capacity %d for %d entries", c, n)
			}
		}
		p := newProps()
		for _, k := range keys {
			v := k
			p.set(k, &v)
		}
		s := javaConfigString(p)
		if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
			t.Fatalf("javaConfigString = %q", s)
		}
	})
}

// FuzzJavaValueString: every partition and offset an offsets body normalizes to prints as a Java map that
// names each of its keys, as the Mirror connectors' validation messages do.
func FuzzJavaValueString(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeOffsetsRequest(body)
		if err != nil {
			return
		}
		for _, e := range req.offsets {
			for _, raw := range []*jsonObject{e.partition, e.offset} {
				obj, err := normalizeObject(raw)
				if err != nil || obj == nil {
					continue
				}
				s := javaValueString(obj)
				if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
					t.Fatalf("javaValueString of %s = %q", body, s)
				}
				for _, k := range obj.keys {
					if !strings.Contains(s, k+"=") {
						t.Fatalf("javaValueString of %s = %q lacks key %q", body, s, k)
					}
				}
			}
		}
	})
}
