package codec

import (
	"errors"
	"fmt"
)

var (
	// ErrTruncated: the buffer ends before the layout does.
	ErrTruncated = errors.New("truncated")
	// ErrTrailingBytes: the buffer is longer than the layout says.
	ErrTrailingBytes = errors.New("trailing bytes")
	// ErrBadMagic: the buffer does not start with the message's magic, so it is
	// not this kind of message at all.
	ErrBadMagic = errors.New("bad magic")
	// ErrUnsupportedVersion: a version this decoder does not know (newer, or 0).
	ErrUnsupportedVersion = errors.New("unsupported version")
	// ErrInvalid: a field holds a value the format does not allow (an unknown
	// pixel encoding, a non-zero reserved field, inconsistent sizes).
	ErrInvalid = errors.New("invalid value")
	// ErrOverflow: a time conversion does not fit in 64 bits.
	ErrOverflow = errors.New("codec: value out of 64-bit range")
)

// DecodeError says where a buffer failed to decode: the schema, the field,
// the byte offset of that field, and what was wrong. Err is one of the
// sentinel errors above, for errors.Is.
type DecodeError struct {
	Schema string
	Field  string
	Offset int
	Detail string
	Err    error
}

func (e *DecodeError) Error() string {
	s := fmt.Sprintf("codec: %s: %s at byte %d: %v", e.Schema, e.Field, e.Offset, e.Err)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *DecodeError) Unwrap() error { return e.Err }

func decodeErr(schema, field string, off int, err error, format string, args ...any) *DecodeError {
	return &DecodeError{Schema: schema, Field: field, Offset: off, Err: err, Detail: fmt.Sprintf(format, args...)}
}

// checkPrefix validates magic and version, the first 6 bytes of every message.
// A short buffer whose bytes so far match the magic is reported as truncated,
// not as foreign.
func checkPrefix(schema string, b []byte, magic string, minLen int) error {
	n := min(len(b), 4)
	if string(b[:n]) != magic[:n] {
		return decodeErr(schema, "magic", 0, ErrBadMagic, "want %q, have %q", magic, b[:n])
	}
	if len(b) < 4 {
		return decodeErr(schema, "magic", 0, ErrTruncated, "need %d bytes, have %d", minLen, len(b))
	}
	if len(b) < 6 {
		return decodeErr(schema, "version", 4, ErrTruncated, "need %d bytes, have %d", minLen, len(b))
	}
	if v := le.Uint16(b[4:]); v != 1 {
		return decodeErr(schema, "version", 4, ErrUnsupportedVersion, "version %d, this decoder knows 1", v)
	}
	return nil
}

// layout lists a message's fixed fields by offset, to name the field a short
// buffer ends in.
type layout []struct {
	name string
	off  int
}

// fieldAt names the field that contains byte off, and that field's offset.
func (l layout) fieldAt(off int) (string, int) {
	name, at := l[0].name, l[0].off
	for _, f := range l {
		if off >= f.off {
			name, at = f.name, f.off
		}
	}
	return name, at
}
