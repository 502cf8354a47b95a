package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"unicode/utf8"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/vrlog/vrlog/codec"
)

// protoFormat reads protobuf messages of one descriptor. Stamps are read
// from the wire format directly (protowire: only the fields on the path
// are decoded); Decode and Restamp go through dynamicpb.
type protoFormat struct {
	md protoreflect.MessageDescriptor
}

// protoRef is a field path as field descriptors.
type protoRef []protoreflect.FieldDescriptor

// compileProto compiles a .proto (its imports found next to it, in the
// include directories, or among the well-known types) into a
// self-contained FileDescriptorSet, dependencies first.
func compileProto(file, dir string, includes []string) ([]byte, error) {
	paths := []string{}
	for _, inc := range includes {
		if inc == "" {
			continue
		}
		if !filepath.IsAbs(inc) {
			inc = filepath.Join(dir, inc)
		}
		paths = append(paths, inc)
	}
	abs := file
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, abs)
	}
	paths = append(paths, filepath.Dir(abs))
	comp := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths})}
	files, err := comp.Compile(context.Background(), filepath.Base(abs))
	if err != nil {
		return nil, err
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imps := fd.Imports()
		for i := range imps.Len() {
			add(imps.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	for _, f := range files {
		add(f)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(set)
}

func newProtoFormat(fds []byte, name string) (*protoFormat, error) {
	set := &descriptorpb.FileDescriptorSet{}
	if err := proto.Unmarshal(fds, set); err != nil {
		return nil, fmt.Errorf("descriptor: not a FileDescriptorSet: %v", err)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("descriptor: %v (a FileDescriptorSet must hold the imports too: protoc --include_imports)", err)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("message %s: not in the descriptor", name)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a message", name)
	}
	return &protoFormat{md: md}, nil
}

func (f *protoFormat) resolve(path []string) (ref, kind, error) {
	md := f.md
	var r protoRef
	for i, name := range path {
		if md == nil {
			return nil, 0, fmt.Errorf("%w: %s is not a message", errNoField, path[i-1])
		}
		fields := md.Fields()
		fd := fields.ByName(protoreflect.Name(name))
		if fd == nil {
			fd = fields.ByJSONName(name)
		}
		if fd == nil {
			return nil, 0, fmt.Errorf("%w in %s", errNoField, md.FullName())
		}
		r = append(r, fd)
		if fd.IsList() || fd.IsMap() {
			return nil, kOther, nil
		}
		md = fd.Message()
	}
	return r, protoKind(r[len(r)-1]), nil
}

func protoKind(fd protoreflect.FieldDescriptor) kind {
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind,
		protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		return kInt
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind,
		protoreflect.BoolKind, protoreflect.EnumKind:
		return kUint
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return kFloat
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return kMessage
	}
	return kOther
}

// walk checks that b is a sequence of well-formed fields; off is b's
// offset in the payload, for errors.
func walk(b []byte, off int, each func(num protowire.Number, typ protowire.Type, field, value []byte, at int) error) error {
	at := 0
	for at < len(b) {
		n, typ, tl := protowire.ConsumeTag(b[at:])
		if tl < 0 {
			return &codec.DecodeError{Field: "tag", Offset: off + at, Err: codec.ErrInvalid, Detail: protowire.ParseError(tl).Error()}
		}
		if n > protowire.MaxValidNumber {
			return &codec.DecodeError{Field: "tag", Offset: off + at, Err: codec.ErrInvalid, Detail: fmt.Sprintf("field number %d above %d", n, protowire.MaxValidNumber)}
		}
		vl := protowire.ConsumeFieldValue(n, typ, b[at+tl:])
		if vl < 0 {
			return &codec.DecodeError{Field: fmt.Sprintf("field %d", n), Offset: off + at, Err: codec.ErrInvalid, Detail: protowire.ParseError(vl).Error()}
		}
		if each != nil {
			if err := each(n, typ, b[at:at+tl+vl], b[at+tl:at+tl+vl], off+at); err != nil {
				return err
			}
		}
		at += tl + vl
	}
	return nil
}

// maxProtoDepth bounds nested messages (protobuf-go allows 10000).
const maxProtoDepth = 64

// validate checks a message the way proto.Unmarshal does, without
// building it (the record-time stamp of every sample): every field well
// formed; a known field with its type's wire type (another wire type
// makes it an unknown field, as in protobuf-go) holds a valid value: a
// nested message that validates, a proto3 string that is UTF-8, a packed
// repeated scalar made of whole values. FuzzProtobuf checks it against
// proto.Unmarshal.
func validate(b []byte, off int, md protoreflect.MessageDescriptor, depth int) error {
	if depth > maxProtoDepth {
		return &codec.DecodeError{Field: string(md.FullName()), Offset: off, Err: codec.ErrInvalid, Detail: "nested too deep"}
	}
	fields := md.Fields()
	return walk(b, off, func(n protowire.Number, typ protowire.Type, field, value []byte, at int) error {
		if typ == protowire.EndGroupType {
			return &codec.DecodeError{Field: fmt.Sprintf("field %d", n), Offset: at, Err: codec.ErrInvalid, Detail: "end of a group that was not started"}
		}
		fd := fields.ByNumber(n)
		if fd == nil || typ != protowire.BytesType {
			return nil // unknown, or a scalar whose value ConsumeFieldValue checked
		}
		vat := at + len(field) - len(value)
		v, _ := protowire.ConsumeBytes(value)
		vat += len(value) - len(v)
		bad := func(detail string) error {
			return &codec.DecodeError{Field: string(fd.Name()), Offset: vat, Err: codec.ErrInvalid, Detail: detail}
		}
		switch fd.Kind() {
		case protoreflect.MessageKind:
			return validate(v, vat, fd.Message(), depth+1)
		case protoreflect.StringKind:
			if fd.Syntax() == protoreflect.Proto3 && !utf8.Valid(v) {
				return bad("a string that is not UTF-8")
			}
		case protoreflect.BytesKind, protoreflect.GroupKind:
		default: // a packed repeated scalar
			if !fd.IsList() {
				return nil // a scalar with a length's wire type: unknown
			}
			for len(v) > 0 {
				var k int
				switch wireOf(fd.Kind()) {
				case protowire.VarintType:
					_, k = protowire.ConsumeVarint(v)
				case protowire.Fixed32Type:
					_, k = protowire.ConsumeFixed32(v)
				default:
					_, k = protowire.ConsumeFixed64(v)
				}
				if k < 0 {
					return bad("a packed value cut short")
				}
				v = v[k:]
			}
		}
		return nil
	})
}

// wireOf is the wire type of a scalar kind.
func wireOf(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.FloatKind, protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return protowire.Fixed32Type
	case protoreflect.DoubleKind, protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return protowire.Fixed64Type
	}
	return protowire.VarintType
}

func (f *protoFormat) read(_, payload []byte, refs []ref, out []num) error {
	if err := validate(payload, 0, f.md, 0); err != nil {
		return err
	}
	for i, r := range refs {
		v, err := protoGet(payload, r.(protoRef))
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}

// protoGet reads the scalar at path r: the last occurrence of each field
// (a scalar's last value wins; a message's last occurrence stands for the
// merge); an absent field is its zero value, marked absent.
func protoGet(b []byte, r protoRef) (num, error) {
	off := 0
	for depth, fd := range r {
		last := depth == len(r)-1
		var val []byte
		var vtyp protowire.Type
		var vat int
		found := false
		want := protowire.BytesType // a message
		if last {
			want = wireOf(fd.Kind())
		}
		err := walk(b, off, func(n protowire.Number, typ protowire.Type, _, value []byte, at int) error {
			if n == fd.Number() && typ == want { // another wire type makes it an unknown field
				val, vtyp, vat, found = value, typ, at, true
			}
			return nil
		})
		if err != nil {
			return num{}, err
		}
		if !found {
			return num{k: protoKind(r[len(r)-1]), absent: true}, nil
		}
		if !last {
			if vtyp != protowire.BytesType {
				return num{}, &codec.DecodeError{Field: string(fd.Name()), Offset: vat, Err: codec.ErrInvalid, Detail: "a message field with a scalar's wire type"}
			}
			v, n := protowire.ConsumeBytes(val)
			if n < 0 {
				return num{}, &codec.DecodeError{Field: string(fd.Name()), Offset: vat, Err: codec.ErrInvalid, Detail: protowire.ParseError(n).Error()}
			}
			b, off = v, vat+len(val)-len(v)
			continue
		}
		return protoScalar(fd, vtyp, val, vat)
	}
	return num{}, nil
}

func protoScalar(fd protoreflect.FieldDescriptor, typ protowire.Type, b []byte, at int) (num, error) {
	bad := func() (num, error) {
		return num{}, &codec.DecodeError{Field: string(fd.Name()), Offset: at, Err: codec.ErrInvalid, Detail: fmt.Sprintf("wire type %d for a %s field", typ, fd.Kind())}
	}
	switch typ {
	case protowire.VarintType:
		v, _ := protowire.ConsumeVarint(b)
		switch fd.Kind() {
		case protoreflect.Int32Kind:
			return num{k: kInt, i: int64(int32(v))}, nil
		case protoreflect.Int64Kind:
			return num{k: kInt, i: int64(v)}, nil
		case protoreflect.Sint32Kind:
			return num{k: kInt, i: int64(int32(protowire.DecodeZigZag(v & math.MaxUint32)))}, nil
		case protoreflect.Sint64Kind:
			return num{k: kInt, i: protowire.DecodeZigZag(v)}, nil
		case protoreflect.Uint32Kind:
			return num{k: kUint, u: uint64(uint32(v))}, nil
		case protoreflect.Uint64Kind, protoreflect.EnumKind, protoreflect.BoolKind:
			return num{k: kUint, u: v}, nil
		}
	case protowire.Fixed64Type:
		v, _ := protowire.ConsumeFixed64(b)
		switch fd.Kind() {
		case protoreflect.Fixed64Kind:
			return num{k: kUint, u: v}, nil
		case protoreflect.Sfixed64Kind:
			return num{k: kInt, i: int64(v)}, nil
		case protoreflect.DoubleKind:
			return num{k: kFloat, f: math.Float64frombits(v)}, nil
		}
	case protowire.Fixed32Type:
		v, _ := protowire.ConsumeFixed32(b)
		switch fd.Kind() {
		case protoreflect.Fixed32Kind:
			return num{k: kUint, u: uint64(v)}, nil
		case protoreflect.Sfixed32Kind:
			return num{k: kInt, i: int64(int32(v))}, nil
		case protoreflect.FloatKind:
			return num{k: kFloat, f: float64(math.Float32frombits(v))}, nil
		}
	}
	return bad()
}

// protoJSON is the JSON vrlog writes of a protobuf message: proto field
// names, every field (zero values too), int64 as strings (the proto3 JSON
// mapping; Python's MessageToDict with preserving_proto_field_name and
// always_print_fields_with_no_presence writes the same).
var protoJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// unmarshalOpts: proto2's required fields are not enforced (validate
// does not either), nesting is bounded as validate bounds it.
var unmarshalOpts = proto.UnmarshalOptions{RecursionLimit: maxProtoDepth, AllowPartial: true}

func (f *protoFormat) unmarshal(payload []byte) (*dynamicpb.Message, error) {
	if err := validate(payload, 0, f.md, 0); err != nil {
		return nil, err
	}
	m := dynamicpb.NewMessage(f.md)
	if err := unmarshalOpts.Unmarshal(payload, m); err != nil {
		return nil, &codec.DecodeError{Field: "message", Err: codec.ErrInvalid, Detail: err.Error()}
	}
	return m, nil
}

func (f *protoFormat) json(dst, _, payload []byte) ([]byte, error) {
	m, err := f.unmarshal(payload)
	if err != nil {
		return dst, err
	}
	b, err := protoJSON.Marshal(m)
	if err != nil {
		return dst, &codec.DecodeError{Field: "message", Err: codec.ErrInvalid, Detail: err.Error()}
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil { // protojson varies its spacing on purpose
		return dst, err
	}
	return append(dst, c.Bytes()...), nil
}

func (f *protoFormat) write(_, payload []byte, refs []ref, vals []num) ([]byte, bool, error) {
	m, err := f.unmarshal(payload)
	if err != nil {
		return nil, false, err
	}
	for i, r := range refs {
		path := r.(protoRef)
		msg := protoreflect.Message(m)
		for _, fd := range path[:len(path)-1] {
			msg = msg.Mutable(fd).Message()
		}
		fd, v := path[len(path)-1], vals[i]
		var pv protoreflect.Value
		switch fd.Kind() {
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
			pv = protoreflect.ValueOfInt32(int32(asInt(v)))
		case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			pv = protoreflect.ValueOfInt64(asInt(v))
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
			pv = protoreflect.ValueOfUint32(uint32(v.u))
		case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			pv = protoreflect.ValueOfUint64(v.u)
		case protoreflect.FloatKind:
			pv = protoreflect.ValueOfFloat32(float32(v.f))
		case protoreflect.DoubleKind:
			pv = protoreflect.ValueOfFloat64(v.f)
		default:
			return nil, false, fmt.Errorf("field %s: a %s cannot be restamped", fd.Name(), fd.Kind())
		}
		msg.Set(fd, pv)
	}
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, false, err
	}
	if len(out) == len(payload) {
		copy(payload, out)
		return payload, false, nil
	}
	return out, true, nil
}
