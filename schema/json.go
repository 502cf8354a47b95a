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

// member finds key in the object at doc[start:end] (doc is valid JSON:
// json.Valid checked it, so the scan below needs no error paths but
// the ones a valid document can reach).
func member(doc []byte, start, end int, key string) (s, e int, found bool, err error) {
	i := skipSpace(doc, start)
	if i >= end || doc[i] != '{' {
		return 0, 0, false, &codec.DecodeError{Field: key, Offset: start, Err: codec.ErrInvalid, Detail: "the parent is not an object"}
	}
	i++
	for {
		i = skipSpace(doc, i)
		if doc[i] == '}' {
			return s, e, found, nil
		}
		ks := i
		i = skipString(doc, i)
		k := doc[ks+1 : i-1]
		i = skipSpace(doc, i) + 1 // ':'
		i = skipSpace(doc, i)
		vs := i
		i = skipValue(doc, i)
		if keyIs(k, key) {
			s, e, found = vs, i, true
		}
		i = skipSpace(doc, i)
		if doc[i] == ',' {
			i++
		}
	}
}

// keyIs compares a raw JSON key with key (an escaped one is unquoted first).
func keyIs(raw []byte, key string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == key
	}
	var k string
	json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &k)
	return k == key
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
		i++
	}
	return i
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
