package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/vrlog/vrlog/codec"
)

// jsonFormat reads a JSON object per payload. JSON declares no types: a
// path resolves to whatever the payload holds, checked per sample (an
// integer stamp must be an integer, a counter a non-negative one).
type jsonFormat struct{}

type jsonPath []string

func (jsonFormat) resolve(path []string) (ref, kind, error) {
	// Any path may name a stamp: the type is the payload's. kInt lets a
	// stamp be an integer or a float (formInt), a float is taken as seconds
	// only when unit says so.
	return jsonPath(path), kInt, nil
}

// maxJSONDepth bounds the nesting a payload may have (encoding/json has
// its own limit of 10000; a stamp path is short).
const maxJSONDepth = 64

func (jsonFormat) read(_, payload []byte, refs []ref, out []num) error {
	if !json.Valid(payload) {
		return jsonErr(payload)
	}
	for i, r := range refs {
		start, end, err := locate(payload, r.(jsonPath))
		if err != nil {
			return err
		}
		v, err := parseNum(payload[start:end])
		if err != nil {
			return &codec.DecodeError{Field: joinPath(r.(jsonPath)), Offset: start, Err: codec.ErrInvalid, Detail: err.Error()}
		}
		out[i] = v
	}
	return nil
}

// jsonErr says where a payload stops being JSON.
func jsonErr(payload []byte) error {
	var v any
	err := json.Unmarshal(payload, &v)
	off := 0
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		off = int(se.Offset)
	}
	detail := "not JSON"
	if err != nil {
		detail = err.Error()
	}
	return &codec.DecodeError{Field: "json", Offset: off, Err: codec.ErrInvalid, Detail: detail}
}

func joinPath(p []string) string {
	var b bytes.Buffer
	for i, s := range p {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// parseNum reads a JSON number: an integer (signed or unsigned 64-bit)
// or a float.
func parseNum(b []byte) (num, error) {
	s := string(b)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return num{k: kInt, i: i}, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return num{k: kUint, u: u}, nil
	}
	if len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return num{k: kFloat, f: f}, nil
		}
	}
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return num{}, fmt.Errorf("%s is not a number", s)
}

// locate finds the value at path in a valid JSON document: its byte span.
// A repeated key counts at its last occurrence (as encoding/json reads it).
func locate(doc []byte, path jsonPath) (start, end int, err error) {
	start, end = 0, len(doc)
	for depth, key := range path {
		if depth >= maxJSONDepth {
			return 0, 0, &codec.DecodeError{Field: joinPath(path), Err: codec.ErrInvalid, Detail: "nested too deep"}
		}
		s, e, found, err := member(doc, start, end, key)
		if err != nil {
			return 0, 0, err
		}
		if !found {
			return 0, 0, &codec.DecodeError{Field: joinPath(path[:depth+1]), Offset: start, Err: codec.ErrInvalid, Detail: "absent"}
		}
		start, end = s, e
	}
	return start, end, nil
}

// member finds key in the object spanning doc[start:end].
func member(doc []byte, start, end int, key string) (s, e int, found bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(doc[start:end]))
	dec.UseNumber()
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return 0, 0, false, &codec.DecodeError{Field: key, Offset: start, Err: codec.ErrInvalid, Detail: "the parent is not an object"}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, false, &codec.DecodeError{Field: key, Offset: start + int(dec.InputOffset()), Err: codec.ErrInvalid, Detail: err.Error()}
		}
		k, _ := tok.(string)
		at := int(dec.InputOffset()) // after the key; then ':' and the value
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, false, &codec.DecodeError{Field: key, Offset: start + at, Err: codec.ErrInvalid, Detail: err.Error()}
		}
		if k != key {
			continue
		}
		vend := int(dec.InputOffset())
		vstart := at
		for vstart < vend && (doc[start+vstart] == ':' || isSpace(doc[start+vstart])) {
			vstart++
		}
		s, e, found = start+vstart, start+vend, true
	}
	return s, e, found, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (jsonFormat) json(dst, _, payload []byte) ([]byte, error) {
	if !json.Valid(payload) {
		return dst, jsonErr(payload)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, payload); err != nil {
		return dst, jsonErr(payload)
	}
	return append(dst, b.Bytes()...), nil
}

// write splices the new numbers into a copy; when the copy has the
// payload's length it is copied back (in place), else it is the new
// payload (resized) and the payload is left as it was.
func (jsonFormat) write(_, payload []byte, refs []ref, vals []num) ([]byte, bool, error) {
	out := append([]byte(nil), payload...)
	for i, r := range refs {
		start, end, err := locate(out, r.(jsonPath))
		if err != nil {
			return nil, false, err
		}
		text := appendNum(nil, vals[i])
		if vals[i].k == kFloat && bytes.IndexAny(text, ".eEn") < 0 {
			text = append(text, ".0"...) // stays a float
		}
		out = append(out[:start:start], append(text, out[end:]...)...)
	}
	if len(out) == len(payload) {
		copy(payload, out)
		return payload, false, nil
	}
	return out, true, nil
}
