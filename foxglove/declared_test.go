package foxglove

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/schema"
)

const t0 = int64(1_767_225_600_123_456_789)

// ownChannel is the channel record stores for name under the
// declarations of peers/ownmsg (the Python publishers' messages).
func ownChannel(t *testing.T, name string) logfmt.Channel {
	t.Helper()
	set, err := schema.ParseFile("../peers/ownmsg/schemas.txt")
	if err != nil {
		t.Fatal(err)
	}
	d := set.Find(name, name)
	if d == nil {
		t.Fatalf("no declaration of %s", name)
	}
	r := d.Resolve(&logfmt.Record{HasPubSN: true}, false)
	return logfmt.Channel{ID: 7, Name: name, Topic: name, Schema: d.Name, Meta: r.Meta()}
}

// pbPose builds a team.Pose with the protobuf library from the schema
// the encoder gives (as Foxglove reads it: a FileDescriptorSet and the
// message's full name).
func pbPose(t *testing.T, s Schema, seq uint64, x float64) (*dynamicpb.Message, protoreflect.MessageDescriptor) {
	t.Helper()
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(s.Data, &fds); err != nil {
		t.Fatalf("schema data is no FileDescriptorSet: %v", err)
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(s.Name))
	if err != nil {
		t.Fatalf("schema name %s: %v", s.Name, err)
	}
	md := d.(protoreflect.MessageDescriptor)
	m := dynamicpb.NewMessage(md)
	h := m.Mutable(md.Fields().ByName("header")).Message()
	st := h.Mutable(h.Descriptor().Fields().ByName("stamp")).Message()
	st.Set(st.Descriptor().Fields().ByName("seconds"), protoreflect.ValueOfInt64(t0/1e9))
	st.Set(st.Descriptor().Fields().ByName("nanos"), protoreflect.ValueOfInt32(int32(t0%1e9)))
	h.Set(h.Descriptor().Fields().ByName("seq"), protoreflect.ValueOfUint64(seq))
	m.Set(md.Fields().ByName("x"), protoreflect.ValueOfFloat64(x))
	return m, md
}

// cdrOdom serializes a team_msgs/msg/Odom (peers/ownmsg) as CDR
// little-endian, by hand.
func cdrOdom(sec int32, nsec uint32, frame string, x float64) []byte {
	le := binary.LittleEndian
	var b []byte
	pad := func(n int) {
		for len(b)%n != 0 {
			b = append(b, 0)
		}
	}
	b = le.AppendUint32(b, uint32(sec))
	b = le.AppendUint32(b, nsec)
	b = le.AppendUint32(b, uint32(len(frame)+1))
	b = append(append(b, frame...), 0)
	pad(8)
	for _, f := range []float64{x, 2, 3, 0, 0, 0, 1} {
		b = le.AppendUint64(b, math.Float64bits(f))
	}
	b = le.AppendUint32(b, 0) // no covariance
	return append([]byte{0, 1, 0, 0}, b...)
}

func TestDeclaredProtobufAsItIs(t *testing.T) {
	c := ownChannel(t, "own/pb/pose")
	e := NewEncoder(&c, 0)
	s := e.Schema()
	if e.Kind() != KindNative || s.Name != "team.Pose" || s.Encoding != "protobuf" || s.MessageEncoding() != "protobuf" || e.HasPose() {
		t.Fatalf("schema %s %s (%s), kind %d", s.Name, s.Encoding, s.MessageEncoding(), e.Kind())
	}
	m, md := pbPose(t, s, 42, 1.5)
	payload, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	head, tail, err := e.Encode(nil, &logfmt.Record{Channel: 7, Payload: payload})
	if err != nil || len(head) != 0 || !bytes.Equal(tail, payload) {
		t.Fatalf("Encode: head %x tail %x, %v; want the payload as it is", head, tail, err)
	}
	got := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(append(head, tail...), got); err != nil || !proto.Equal(got, m) {
		t.Fatalf("decoded with the schema: %v, %v", got, err)
	}
	// not protobuf: refused, for the undecodable companion
	if _, _, err := e.Encode(nil, &logfmt.Record{Channel: 7, Payload: []byte{0x0a, 0x7f}}); err == nil {
		t.Fatal("a truncated message encoded")
	}
}

func TestDeclaredROS2AsItIs(t *testing.T) {
	c := ownChannel(t, "own/ros/pose")
	e := NewEncoder(&c, 0)
	s := e.Schema()
	if e.Kind() != KindNative || s.Name != "team_msgs/msg/Odom" || s.Encoding != "ros2msg" || s.MessageEncoding() != "cdr" ||
		!bytes.Contains(s.Data, []byte("MSG: std_msgs/Header")) {
		t.Fatalf("schema %s %s (%s), kind %d:\n%s", s.Name, s.Encoding, s.MessageEncoding(), e.Kind(), s.Data)
	}
	p := cdrOdom(int32(t0/1e9), uint32(t0%1e9), "odom", 1.5)
	head, tail, err := e.Encode(nil, &logfmt.Record{Payload: p})
	if err != nil || len(head) != 0 || !bytes.Equal(tail, p) {
		t.Fatalf("Encode: head %x tail %x, %v", head, tail, err)
	}
	if _, _, err := e.Encode(nil, &logfmt.Record{Payload: p[:len(p)-3]}); err == nil {
		t.Fatal("a cut CDR message encoded")
	}
}

func TestDeclaredJSONAndStructAsJSON(t *testing.T) {
	le := binary.LittleEndian
	st := le.AppendUint64(nil, 9)
	st = le.AppendUint64(st, uint64(t0))
	st = le.AppendUint64(st, math.Float64bits(1.5))
	st = le.AppendUint64(st, math.Float64bits(-2))
	st = le.AppendUint32(st, 3)
	for _, tc := range []struct {
		name    string
		payload []byte
		want    string
	}{
		{"own/json/pose", []byte(`{"header": {"seq": 9, "stamp_ns": 1767225600123456789, "frame_id": "map"}, "x": 1.5}`),
			`{"header":{"seq":9,"stamp_ns":1767225600123456789,"frame_id":"map"},"x":1.5}`},
		{"own/c/pose", st, `{"seq":9,"t_ns":1767225600123456789,"x":1.5,"y":-2,"flags":3}`},
	} {
		c := ownChannel(t, tc.name)
		e := NewEncoder(&c, 0)
		s := e.Schema()
		if e.Kind() != KindDeclared || s.Name != c.Schema || s.Encoding != "jsonschema" || s.MessageEncoding() != "json" || !json.Valid(s.Data) {
			t.Fatalf("%s: schema %s %s (%s), kind %d: %s", tc.name, s.Name, s.Encoding, s.MessageEncoding(), e.Kind(), s.Data)
		}
		head, tail, err := e.Encode(nil, &logfmt.Record{Payload: tc.payload})
		if err != nil || tail != nil || canon(t, head) != canon(t, []byte(tc.want)) {
			t.Fatalf("%s: Encode %s %x, %v; want %s", tc.name, head, tail, err, tc.want)
		}
		if _, _, err := e.Encode(nil, &logfmt.Record{Payload: tc.payload[:5]}); err == nil {
			t.Fatalf("%s: a cut payload encoded", tc.name)
		}
	}
}

// canon is a JSON text with its object keys sorted, its numbers as written.
func canon(t *testing.T, text []byte) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// The schema's data is the channel's schema, not metadata; a declaration
// that does not compile leaves the channel opaque (its bytes kept).
func TestDeclaredMetaAndBrokenDeclaration(t *testing.T) {
	c := ownChannel(t, "own/pb/pose")
	md := ChannelMeta(&c)
	if _, ok := md["vrlog.meta."+schema.MetaData]; ok || md["vrlog.meta."+schema.MetaEncoding] != "protobuf" {
		t.Fatalf("channel metadata %v", md)
	}
	c.Meta[schema.MetaData] = "bm90IGEgZGVzY3JpcHRvcg==" // base64, but no FileDescriptorSet
	e := NewEncoder(&c, 0)
	if e.Kind() != KindOpaque || e.Schema().Name != SchemaOpaque {
		t.Fatalf("broken declaration: kind %d schema %s", e.Kind(), e.Schema().Name)
	}
	if head, _, err := e.Encode(nil, &logfmt.Record{Payload: []byte{1, 2}}); err != nil || !json.Valid(head) {
		t.Fatalf("opaque: %s %v", head, err)
	}
}

// A declared JSON or C-struct message is named after its channel (not
// the declaration's pattern: own/*/pose names no message; a log recorded
// before had the pattern as its schema), and a stamped record's message
// carries a foxglove "timestamp" {sec, nsec} of its capture stamp, in its
// schema too when that lists properties (a C struct's): JavaScript's
// numbers would round the int64 ns field. A message that has a
// "timestamp" of its own keeps it.
func TestDeclaredNameAndTimestamp(t *testing.T) {
	set := schema.Set{}
	for _, line := range []string{`own/*/pose cstruct struct="uint64_t seq; int64_t t_ns; double x" stamp=t_ns seq=seq`,
		`own/*/cmd json stamp=header.stamp_ns seq=header.seq`} {
		d, err := schema.Parse(line, ".", "test")
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, d)
	}
	le := binary.LittleEndian
	st := le.AppendUint64(le.AppendUint64(nil, 9), uint64(t0))
	st = le.AppendUint64(st, math.Float64bits(1.5))
	for _, tc := range []struct {
		name    string
		payload []byte
		want    string
	}{
		{"own/r1/pose", st, `{"timestamp":{"sec":1767225600,"nsec":123456789},"seq":9,"t_ns":1767225600123456789,"x":1.5}`},
		{"own/r1/cmd", []byte(`{"header": {"seq": 9, "stamp_ns": 1767225600123456789}, "cmd": "go"}`),
			`{"timestamp":{"sec":1767225600,"nsec":123456789},"header":{"seq":9,"stamp_ns":1767225600123456789},"cmd":"go"}`},
		{"own/r1/cmd", []byte(`{"header": {"seq": 9, "stamp_ns": 1767225600123456789}, "timestamp": "theirs"}`),
			`{"header":{"seq":9,"stamp_ns":1767225600123456789},"timestamp":"theirs"}`},
	} {
		d := set.Find(tc.name, tc.name)
		c := logfmt.Channel{ID: 3, Name: tc.name, Topic: tc.name, Schema: d.Name, Meta: d.Resolve(&logfmt.Record{}, false).Meta()}
		old := c
		old.Schema = d.Pattern // as recorded before
		for _, ch := range []logfmt.Channel{c, old} {
			e := NewEncoder(&ch, 0)
			s := e.Schema()
			var doc struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(s.Data, &doc); err != nil || s.Name != tc.name || (doc.Properties != nil) != (doc.Properties["timestamp"] != nil) ||
				(tc.name == "own/r1/pose") != (doc.Properties != nil) {
				t.Fatalf("%s (schema %q): schema %q %s: %v", tc.name, ch.Schema, s.Name, s.Data, err)
			}
			rec := logfmt.Record{Payload: tc.payload, CaptureNs: t0, Seq: 9, HasStamp: true}
			head, _, err := e.Encode([]byte("before"), &rec)
			if err != nil || !bytes.HasPrefix(head, []byte("before")) || canon(t, head[6:]) != canon(t, []byte(tc.want)) {
				t.Fatalf("%s: Encode %s, %v; want %s", tc.name, head, err, tc.want)
			}
		}
	}
}
