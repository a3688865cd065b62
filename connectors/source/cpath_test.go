package source

import "testing"

// The default data path is C, except where the Go path is the one that works (transactions) or was measured
// faster (linger.ms 0); an explicit choice is kept, but transactions always take the Go path.
func TestDataPathAutoTakesCUnlessExactlyOnceOrLingerZero(t *testing.T) {
	for _, tc := range []struct {
		flag     string
		producer map[string]string
		txns     bool
		want     bool
	}{
		{flag: "", want: true},
		{flag: "auto", producer: map[string]string{"linger.ms": "20"}, want: true},
		{flag: "auto", producer: map[string]string{"linger.ms": "0.5"}, want: true},
		{flag: "auto", producer: map[string]string{"linger.ms": "0"}, want: false},
		{flag: "auto", producer: map[string]string{"queue.buffering.max.ms": "0"}, want: false},
		{flag: "auto", txns: true, want: false},
		{flag: "c", producer: map[string]string{"linger.ms": "0"}, want: true},
		{flag: "C", txns: true, want: false},
		{flag: "go", want: false},
	} {
		d, err := ParseDataPath(tc.flag)
		if err != nil {
			t.Fatalf("ParseDataPath(%q): %v", tc.flag, err)
		}
		r := &sourceRun{t: &sourceTask{dataPath: d, eos: tc.txns}, producerProps: tc.producer}
		if got := r.usesCPath(); got != tc.want {
			t.Errorf("--data-path=%q, producer %v, exactly-once %v: C path %v, want %v", tc.flag, tc.producer, tc.txns, got, tc.want)
		}
	}
	if _, err := ParseDataPath("rust"); err == nil {
		t.Error("ParseDataPath accepted rust")
	}
}
