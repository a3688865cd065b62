package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxBodyBytes bounds every request body. Connector configs are a few kilobytes; a larger body is a mistake or
// an attack, and Connect (which has no limit) would buffer it all.
const maxBodyBytes = 1 << 20

// readBody reads the whole request body, refusing more than maxBodyBytes with 413.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errorf(http.StatusRequestEntityTooLarge, "Request body is larger than the limit of %d bytes", maxBodyBytes)
	}
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "Failed to read the request body: %v", err)
	}
	return body, nil
}

// badBody reports a body that is not what the endpoint takes. Connect answers these with Jackson's 500;
// kmirror says what is wrong with a 400.
func badBody(format string, args ...any) *httpError {
	return errorf(http.StatusBadRequest, "Invalid request body: "+format, args...)
}

// props is a flat config map as Connect reads it into a Map<String, String>: JSON numbers and booleans are
// coerced to their text (Jackson's default coercion), null stays null (nil) and keys keep the order of their
// first appearance, which matters only for messages that print the map the way Java would.
type props struct {
	keys   []string
	values map[string]*string
}

func newProps() *props { return &props{values: map[string]*string{}} }

// set adds or replaces a key; a replaced key keeps its position, as in a LinkedHashMap.
func (p *props) set(k string, v *string) {
	if _, ok := p.values[k]; !ok {
		p.keys = append(p.keys, k)
	}
	p.values[k] = v
}

func (p *props) delete(k string) {
	if _, ok := p.values[k]; !ok {
		return
	}
	delete(p.values, k)
	for i, key := range p.keys {
		if key == k {
			p.keys = append(p.keys[:i:i], p.keys[i+1:]...)
			break
		}
	}
}

// clone copies p; the values are shared, since nothing changes a value in place.
func (p *props) clone() *props {
	return &props{keys: slices.Clone(p.keys), values: maps.Clone(p.values)}
}

// get returns the value of k; ok is false when k is absent or null, as Java's Map.get returns null for both.
func (p *props) get(k string) (string, bool) {
	v := p.values[k]
	if v == nil {
		return "", false
	}
	return *v, true
}

// strings returns the map without null values.
func (p *props) strings() map[string]string {
	out := make(map[string]string, len(p.values))
	for k, v := range p.values {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

// propsFromMap builds props from a stored config; keys are taken in sorted order since the stored map has none.
func propsFromMap(m map[string]string) *props {
	p := newProps()
	for _, k := range sortedKeys(m) {
		v := m[k]
		p.set(k, &v)
	}
	return p
}

// decodeProps reads a JSON object of scalar values: a flat connector config, or the logger level map.
func decodeProps(body []byte) (*props, error) {
	dec, err := objectDecoder(body, "a JSON object of configuration properties")
	if err != nil {
		return nil, err
	}
	return readProps(dec, "")
}

// readProps reads the members of an object of scalar values; within names the enclosing member for messages.
func readProps(dec *json.Decoder, within string) (*props, error) {
	p := newProps()
	err := eachMember(dec, func(key string, raw json.RawMessage) error {
		v, err := scalarText(raw)
		if err != nil {
			return badBody("the value of %q%s must be a string, number, boolean or null, not %s", key, within, err)
		}
		if strings.ContainsRune(key, 0) {
			return badBody("the key %q%s contains a NUL character (\\u0000), which no configuration key can hold", key, within)
		}
		if v != nil && strings.ContainsRune(*v, 0) {
			return badBody("the value of %q%s contains a NUL character (\\u0000), which no configuration value can hold", key, within)
		}
		p.set(key, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// createRequest is CreateConnectorRequest.
type createRequest struct {
	name         string
	config       *props // nil when absent or null
	initialState string // upper-cased; "" when absent or null
}

// decodeCreateRequest reads POST /connectors' envelope. Unknown members are rejected, as Jackson rejects
// them (Connect with a 500, kmirror with a 400).
func decodeCreateRequest(body []byte) (createRequest, error) {
	var req createRequest
	dec, err := objectDecoder(body, `a JSON object with "name" and "config"`)
	if err != nil {
		return req, err
	}
	err = eachMember(dec, func(key string, raw json.RawMessage) error {
		switch key {
		case "name":
			v, err := scalarText(raw)
			if err != nil {
				return badBody(`"name" must be a string, not %s`, err)
			}
			req.name = ""
			if v != nil {
				req.name = *v
			}
			if strings.ContainsRune(req.name, 0) {
				return badBody(`"name" contains a NUL character (\u0000), which no connector name can hold`)
			}
		case "config":
			if isNull(raw) {
				req.config = nil
				return nil
			}
			if jsonKind(raw) != "an object" {
				return badBody(`"config" must be an object of configuration properties, not %s`, jsonKind(raw))
			}
			dec, err := objectDecoder(raw, "")
			if err != nil {
				return err
			}
			if req.config, err = readProps(dec, ` in "config"`); err != nil {
				return err
			}
		case "initial_state":
			v, err := scalarText(raw)
			if err != nil {
				return badBody(`"initial_state" must be one of RUNNING, PAUSED or STOPPED, not %s`, err)
			}
			req.initialState = ""
			if v != nil {
				req.initialState = strings.ToUpper(*v)
				switch req.initialState {
				case "RUNNING", "PAUSED", "STOPPED":
				default:
					return badBody(`"initial_state" must be one of RUNNING, PAUSED or STOPPED, not %q`, *v)
				}
			}
		default:
			return badBody(`Unrecognized field %q (known fields: "name", "config", "initial_state")`, key)
		}
		return nil
	})
	return req, err
}

// offsetsRequest is the body of PATCH .../offsets: ConnectorOffsets with each entry's maps kept as decoded
// JSON (numbers as json.Number) so validation can see exactly what was sent.
type offsetsRequest struct {
	offsets []offsetEntry
	present bool // the "offsets" member was present and not null
}

// offsetEntry is one ConnectorOffset; a nil map is JSON null or an absent member. Keys keep their JSON order.
type offsetEntry struct {
	partition *jsonObject
	offset    *jsonObject
}

// jsonObject is a decoded JSON object whose member order is kept.
type jsonObject struct {
	keys   []string
	values map[string]any // string, json.Number, bool, nil, or a nested []any / map[string]any
}

func decodeOffsetsRequest(body []byte) (offsetsRequest, error) {
	var req offsetsRequest
	dec, err := objectDecoder(body, `a JSON object with "offsets"`)
	if err != nil {
		return req, err
	}
	err = eachMember(dec, func(key string, raw json.RawMessage) error {
		if key != "offsets" {
			return badBody(`Unrecognized field %q (known fields: "offsets")`, key)
		}
		if isNull(raw) {
			req.offsets, req.present = nil, false
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return badBody(`"offsets" must be an array of {"partition":{...},"offset":{...}} objects, not %s`, jsonKind(raw))
		}
		req.present = true
		req.offsets = make([]offsetEntry, 0, len(items))
		for i, item := range items {
			e, err := decodeOffsetEntry(i, item)
			if err != nil {
				return err
			}
			req.offsets = append(req.offsets, e)
		}
		return nil
	})
	return req, err
}

func decodeOffsetEntry(i int, raw json.RawMessage) (offsetEntry, error) {
	var e offsetEntry
	dec, err := objectDecoder(raw, "")
	if err != nil {
		return e, badBody(`"offsets[%d]" must be an object with "partition" and "offset", not %s`, i, jsonKind(raw))
	}
	err = eachMember(dec, func(key string, raw json.RawMessage) error {
		var target **jsonObject
		switch key {
		case "partition":
			target = &e.partition
		case "offset":
			target = &e.offset
		default:
			return badBody(`Unrecognized field %q in "offsets[%d]" (known fields: "partition", "offset")`, key, i)
		}
		if isNull(raw) {
			*target = nil
			return nil
		}
		obj, err := decodeJSONObject(raw)
		if err != nil {
			return badBody(`"offsets[%d].%s" must be an object or null, not %s`, i, key, jsonKind(raw))
		}
		if err := refuseNUL(obj, fmt.Sprintf(` in "offsets[%d].%s"`, i, key)); err != nil {
			return err
		}
		*target = obj
		return nil
	})
	return e, err
}

// refuseNUL refuses a NUL in a key or a string value of an offsets entry's partition or offset: the store keeps
// them as jsonb, which cannot hold \u0000, so they would fail there with PostgreSQL's error. Nested objects and
// arrays need no check: normalizeObject refuses them before anything is stored.
func refuseNUL(obj *jsonObject, within string) error {
	for _, k := range obj.keys {
		if strings.ContainsRune(k, 0) {
			return badBody("the key %q%s contains a NUL character (\\u0000), which no offset can hold", k, within)
		}
		if v, ok := obj.values[k].(string); ok && strings.ContainsRune(v, 0) {
			return badBody("the value of %q%s contains a NUL character (\\u0000), which no offset can hold", k, within)
		}
	}
	return nil
}

func decodeJSONObject(raw json.RawMessage) (*jsonObject, error) {
	dec, err := objectDecoder(raw, "")
	if err != nil {
		return nil, err
	}
	obj := &jsonObject{values: map[string]any{}}
	err = eachMember(dec, func(key string, raw json.RawMessage) error {
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return err
		}
		if _, ok := obj.values[key]; !ok {
			obj.keys = append(obj.keys, key)
		}
		obj.values[key] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// objectDecoder checks that body holds exactly one JSON object and returns a decoder positioned after its
// opening brace. want describes the expected body for the error message ("" for nested values, whose callers
// word their own).
// invalidUTF8At returns the offset of the first byte of b that is not valid UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// fieldAt names the member of the JSON document body whose key or string value holds the byte at offset at,
// as `the value of "config.topics"` or `the key "a?b" of "config"` (members by name, array elements by index),
// or "" when the byte is not in a string of an otherwise valid document. It reads a copy in which each invalid
// UTF-8 byte is '?', so that the decoder neither stops at them nor moves the offsets.
func fieldAt(body []byte, at int) string {
	clean := bytes.Clone(body)
	for i := 0; i < len(clean); {
		r, n := utf8.DecodeRune(clean[i:])
		if r == utf8.RuneError && n <= 1 {
			clean[i], n = '?', 1
		}
		i += n
	}
	type frame struct {
		object    bool
		key       string // the current member's name (objects)
		index     int    // the current element's index (arrays)
		expectKey bool
	}
	var stack []*frame
	// path names, through each open container's current member, the value being read in frames.
	path := func(frames []*frame) string {
		var b strings.Builder
		for _, f := range frames {
			switch {
			case f.object && b.Len() > 0:
				b.WriteString("." + f.key)
			case f.object:
				b.WriteString(f.key)
			default:
				fmt.Fprintf(&b, "[%d]", f.index)
			}
		}
		return b.String()
	}
	valueDone := func() {
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expectKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(clean))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		past := int(dec.InputOffset()) > at // the token read holds the byte, or went beyond it
		if tok == json.Delim('}') || tok == json.Delim(']') {
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].expectKey {
			key, _ := tok.(string)
			if past {
				if len(stack) == 1 {
					return fmt.Sprintf("the key %q", key)
				}
				return fmt.Sprintf("the key %q of %q", key, path(stack[:len(stack)-1]))
			}
			stack[len(stack)-1].key, stack[len(stack)-1].expectKey = key, false
			continue
		}
		if len(stack) > 0 && !stack[len(stack)-1].object {
			stack[len(stack)-1].index++
		}
		if _, ok := tok.(string); ok && past && len(stack) > 0 {
			return fmt.Sprintf("the value of %q", path(stack))
		}
		if past {
			return ""
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, expectKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{index: -1})
		default:
			valueDone()
		}
	}
}

func objectDecoder(body []byte, want string) (*json.Decoder, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badBody("the body is empty; expected %s", want)
	}
	if !utf8.Valid(body) {
		// Go's decoder would turn the bad bytes into U+FFFD and store something the client never sent.
		at := invalidUTF8At(body)
		where := ""
		if field := fieldAt(body, at); field != "" {
			where = ", in " + field
		}
		return nil, errorf(http.StatusBadRequest, "Malformed JSON in request body: not valid UTF-8 (at byte %d%s)", at, where)
	}
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		return nil, errorf(http.StatusBadRequest, "Malformed JSON in request body: %v", err)
	}
	if kind := jsonKind(body); kind != "an object" {
		return nil, badBody("expected %s, not %s", want, kind)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // the opening brace
		return nil, errorf(http.StatusBadRequest, "Malformed JSON in request body: %v", err)
	}
	return dec, nil
}

// eachMember calls fn for each member of the object whose opening brace dec has consumed, in document order.
func eachMember(dec *json.Decoder, fn func(key string, raw json.RawMessage) error) error {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errorf(http.StatusBadRequest, "Malformed JSON in request body: %v", err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return errorf(http.StatusBadRequest, "Malformed JSON in request body: %v", err)
		}
		if err := fn(key, raw); err != nil {
			return err
		}
	}
	return nil
}

// scalarText coerces a JSON scalar the way Jackson reads it into a String: strings as is, numbers and booleans
// as their literal text, null as nil. Objects and arrays are an error naming what was found.
func scalarText(raw json.RawMessage) (*string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case isNull(raw):
		return nil, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("a malformed string")
		}
		return &s, nil
	case raw[0] == '{' || raw[0] == '[':
		return nil, fmt.Errorf("%s", jsonKind(raw))
	default: // number or boolean: keep the literal, as Jackson's getText does
		s := string(raw)
		return &s, nil
	}
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonKind names the kind of a valid JSON value for error messages.
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
