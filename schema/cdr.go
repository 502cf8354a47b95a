package schema

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/vrlog/vrlog/codec"
)

// cdrFormat reads ROS 2 messages in CDR (XCDR1, what rmw implementations
// and rosbags write): a 4-byte encapsulation header (0 0 = big-endian,
// 0 1 = little-endian, then two option bytes), then the fields in order,
// each aligned to its size (8 at most) counted from the byte after the
// header; strings and sequences are a uint32 length (a string's counts
// its terminating NUL) and their elements. Every sample is walked whole,
// so a payload that does not parse is never stamped.
type cdrFormat struct {
	t *rosType
}

func (cdrFormat) inPlace() {}

// cdrRef is a field path as field indices from the root type.
type cdrRef []int

func newCDRFormat(data []byte, name string) (*cdrFormat, error) {
	t, err := parseROS2Msg(string(data), name)
	if err != nil {
		return nil, err
	}
	return &cdrFormat{t: t}, nil
}

func (f *cdrFormat) resolve(path []string) (ref, kind, error) {
	t := f.t
	var r cdrRef
	for i, name := range path {
		if t == nil {
			return nil, 0, fmt.Errorf("%w: %s is not a message", errNoField, path[i-1])
		}
		j := -1
		for k := range t.fields {
			if t.fields[k].name == name {
				j = k
			}
		}
		if j < 0 {
			return nil, 0, fmt.Errorf("%w in %s", errNoField, t.name)
		}
		r = append(r, j)
		fd := &t.fields[j]
		if fd.array != 0 {
			return nil, kOther, nil
		}
		if fd.msg == nil {
			if i != len(path)-1 {
				return nil, 0, fmt.Errorf("%w: %s is a %s", errNoField, name, fd.prim)
			}
			return r, primKind(fd.prim), nil
		}
		t = fd.msg
	}
	return r, kMessage, nil
}

// cdrWalk is one pass over a sample.
type cdrWalk struct {
	b     []byte // the body, after the encapsulation header
	off   int
	order binary.ByteOrder
	depth int
	path  []int
	// targets: the fields to read (their value and offset), by path
	want []cdrRef
	got  []num
	at   []int
	// json, when set, receives the message
	json []byte
	out  bool
}

// maxCDRDepth bounds nested messages (a definition cannot recurse, but a
// deep one is a crafted one).
const maxCDRDepth = 64

func (w *cdrWalk) fail(field string, err error, format string, args ...any) error {
	return &codec.DecodeError{Field: field, Offset: 4 + w.off, Err: err, Detail: fmt.Sprintf(format, args...)}
}

func (w *cdrWalk) align(n int) { w.off = (w.off + n - 1) / n * n }

func (w *cdrWalk) need(field string, n int) error {
	if n < 0 || w.off+n > len(w.b) || w.off+n < w.off {
		return w.fail(field, codec.ErrTruncated, "need %d bytes, have %d", n, max(0, len(w.b)-w.off))
	}
	return nil
}

// begin starts a CDR walk of payload.
func newCDRWalk(payload []byte) (*cdrWalk, error) {
	if len(payload) < 4 {
		return nil, &codec.DecodeError{Field: "encapsulation", Err: codec.ErrTruncated, Detail: fmt.Sprintf("need 4 bytes, have %d", len(payload))}
	}
	w := &cdrWalk{b: payload[4:]}
	switch {
	case payload[0] == 0 && payload[1] == 1:
		w.order = binary.LittleEndian
	case payload[0] == 0 && payload[1] == 0:
		w.order = binary.BigEndian
	default:
		return nil, &codec.DecodeError{Field: "encapsulation", Err: codec.ErrInvalid,
			Detail: fmt.Sprintf("representation %#02x%02x: want CDR (0x0000 big-endian, 0x0001 little-endian)", payload[0], payload[1])}
	}
	return w, nil
}

func (w *cdrWalk) message(t *rosType) error {
	if w.depth++; w.depth > maxCDRDepth {
		return w.fail(t.name, codec.ErrInvalid, "nested deeper than %d", maxCDRDepth)
	}
	defer func() { w.depth-- }()
	if w.out {
		w.json = append(w.json, '{')
	}
	for i := range t.fields {
		f := &t.fields[i]
		if w.out {
			if i > 0 {
				w.json = append(w.json, ',')
			}
			w.json = appendJSONString(w.json, []byte(f.name))
			w.json = append(w.json, ':')
		}
		w.path = append(w.path, i)
		err := w.field(f)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err
		}
	}
	if w.out {
		w.json = append(w.json, '}')
	}
	return nil
}

func (w *cdrWalk) field(f *rosField) error {
	if f.array == 0 {
		return w.one(f, true)
	}
	n := f.array
	if n < 0 {
		w.align(4)
		if err := w.need(f.name, 4); err != nil {
			return err
		}
		n = int(w.order.Uint32(w.b[w.off:]))
		w.off += 4
		if f.bound > 0 && n > f.bound {
			return w.fail(f.name, codec.ErrInvalid, "%d elements, bounded to %d", n, f.bound)
		}
		if n > len(w.b)-w.off { // every element takes a byte at least
			return w.fail(f.name, codec.ErrTruncated, "%d elements in %d bytes", n, len(w.b)-w.off)
		}
	}
	if w.out {
		w.json = append(w.json, '[')
	}
	for i := range n {
		if w.out && i > 0 {
			w.json = append(w.json, ',')
		}
		if err := w.one(f, false); err != nil {
			return err
		}
	}
	if w.out {
		w.json = append(w.json, ']')
	}
	return nil
}

// one reads one element of f; target: it may be a wanted field.
func (w *cdrWalk) one(f *rosField, target bool) error {
	if f.msg != nil {
		return w.message(f.msg)
	}
	if f.prim == "string" {
		w.align(4)
		if err := w.need(f.name, 4); err != nil {
			return err
		}
		n := int(w.order.Uint32(w.b[w.off:]))
		w.off += 4
		if err := w.need(f.name, n); err != nil {
			return err
		}
		if n == 0 || w.b[w.off+n-1] != 0 {
			return w.fail(f.name, codec.ErrInvalid, "a string without its terminating NUL")
		}
		s := w.b[w.off : w.off+n-1]
		if f.bound > 0 && len(s) > f.bound {
			return w.fail(f.name, codec.ErrInvalid, "%d bytes, bounded to %d", len(s), f.bound)
		}
		if !utf8.Valid(s) { // ROS 2 strings are UTF-8; JSON's must be
			return w.fail(f.name, codec.ErrInvalid, "not UTF-8")
		}
		if w.out {
			w.json = appendJSONString(w.json, s)
		}
		w.off += n
		return nil
	}
	size := primSizes[f.prim]
	w.align(size)
	if err := w.need(f.name, size); err != nil {
		return err
	}
	v := w.prim(f.prim, w.b[w.off:])
	if target {
		for i, p := range w.want {
			if slices.Equal(p, w.path) {
				w.got[i], w.at[i] = v, w.off
			}
		}
	}
	if w.out {
		if f.prim == "bool" {
			w.json = strconv.AppendBool(w.json, v.u != 0)
		} else {
			w.json = appendNum(w.json, v)
		}
	}
	w.off += size
	return nil
}

func (w *cdrWalk) prim(p string, b []byte) num {
	switch p {
	case "int8":
		return num{k: kInt, i: int64(int8(b[0]))}
	case "int16":
		return num{k: kInt, i: int64(int16(w.order.Uint16(b)))}
	case "int32":
		return num{k: kInt, i: int64(int32(w.order.Uint32(b)))}
	case "int64":
		return num{k: kInt, i: int64(w.order.Uint64(b))}
	case "uint16":
		return num{k: kUint, u: uint64(w.order.Uint16(b))}
	case "uint32":
		return num{k: kUint, u: uint64(w.order.Uint32(b))}
	case "uint64":
		return num{k: kUint, u: w.order.Uint64(b)}
	case "float32":
		return num{k: kFloat, f: float64(math.Float32frombits(w.order.Uint32(b)))}
	case "float64":
		return num{k: kFloat, f: math.Float64frombits(w.order.Uint64(b))}
	}
	return num{k: kUint, u: uint64(b[0])} // bool, byte, char, uint8
}

// run walks a whole sample; trailing bytes beyond CDR's final padding
// (up to 3, as writers pad the body to 4) are allowed.
func (f *cdrFormat) run(payload []byte, refs []ref, out bool) (*cdrWalk, error) {
	w, err := newCDRWalk(payload)
	if err != nil {
		return nil, err
	}
	w.out = out
	for _, r := range refs {
		w.want = append(w.want, r.(cdrRef))
	}
	w.got, w.at = make([]num, len(refs)), make([]int, len(refs))
	for i := range w.at {
		w.at[i] = -1
	}
	if err := w.message(f.t); err != nil {
		return nil, err
	}
	if rest := len(w.b) - w.off; rest > 3 {
		return nil, w.fail("end", codec.ErrTrailingBytes, "%d bytes after the message", rest)
	}
	return w, nil
}

func (f *cdrFormat) read(_, payload []byte, refs []ref, out []num) error {
	w, err := f.run(payload, refs, false)
	if err != nil {
		return err
	}
	copy(out, w.got)
	return nil
}

func (f *cdrFormat) json(dst, _, payload []byte) ([]byte, error) {
	w, err := f.run(payload, nil, true)
	if err != nil {
		return dst, err
	}
	return append(dst, w.json...), nil
}

func (f *cdrFormat) write(_, payload []byte, refs []ref, vals []num) ([]byte, bool, error) {
	w, err := f.run(payload, refs, false)
	if err != nil {
		return nil, false, err
	}
	t := f.t
	for i, r := range refs { // all fit, or nothing changes
		if fd := fieldAt(t, r.(cdrRef)); !fits(vals[i], primSizes[fd.prim]) {
			return nil, false, &codec.DecodeError{Field: fd.name, Offset: 4 + w.at[i], Err: codec.ErrOverflow, Detail: "the shifted stamp does not fit the field"}
		}
	}
	for i, r := range refs {
		fd := fieldAt(t, r.(cdrRef))
		b := w.b[w.at[i]:]
		v := vals[i]
		switch fd.prim {
		case "int32":
			w.order.PutUint32(b, uint32(v.i))
		case "uint32":
			w.order.PutUint32(b, uint32(v.u))
		case "int64":
			w.order.PutUint64(b, uint64(asInt(v)))
		case "uint64":
			w.order.PutUint64(b, v.u)
		case "float32":
			w.order.PutUint32(b, math.Float32bits(float32(v.f)))
		case "float64":
			w.order.PutUint64(b, math.Float64bits(v.f))
		default:
			return nil, false, fmt.Errorf("field %s: a %s cannot hold a stamp", fd.name, fd.prim)
		}
	}
	return payload, false, nil
}

func fieldAt(t *rosType, r cdrRef) *rosField {
	var f *rosField
	for _, i := range r {
		f = &t.fields[i]
		t = f.msg
	}
	return f
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst, s []byte) []byte {
	b, _ := json.Marshal(string(s)) // valid UTF-8 here: nothing is replaced
	return append(dst, b...)
}

// fits reports whether an integer value fits a field of size bytes of
// its kind (a float always does).
func fits(v num, size int) bool {
	if size >= 8 || v.k == kFloat {
		return true
	}
	bits := uint(8 * size)
	if v.k == kUint {
		return v.u < 1<<bits
	}
	return v.i >= -1<<(bits-1) && v.i < 1<<(bits-1)
}
