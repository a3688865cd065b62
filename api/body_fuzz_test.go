package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// The body decoders are the first code a REST request reaches. Whatever the bytes, they must answer with a
// value or a 400 (never a panic, never another status), and what they accept must be storable as sent:
// valid UTF-8 without NUL, which PostgreSQL's text and jsonb cannot hold (issue 14, item 6). The seeds are
// the bodies of the handler tests and the edges those decoders special-case.

var bodySeeds = []string{
	`{"connector.class":"MirrorSourceConnector","source.cluster.alias":"A","target.cluster.alias":"B","topics":"orders"}`,
	`{"tasks.max":4,"enabled":true,"x":null,"y":1.5e3,"z":-0}`,
	`{"a":"1","a":"2"}`, `{}`, `[]`, `null`, `"x"`, `1`, ``, ` `, `{`, `{"a":}`, `{"a":[1]}`, `{"a":{"b":"c"}}`,
	`{"a":"\u0000"}`, `{"\u0000":"a"}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":"\u00e9\ud83d\ude00"}`, `{"a":"1"} {}`,
	`{"name":"mm2","config":{"connector.class":"MirrorSourceConnector"},"initial_state":"paused"}`,
	`{"name":null,"config":null}`, `{"name":1,"config":[]}`, `{"name":"a\u0000b"}`, `{"initial_state":"RUNNING2"}`, `{"extra":1}`,
	`{"offsets":[{"partition":{"cluster":"A","topic":"t","partition":0},"offset":{"offset":41}}]}`,
	`{"offsets":[{"partition":{"group":"g","topic":"t","partition":2147483648},"offset":{"offset":1e400}}]}`,
	`{"offsets":[{"partition":{"sourceClusterAlias":"A","targetClusterAlias":"B"},"offset":null}]}`,
	`{"offsets":[{"partition":null,"offset":{"offset":-1.5}}]}`, `{"offsets":[{"partition":{"k":[1,{"x":null}]},"offset":{}}]}`,
	`{"offsets":[{"partition":{"topic":"t\u0000"},"offset":{"offset":1}}]}`, `{"offsets":{}}`, `{"offsets":[1]}`,
	`{"offsets":[{"partition":{"cluster":"A","topic":"t","partition":123456789012345678901234567890},"offset":{"offset":9223372036854775808}}]}`,
}

// storable reports why s cannot be stored as sent, or "" if it can.
func storable(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "invalid UTF-8"
	case strings.ContainsRune(s, 0):
		return "a NUL"
	}
	return ""
}

// requireBadRequest checks that a decoder's error is a 400 (or the body limit's 413) with a message.
func requireBadRequest(t *testing.T, body []byte, err error) {
	t.Helper()
	var he *httpError
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest || he.Message == "" {
		t.Fatalf("body %q: error %#v is not a 400 with a message", body, err)
	}
	if !utf8.ValidString(he.Message) {
		t.Fatalf("body %q: message %q is not valid UTF-8", body, he.Message)
	}
}

func requireStorableProps(t *testing.T, body []byte, p *props) {
	t.Helper()
	if len(p.keys) != len(p.values) {
		t.Fatalf("body %q: %d keys in order, %d in the map", body, len(p.keys), len(p.values))
	}
	for _, k := range p.keys {
		if why := storable(k); why != "" {
			t.Fatalf("body %q: accepted key %q with %s", body, k, why)
		}
		if v := p.values[k]; v != nil {
			if why := storable(*v); why != "" {
				t.Fatalf("body %q: accepted value %q of %q with %s", body, *v, k, why)
			}
		}
	}
	// What was accepted reads back the same once stored and returned as JSON (the config's round trip).
	out, err := json.Marshal(p.strings())
	if err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	back, err := decodeProps(out)
	if err != nil {
		t.Fatalf("body %q accepted, but its config %s is refused: %v", body, out, err)
	}
	if !maps.Equal(back.strings(), p.strings()) {
		t.Fatalf("body %q: config %v reads back as %v", body, p.strings(), back.strings())
	}
	javaConfigString(p) // the text of "contains no connector type" messages: must not panic
}

func FuzzDecodeProps(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodeProps(body)
		if err != nil {
			requireBadRequest(t, body, err)
			// Invalid UTF-8 is reported as such (with the member that holds it, where it is in one) before
			// anything else, since the decoder would otherwise replace it.
			if !utf8.Valid(body) && len(bytes.TrimSpace(body)) > 0 &&
				!strings.HasPrefix(err.(*httpError).Message, "Malformed JSON in request body: not valid UTF-8 (at byte ") {
				t.Fatalf("body %q: invalid UTF-8 reported as %q", body, err)
			}
			return
		}
		requireStorableProps(t, body, p)
	})
}

func FuzzDecodeCreateRequest(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeCreateRequest(body)
		if err != nil {
			requireBadRequest(t, body, err)
			return
		}
		if why := storable(req.name); why != "" {
			t.Fatalf("body %q: accepted name %q with %s", body, req.name, why)
		}
		switch req.initialState {
		case "", "RUNNING", "PAUSED", "STOPPED":
		default:
			t.Fatalf("body %q: initial state %q", body, req.initialState)
		}
		if req.config != nil {
			requireStorableProps(t, body, req.config)
		}
	})
}

// FuzzDecodeOffsetsRequest runs a PATCH .../offsets body through what alterOffsets does before the store:
// decoding, Connect's normalization, each Mirror connector's rules (whose messages print the values the way
// Java does) and the conversion for the store. Every step answers 400 or passes, and what reaches the store
// holds only storable strings.
func FuzzDecodeOffsetsRequest(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeOffsetsRequest(body)
		if err != nil {
			requireBadRequest(t, body, err)
			return
		}
		offsets, err := normalizeOffsets(req.offsets)
		if err != nil {
			requireBadRequest(t, body, err)
			return
		}
		for _, class := range []string{mirrorconfig.SourceConnectorClass, mirrorconfig.CheckpointConnectorClass,
			mirrorconfig.HeartbeatConnectorClass} {
			if err := validateMirrorOffsets(class, offsets); err != nil {
				requireBadRequest(t, body, err)
			}
		}
		for _, o := range toStoreOffsets(offsets) {
			for _, m := range []map[string]any{o.Partition, o.Offset} {
				for k, v := range m {
					if why := storable(k); why != "" {
						t.Fatalf("body %q: key %q with %s reaches the store", body, k, why)
					}
					if s, ok := v.(string); ok {
						if why := storable(s); why != "" {
							t.Fatalf("body %q: value %q of %q with %s reaches the store", body, s, k, why)
						}
					}
				}
			}
			if _, err := json.Marshal(o); err != nil {
				t.Fatalf("body %q: offset %+v cannot be stored as JSON: %v", body, o, err)
			}
		}
	})
}
