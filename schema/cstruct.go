package schema

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vrlog/vrlog/codec"
)

// A C struct layout: "uint64_t seq; int64_t t_ns; double pos[3]", fields
// in order, packed (no padding) unless the layout starts with
// "align natural;" (each field at a multiple of its size, the struct
// padded to its largest). A field may give its offset: "int64_t t_ns @8"
// (then the fields after it follow from there). The payload must be
// exactly the struct's size.

type cfield struct {
	name string
	typ  ctype
	n    int // array length, 1 for a scalar
	off  int
}

type ctype struct {
	size int
	k    kind
}

var ctypes = map[string]ctype{
	"int8_t": {1, kInt}, "uint8_t": {1, kUint}, "int16_t": {2, kInt}, "uint16_t": {2, kUint},
	"int32_t": {4, kInt}, "uint32_t": {4, kUint}, "int64_t": {8, kInt}, "uint64_t": {8, kUint},
	"float": {4, kFloat}, "double": {8, kFloat}, "bool": {1, kUint}, "char": {1, kInt},
	"i8": {1, kInt}, "u8": {1, kUint}, "i16": {2, kInt}, "u16": {2, kUint}, "i32": {4, kInt}, "u32": {4, kUint},
	"i64": {8, kInt}, "u64": {8, kUint}, "f32": {4, kFloat}, "f64": {8, kFloat},
}

type structFormat struct {
	fields []cfield
	size   int
	order  binary.ByteOrder
}

func (structFormat) inPlace() {}

// maxStructSize bounds a declared layout (a C struct of a simulator's
// sample, not an image).
const maxStructSize = 1 << 20

func newStructFormat(layout, endian string) (*structFormat, error) {
	f := &structFormat{order: binary.LittleEndian}
	switch endian {
	case "", "little":
	case "big":
		f.order = binary.BigEndian
	default:
		return nil, fmt.Errorf("endian=%s: want little or big", endian)
	}
	natural, maxAlign := false, 1
	off := 0
	seen := map[string]bool{}
	for i, decl := range strings.Split(layout, ";") {
		decl = strings.TrimSpace(decl)
		if decl == "" {
			continue
		}
		if i == 0 && strings.HasPrefix(decl, "align ") {
			switch strings.TrimSpace(decl[6:]) {
			case "natural":
				natural = true
			case "packed":
			default:
				return nil, fmt.Errorf("struct: %q: want align packed or align natural", decl)
			}
			continue
		}
		words := strings.Fields(decl)
		at := -1
		if len(words) == 3 && strings.HasPrefix(words[2], "@") {
			n, err := strconv.Atoi(words[2][1:])
			if err != nil || n < 0 || n > maxStructSize {
				return nil, fmt.Errorf("struct: field %q: offset %s: want @BYTE", decl, words[2])
			}
			at, words = n, words[:2]
		}
		if len(words) != 2 {
			return nil, fmt.Errorf("struct: field %q: want TYPE NAME[N] [@OFFSET]", decl)
		}
		t, ok := ctypes[words[0]]
		if !ok {
			return nil, fmt.Errorf("struct: field %q: type %s: want int8_t..uint64_t, float, double, bool, char (or i8..u64, f32, f64)", decl, words[0])
		}
		name, n := words[1], 1
		if j := strings.IndexByte(name, '['); j >= 0 {
			k, err := strconv.Atoi(strings.TrimSuffix(name[j+1:], "]"))
			if !strings.HasSuffix(name, "]") || err != nil || k < 1 || k > maxStructSize {
				return nil, fmt.Errorf("struct: field %q: array length: want NAME[N], N ≥ 1", decl)
			}
			name, n = name[:j], k
		}
		if name == "" || seen[name] || !cIdent(name) {
			return nil, fmt.Errorf("struct: field %q: name missing, repeated or not a C identifier (letters, digits, _)", decl)
		}
		seen[name] = true
		if at >= 0 {
			off = at
		} else if natural && off%t.size != 0 {
			off += t.size - off%t.size
		}
		maxAlign = max(maxAlign, t.size)
		f.fields = append(f.fields, cfield{name: name, typ: t, n: n, off: off})
		off += t.size * n
		if off > maxStructSize {
			return nil, fmt.Errorf("struct: larger than %d bytes", maxStructSize)
		}
		f.size = max(f.size, off)
	}
	if len(f.fields) == 0 {
		return nil, fmt.Errorf("struct: no fields")
	}
	if natural && f.size%maxAlign != 0 {
		f.size += maxAlign - f.size%maxAlign
	}
	return f, nil
}

func (f *structFormat) resolve(path []string) (ref, kind, error) {
	if len(path) == 1 {
		for i := range f.fields {
			if c := &f.fields[i]; c.name == path[0] {
				if c.n > 1 {
					return nil, kOther, nil
				}
				return c, c.typ.k, nil
			}
		}
	}
	return nil, 0, errNoField
}

func (f *structFormat) check(payload []byte) error {
	if len(payload) < f.size {
		return &codec.DecodeError{Field: "struct", Offset: len(payload), Err: codec.ErrTruncated, Detail: fmt.Sprintf("need %d bytes, have %d", f.size, len(payload))}
	}
	if len(payload) > f.size {
		return &codec.DecodeError{Field: "end", Offset: f.size, Err: codec.ErrTrailingBytes, Detail: fmt.Sprintf("the struct is %d bytes, have %d", f.size, len(payload))}
	}
	return nil
}

func (f *structFormat) get(b []byte, c *cfield, i int) num {
	p := b[c.off+i*c.typ.size:]
	var u uint64
	switch c.typ.size {
	case 1:
		u = uint64(p[0])
	case 2:
		u = uint64(f.order.Uint16(p))
	case 4:
		u = uint64(f.order.Uint32(p))
	default:
		u = f.order.Uint64(p)
	}
	switch c.typ.k {
	case kFloat:
		if c.typ.size == 4 {
			return num{k: kFloat, f: float64(math.Float32frombits(uint32(u)))}
		}
		return num{k: kFloat, f: math.Float64frombits(u)}
	case kInt:
		shift := 64 - 8*c.typ.size
		return num{k: kInt, i: int64(u<<shift) >> shift}
	}
	return num{k: kUint, u: u}
}

func (f *structFormat) read(_, payload []byte, refs []ref, out []num) error {
	if err := f.check(payload); err != nil {
		return err
	}
	for i, r := range refs {
		out[i] = f.get(payload, r.(*cfield), 0)
	}
	return nil
}

func (f *structFormat) json(dst, _, payload []byte) ([]byte, error) {
	if err := f.check(payload); err != nil {
		return dst, err
	}
	dst = append(dst, '{')
	for i := range f.fields {
		c := &f.fields[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendQuote(dst, c.name)
		dst = append(dst, ':')
		if c.n > 1 {
			dst = append(dst, '[')
		}
		for j := range c.n {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendNum(dst, f.get(payload, c, j))
		}
		if c.n > 1 {
			dst = append(dst, ']')
		}
	}
	return append(dst, '}'), nil
}

func (f *structFormat) write(_, payload []byte, refs []ref, vals []num) ([]byte, bool, error) {
	if err := f.check(payload); err != nil {
		return nil, false, err
	}
	for i, r := range refs { // all fit, or nothing changes
		if c := r.(*cfield); !fits(vals[i], c.typ.size) {
			return nil, false, &codec.DecodeError{Field: c.name, Offset: c.off, Err: codec.ErrOverflow, Detail: "the shifted stamp does not fit the field"}
		}
	}
	for i, r := range refs {
		c, v := r.(*cfield), vals[i]
		p := payload[c.off:]
		var u uint64
		switch v.k {
		case kFloat:
			u = math.Float64bits(v.f)
			if c.typ.size == 4 {
				u = uint64(math.Float32bits(float32(v.f)))
			}
		case kInt:
			u = uint64(v.i)
		default:
			u = v.u
		}
		switch c.typ.size {
		case 1:
			p[0] = byte(u)
		case 2:
			f.order.PutUint16(p, uint16(u))
		case 4:
			f.order.PutUint32(p, uint32(u))
		default:
			f.order.PutUint64(p, u)
		}
	}
	return payload, false, nil
}

// appendNum appends v as JSON; NaN and ±Inf, which JSON lacks, as null
// (as the state's JSON does).
func appendNum(dst []byte, v num) []byte {
	switch v.k {
	case kFloat:
		if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
			return append(dst, "null"...)
		}
		return strconv.AppendFloat(dst, v.f, 'g', -1, 64)
	case kInt:
		return strconv.AppendInt(dst, v.i, 10)
	}
	return strconv.AppendUint(dst, v.u, 10)
}

// cIdent reports whether s is a C identifier: a field name, and a JSON
// key and CSV column as it is.
func cIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || (i > 0 && '0' <= r && r <= '9')) {
			return false
		}
	}
	return s != ""
}
