package schema

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

const t0 = int64(1_767_225_600_123_456_789) // 2026-01-01 + .123456789

func mustParse(t testing.TB, line string) *Codec {
	t.Helper()
	d, err := Parse(line, "testdata", "test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// poseMsg builds a team.Pose with dynamicpb, as any protobuf library would.
func poseMsg(t testing.TB, c *Codec, seq uint64, tNs int64) []byte {
	md := c.f.(*protoFormat).md
	m := dynamicpb.NewMessage(md)
	h := m.Mutable(md.Fields().ByName("header")).Message()
	st := h.Mutable(h.Descriptor().Fields().ByName("stamp")).Message()
	st.Set(st.Descriptor().Fields().ByName("seconds"), protoreflect.ValueOfInt64(tNs/1e9))
	st.Set(st.Descriptor().Fields().ByName("nanos"), protoreflect.ValueOfInt32(int32(tNs%1e9)))
	h.Set(h.Descriptor().Fields().ByName("seq"), protoreflect.ValueOfUint64(seq))
	h.Set(h.Descriptor().Fields().ByName("frame_id"), protoreflect.ValueOfString("map"))
	m.Set(md.Fields().ByName("x"), protoreflect.ValueOfFloat64(1.5))
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProtobufStampDecodeRestamp(t *testing.T) {
	c := mustParse(t, "team/*/pose protobuf proto=../../peers/ownmsg/team.proto message=team.Pose stamp=header.stamp seq=header.seq")
	p := poseMsg(t, c, 42, t0)
	seq, ts, err := c.Stamp(nil, p)
	if err != nil || seq != 42 || ts != t0 {
		t.Fatalf("Stamp = %d, %d, %v; want 42, %d", seq, ts, err, t0)
	}
	v, err := c.Decode(nil, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(v.(json.RawMessage), &m); err != nil {
		t.Fatal(err)
	}
	if m["x"] != 1.5 || m["header"].(map[string]any)["seq"] != "42" {
		t.Fatalf("decoded %s", v)
	}
	// restamp by an hour and 0.9 s: the nanos' varint grows; the result decodes to the shifted stamp
	delta := int64(3600e9 + 9e8)
	out, err := c.RestampResized(nil, append([]byte(nil), p...), delta)
	if err != nil {
		t.Fatal(err)
	}
	if seq, ts, err := c.Stamp(nil, out); err != nil || seq != 42 || ts != t0+delta {
		t.Fatalf("restamped: %d, %d, %v; want 42, %d", seq, ts, err, t0+delta)
	}
	// garbage never stamps
	for _, bad := range [][]byte{{0xff}, p[:len(p)-1], append(append([]byte(nil), p...), 0x08)} {
		if _, _, err := c.Stamp(nil, bad); err == nil && len(bad) != len(p)+1 {
			t.Fatalf("Stamp(%x) = nil error", bad)
		}
	}
	var de *codec.DecodeError
	if _, _, err := c.Stamp(nil, []byte{0x0a, 0x05, 0x01}); !errors.As(err, &de) {
		t.Fatalf("truncated: %v, want a *codec.DecodeError", err)
	}
	if _, _, err := c.Stamp(nil, nil); err == nil {
		t.Fatal("an empty message has no stamp: want an error")
	}
}

func TestDeclarationErrorsNameLineAndField(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ line, want string }{
		{"a protobuf proto=pose.proto message=team.Pose stamp=header.stmp seq=header.seq", "field header.stmp: no such field"},
		{"a protobuf proto=pose.proto message=team.Pose stamp=header.frame_id seq=header.seq", "header.frame_id is a string, bytes or array, not a stamp"},
		{"a protobuf proto=pose.proto message=team.Pose stamp=x seq=header.stamp", "header.stamp is a message, not a counter"},
		{"a protobuf proto=pose.proto message=team.Nope stamp=t_ns", "message team.Nope: not in the descriptor"},
		{"a json stamp=t stamp_unit=s", "unknown option stamp_unit"},
		{"a json stamp=t unit=days", "unit=days"},
		{"a cstruct struct=\"uint64_t seq; int64_t t_ns\" stamp=t seq=seq", "field t: no such field"},
		{"a ros2msg type=geometry_msgs/msg/PoseStamped stamp=header.frame_id", "not a stamp"},
		{"a ros2msg type=team_msgs/msg/Nope stamp=header.stamp", "definition of team_msgs/msg/Nope not found"},
		{"a yaml stamp=t", `encoding "yaml"`},
	} {
		f := filepath.Join(dir, "s.txt")
		os.WriteFile(f, []byte("# comment\n\n"+tc.line+"\n"), 0o644)
		os.Symlink(mustAbs(t, "../peers/ownmsg/team.proto"), filepath.Join(dir, "pose.proto"))
		_, err := ParseFile(f)
		if err == nil || !errors.Is(err, ErrDecl) || !strings.Contains(err.Error(), f+":3:") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n  error %v\n  want ErrDecl at %s:3 with %q", tc.line, err, f, tc.want)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestJSONStamps(t *testing.T) {
	c := mustParse(t, `team/*/cmd json stamp=stamp.sec+stamp.nanosec seq=n`)
	p := []byte(`{"n": 7, "stamp": {"sec": 1767225600, "nanosec": 123456789}, "v": [1, 2]}`)
	if seq, ts, err := c.Stamp(nil, p); err != nil || seq != 7 || ts != t0 {
		t.Fatalf("Stamp = %d %d %v", seq, ts, err)
	}
	out, err := c.RestampResized(nil, append([]byte(nil), p...), -123456789+1e9)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"sec": 1767225601, "nanosec": 0}`) {
		t.Fatalf("restamped %s", out)
	}
	f := mustParse(t, `x json stamp=t unit=s`)
	rec := &logfmt.Record{Payload: []byte(`{"t": 1767225600.5}`)}
	if err := f.StampRecord(rec, Arrival{Count: 4}); err != nil || rec.CaptureNs != 1767225600_500_000_000 || rec.Seq != 4 {
		t.Fatalf("float seconds, seq=count: %+v %v", rec, err)
	}
	for _, bad := range []string{`{"n": 7}`, `{"n":1,"stamp":{"sec":"x","nanosec":0}}`, `[1]`, `{"n":1,`, `{"n":1,"stamp":{"sec":1,"nanosec":1000000000}}`} {
		if _, _, err := c.Stamp(nil, []byte(bad)); err == nil {
			t.Errorf("Stamp(%s): want an error", bad)
		}
	}
}

func TestCStruct(t *testing.T) {
	c := mustParse(t, `sim/* cstruct struct="uint64_t seq; int64_t t_ns; double pos[3]; float q" stamp=t_ns seq=seq`)
	p := binary.LittleEndian.AppendUint64(nil, 9)
	p = binary.LittleEndian.AppendUint64(p, uint64(t0))
	for _, f := range []float64{1, 2, 3} {
		p = binary.LittleEndian.AppendUint64(p, math.Float64bits(f))
	}
	p = binary.LittleEndian.AppendUint32(p, math.Float32bits(0.5))
	if seq, ts, err := c.Stamp(nil, p); err != nil || seq != 9 || ts != t0 {
		t.Fatalf("Stamp = %d %d %v", seq, ts, err)
	}
	v, _ := c.Decode(nil, p, 0)
	if string(v.(json.RawMessage)) != `{"seq":9,"t_ns":1767225600123456789,"pos":[1,2,3],"q":0.5}` {
		t.Fatalf("decoded %s", v)
	}
	if err := c.Restamp(nil, p, 5); err != nil {
		t.Fatal(err)
	}
	if _, ts, _ := c.Stamp(nil, p); ts != t0+5 {
		t.Fatalf("restamped %d", ts)
	}
	if _, _, err := c.Stamp(nil, p[:10]); !errors.Is(err, codec.ErrTruncated) {
		t.Fatalf("short: %v", err)
	}
	n := mustParse(t, `sim/* cstruct align=natural struct="uint8_t flag; uint64_t seq; double t" stamp=t epoch=gps seq=seq`)
	if n.f.(*structFormat).size != 24 {
		t.Fatalf("natural size %d, want 24", n.f.(*structFormat).size)
	}
}

// cdrOdom serializes a team_msgs/msg/Odom by hand, as CDR little-endian.
func cdrOdom(sec int32, nsec uint32, counter uint32, frame string, cov []float64) []byte {
	b := []byte{0, 1, 0, 0}
	body := []byte{}
	pad := func(n int) {
		for len(body)%n != 0 {
			body = append(body, 0)
		}
	}
	le := binary.LittleEndian
	body = le.AppendUint32(body, uint32(sec))
	body = le.AppendUint32(body, nsec)
	body = le.AppendUint32(body, uint32(len(frame)+1))
	body = append(append(body, frame...), 0)
	pad(4)
	body = le.AppendUint32(body, counter)
	pad(8)
	for _, f := range []float64{1, 2, 3, 0, 0, 0, 1} {
		body = le.AppendUint64(body, math.Float64bits(f))
	}
	body = le.AppendUint32(body, uint32(len(cov)))
	pad(8)
	for _, f := range cov {
		body = le.AppendUint64(body, math.Float64bits(f))
	}
	body = le.AppendUint32(body, 5)
	body = append(body, "auto\x00"...)
	return append(b, body...)
}

func TestCDR(t *testing.T) {
	c := mustParse(t, `ros/* ros2msg type=team_msgs/msg/Odom msg_path=msg stamp=header.stamp seq=counter`)
	p := cdrOdom(int32(t0/1e9), uint32(t0%1e9), 11, "odom", []float64{0.5, 0.25})
	if seq, ts, err := c.Stamp(nil, p); err != nil || seq != 11 || ts != t0 {
		t.Fatalf("Stamp = %d %d %v", seq, ts, err)
	}
	v, err := c.Decode(nil, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"header":{"stamp":{"sec":1767225600,"nanosec":123456789},"frame_id":"odom"},"counter":11,"pose":{"position":{"x":1,"y":2,"z":3},"orientation":{"x":0,"y":0,"z":0,"w":1}},"covariance":[0.5,0.25],"mode":"auto"}`
	if string(v.(json.RawMessage)) != want {
		t.Fatalf("decoded\n %s\nwant\n %s", v, want)
	}
	if err := c.Restamp(nil, p, 1e9-123456789); err != nil {
		t.Fatal(err)
	}
	if _, ts, _ := c.Stamp(nil, p); ts != t0+1e9-123456789 {
		t.Fatalf("restamped %d", ts)
	}
	for i := range len(p) - 1 {
		if _, _, err := c.Stamp(nil, p[:i]); err == nil {
			t.Fatalf("cut at %d: no error", i)
		}
	}
	text := string(c.decl.Data)
	if !strings.Contains(text, "MSG: std_msgs/Header") || !strings.Contains(text, "MSG: geometry_msgs/Quaternion") {
		t.Fatalf("ros2msg text lacks its dependencies:\n%s", text)
	}
}

func TestMetaRoundTrip(t *testing.T) {
	d, err := Parse(`team/*/pose protobuf proto=../../peers/ownmsg/team.proto message=team.Pose stamp=header.stamp`, "testdata", "test")
	if err != nil {
		t.Fatal(err)
	}
	r := d.Resolve(&logfmt.Record{HasPubSN: true}, false)
	ch := &logfmt.Channel{Name: "team/r1/pose", Schema: d.Name, Meta: r.Meta()}
	cd, ok := Lookup(ch)
	if !ok {
		t.Fatal("Lookup: not found")
	}
	c := cd.(*Codec)
	if c.decl.Seq != ZenohSourceSN || c.seq.src != srcZenoh {
		t.Fatalf("seq %q", c.decl.Seq)
	}
	p := poseMsg(t, c, 3, t0)
	if _, _, err := c.Stamp(nil, p); !errors.Is(err, codec.ErrNoStamp) {
		t.Fatalf("Stamp with seq from zenoh: %v, want ErrNoStamp", err)
	}
	rec := &logfmt.Record{Payload: p, PublisherSN: 77, HasPubSN: true}
	if err := c.StampRecord(rec, Arrival{}); err != nil || rec.Seq != 77 || rec.CaptureNs != t0 {
		t.Fatalf("StampRecord: %v %+v", err, rec)
	}
	rec = &logfmt.Record{Payload: p}
	if err := c.StampRecord(rec, Arrival{}); err == nil || rec.HasStamp {
		t.Fatal("no source info: want an error and no stamp")
	}
}

func TestFlatten(t *testing.T) {
	var got []string
	err := Flatten([]byte(`{"a": {"b": 1767225600123456789, "c": "x"}, "v": [1, {"z": 2}], "n": null, "t": true, "f": 0.5}`),
		func(p, v string) { got = append(got, p+"="+v) })
	want := "a.b=1767225600123456789 a.c=x v=[1,{\"z\":2}] n= t=true f=0.5"
	if err != nil || strings.Join(got, " ") != want {
		t.Fatalf("Flatten: %v %q, want %q", err, strings.Join(got, " "), want)
	}
}

// rmwAttachmentOf is what rmw_zenoh attaches to a message (zenoh-ext's
// serialization; the gid with its length, as zenoh-python writes bytes).
func rmwAttachmentOf(seq, ts int64) []byte {
	var b []byte
	str := func(s string) { b = append(append(b, byte(len(s))), s...) }
	str("sequence_number")
	b = binary.LittleEndian.AppendUint64(b, uint64(seq))
	str("source_timestamp")
	b = binary.LittleEndian.AppendUint64(b, uint64(ts))
	str("source_gid")
	return append(append(b, 16), make([]byte, 16)...)
}

func TestRMWAttachment(t *testing.T) {
	d, err := Parse(`ros/* ros2msg type=team_msgs/msg/Odom msg_path=msg stamp=header.stamp`, "testdata", "test")
	if err != nil {
		t.Fatal(err)
	}
	att := rmwAttachmentOf(41, t0+5)
	first := &logfmt.Record{Header: att, HasPubSN: true}
	if r := d.Resolve(first, true); r.Seq != RMWSequenceNumber || r.Stamp != "header.stamp" {
		t.Fatalf("resolved seq %q stamp %q: want the rmw_zenoh sequence number, the declared stamp", r.Seq, r.Stamp)
	}
	c, err := Compile(d.Resolve(first, false))
	if err != nil {
		t.Fatal(err)
	}
	p := cdrOdom(int32(t0/1e9), uint32(t0%1e9), 11, "odom", []float64{1})
	if seq, ts, err := c.Stamp(att, p); err != nil || seq != 41 || ts != t0 {
		t.Fatalf("Stamp = %d %d %v", seq, ts, err)
	}
	for _, bad := range [][]byte{nil, att[:20], append(att[:len(att):len(att)], 0), []byte("\x0fsequence_numbeX")} {
		if _, _, err := c.Stamp(bad, p); err == nil {
			t.Fatalf("attachment %x: want an error", bad)
		}
	}
	m := TransportMeta(&logfmt.Record{Header: att}, false)
	if m[MetaStamp] != RMWSourceTime || m[MetaSeq] != RMWSequenceNumber {
		t.Fatalf("transport meta %v", m)
	}
	tc, ok, err := ForChannel(&logfmt.Channel{Name: "ros/x", Meta: m})
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if seq, ts, err := tc.Stamp(att, []byte("any bytes")); err != nil || seq != 41 || ts != t0+5 {
		t.Fatalf("undeclared channel's rmw stamps: %d %d %v", seq, ts, err)
	}
	if TransportMeta(&logfmt.Record{}, false) != nil {
		t.Fatal("no transport stamps: want nil meta")
	}
}

// A declaration's schema name is the message it names (message=, type=,
// name=); one that names none (json, cstruct, none) is its channel's own:
// Find gives each channel a copy named after it, not after the pattern,
// and the set's declaration is left as it was.
func TestFindNamesTheMessage(t *testing.T) {
	var set Set
	for _, line := range []string{
		`team/*/pose protobuf proto=../../peers/ownmsg/team.proto message=team.Pose stamp=header.stamp`,
		`team/*/cmd json stamp=t seq=n`,
		`team/*/odo cstruct struct="uint64_t n; int64_t t" stamp=t seq=n name=team.Odo`,
		`team/*/raw none stamp=zenoh.timestamp`,
	} {
		d, err := Parse(line, "testdata", "test")
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, d)
	}
	for ch, want := range map[string]string{"team/r1/pose": "team.Pose", "team/r1/cmd": "team/r1/cmd", "team/r2/cmd": "team/r2/cmd",
		"team/r1/odo": "team.Odo", "team/r1/raw": "team/r1/raw"} {
		if d := set.Find(ch, ch); d == nil || d.Name != want {
			t.Fatalf("%s: schema name %v, want %s", ch, d, want)
		}
	}
	if set[1].Name != "team/*/cmd" || set.Find("vr/r1/state", "vr/r1/state") != nil {
		t.Fatalf("the set's declaration changed (%s), or an undeclared channel found one", set[1].Name)
	}
}
