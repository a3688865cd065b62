package mirror

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Errors of the record encodings, wrapped with the record and field at fault.
var (
	// ErrStringTooLong: Kafka's protocol STRING holds at most 32767 UTF-8 bytes.
	ErrStringTooLong = errors.New("string longer than 32767 bytes")
	// ErrMalformedRecord: a key or value is truncated or has a negative string length.
	ErrMalformedRecord = errors.New("malformed record")
)

// recordVersion is the only version of the heartbeat and checkpoint value layouts. Java writes it and,
// reading, parses the version-0 layout whatever the version says; so do we.
const recordVersion int16 = 0

// schemaWriter appends fields in Kafka's protocol Schema encoding: big-endian integers and
// INT16-length-prefixed strings, no tags, no overall length.
type schemaWriter struct {
	buf []byte
	err error
}

func (w *schemaWriter) int16(v int16) { w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(v)) }
func (w *schemaWriter) int32(v int32) { w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(v)) }
func (w *schemaWriter) int64(v int64) { w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(v)) }

func (w *schemaWriter) string(field, s string) {
	if len(s) > math.MaxInt16 {
		if w.err == nil {
			w.err = fmt.Errorf("field %s is %d bytes: %w", field, len(s), ErrStringTooLong)
		}
		return
	}
	w.int16(int16(len(s)))
	w.buf = append(w.buf, s...)
}

func (w *schemaWriter) bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return w.buf, nil
}

// encoded is what was written, or the first failure, as a failure to encode what (e.g. "checkpoint key").
func (w *schemaWriter) encoded(what string) ([]byte, error) {
	if w.err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, w.err)
	}
	return w.buf, nil
}

// decodeRecord decodes a record of kind what (e.g. "checkpoint"): readKey reads the key's fields into rec,
// then readValue the value's. A failure names the part that failed.
func decodeRecord[T any](what string, key, value []byte, readKey, readValue func(*schemaReader, *T)) (T, error) {
	var rec T
	k := schemaReader{buf: key}
	readKey(&k, &rec)
	if k.err != nil {
		var zero T
		return zero, fmt.Errorf("decode %s key: %w", what, k.err)
	}
	v := schemaReader{buf: value}
	readValue(&v, &rec)
	if v.err != nil {
		var zero T
		return zero, fmt.Errorf("decode %s value: %w", what, v.err)
	}
	return rec, nil
}

// schemaReader reads fields in order; the first failure sticks and later reads return zero values.
// Trailing bytes are ignored, as Java ignores them.
type schemaReader struct {
	buf []byte
	err error
}

func (r *schemaReader) take(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.buf) < n {
		r.err = fmt.Errorf("field %s needs %d bytes, %d left: %w", field, n, len(r.buf), ErrMalformedRecord)
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *schemaReader) int16(field string) int16 {
	if b := r.take(field, 2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *schemaReader) int32(field string) int32 {
	if b := r.take(field, 4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *schemaReader) int64(field string) int64 {
	if b := r.take(field, 8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *schemaReader) string(field string) string {
	n := r.int16(field)
	if r.err != nil {
		return ""
	}
	if n < 0 {
		r.err = fmt.Errorf("field %s has negative length %d: %w", field, n, ErrMalformedRecord)
		return ""
	}
	return string(r.take(field, int(n)))
}
