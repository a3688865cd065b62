package provenance

import (
	"testing"

	"pgregory.net/rapid"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := Origin{
			Alias:     rapid.String().Draw(t, "alias"),
			ClusterID: rapid.StringMatching(`[A-Za-z0-9_-]{0,22}`).Draw(t, "id"),
		}
		got, err := Decode(Encode(o))
		if err != nil || got != o {
			t.Fatalf("Decode(Encode(%+v)) = %+v, %v", o, got, err)
		}
	})
}

func TestEncodeIsCompact(t *testing.T) {
	got := string(Encode(Origin{Alias: "A", ClusterID: "MkU3OEVBNTcwNTJENDM2Qk"}))
	if got != "A@MkU3OEVBNTcwNTJENDM2Qk" {
		t.Fatalf("Encode = %q", got)
	}
	if got := string(Encode(Origin{Alias: "A"})); got != "A@" {
		t.Fatalf("Encode without id = %q", got)
	}
}

func TestDecodeRefusesAValueWithoutSeparator(t *testing.T) {
	if _, err := Decode([]byte("A")); err == nil {
		t.Fatal("Decode(\"A\") accepted a value without '@'")
	}
}

func TestSameComparesIdsWhenBothAreKnown(t *testing.T) {
	cases := []struct {
		a, b Origin
		want bool
	}{
		{Origin{"A", "x"}, Origin{"A", "x"}, true},
		{Origin{"A", "x"}, Origin{"B", "x"}, true},  // renamed alias, same cluster
		{Origin{"A", "x"}, Origin{"A", "y"}, false}, // same alias, other cluster
		{Origin{"A", ""}, Origin{"A", "y"}, true},   // an id unknown: by alias
		{Origin{"A", "x"}, Origin{"B", ""}, false},
		{Origin{"A", ""}, Origin{"A", ""}, true},
	}
	for _, c := range cases {
		if got := Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%+v, %+v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestGuardDecides(t *testing.T) {
	g := NewGuard(Origin{"A", "ida"}, Origin{"B", "idb"})
	if string(g.Stamp()) != "A@ida" {
		t.Fatalf("Stamp = %q", g.Stamp())
	}
	cases := []struct {
		v       string
		present bool
		want    Action
	}{
		{"", false, Stamp},
		{"B@idb", true, Skip},
		{"B@", true, Skip},        // written where the target's id was unknown
		{"other@idb", true, Skip}, // the target under another alias
		{"A@ida", true, Copy},
		{"C@idc", true, Copy},
		{"B@idc", true, Copy}, // another cluster some config calls B
		{"garbage", true, Copy},
	}
	for _, c := range cases {
		if got := g.Decide([]byte(c.v), c.present); got != c.want {
			t.Errorf("Decide(%q, %v) = %v, want %v", c.v, c.present, got, c.want)
		}
	}
}

// Across a chain of flows, a record is never copied into the cluster it was first produced on, and its
// header keeps naming that cluster.
func TestGuardNeverCopiesARecordHome(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		clusters := []Origin{{"A", "ia"}, {"B", "ib"}, {"C", ""}}
		origin := rapid.IntRange(0, 2).Draw(t, "origin")
		var header []byte
		present := false
		at := origin
		for hop := range rapid.IntRange(1, 8).Draw(t, "hops") {
			to := rapid.IntRange(0, 2).Filter(func(i int) bool { return i != at }).Draw(t, "to")
			g := NewGuard(clusters[at], clusters[to])
			switch g.Decide(header, present) {
			case Skip:
				if to != origin {
					t.Fatalf("hop %d: skipped a copy to %s of a record from %s", hop, clusters[to].Alias, clusters[origin].Alias)
				}
				return
			case Stamp:
				header, present = g.Stamp(), true
			}
			if to == origin {
				t.Fatalf("hop %d: copied a record from %s back into it", hop, clusters[origin].Alias)
			}
			if o, _ := Decode(header); !Same(o, clusters[origin]) {
				t.Fatalf("hop %d: header names %+v, the record came from %+v", hop, o, clusters[origin])
			}
			at = to
		}
	})
}
