package schema

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// Each decoder is fuzzed for what a hostile payload must never do: panic,
// or stamp a payload its full decode refuses (a wrong stamp). Where the
// stamp and the decode are two paths (protobuf's wire walk and dynamicpb,
// CDR's and JSON's stamp and JSON), they must agree; a restamp by d moves
// the stamp by d (to the unit's precision), or changes nothing.

func fuzzCodec(t *testing.T, c *Codec, payload []byte) {
	rec := &logfmt.Record{Payload: payload, RecvWallNs: 1, HasPubSN: true}
	serr := c.StampRecord(rec, Arrival{HasZenohTs: true, Count: 1})
	_, derr := c.Decode(nil, payload, 0)
	if serr == nil && derr != nil {
		t.Fatalf("stamped (%d, %d) a payload Decode refuses: %v", rec.Seq, rec.CaptureNs, derr)
	}
	if derr == nil && serr == nil {
		if err := c.Check(nil, payload); err != nil {
			t.Fatalf("Check refuses a payload that stamps and decodes: %v", err)
		}
	}
	if serr != nil {
		if _, ok := errors.AsType[*codec.DecodeError](serr); !ok && !errors.Is(serr, codec.ErrOverflow) {
			t.Fatalf("stamp error %T %v: want a *codec.DecodeError", serr, serr)
		}
		return
	}
	const d = 1_000_000_000 // a whole second: every unit holds it
	cp := append([]byte(nil), payload...)
	out, err := c.RestampResized(nil, cp, d)
	if err != nil {
		if !bytes.Equal(cp, payload) {
			t.Fatalf("a failed restamp changed the payload")
		}
		return
	}
	r2 := &logfmt.Record{Payload: out, RecvWallNs: 1, HasPubSN: true}
	if err := c.StampRecord(r2, Arrival{HasZenohTs: true, Count: 1}); err != nil {
		t.Fatalf("restamped payload: %v", err)
	}
	if c.stamp.form == formFloat || c.stamp.form == formInt && bytes.ContainsAny(payload, ".eE") && c.decl.Encoding == EncJSON {
		return // a float stamp moves by d within its precision
	}
	if r2.CaptureNs != rec.CaptureNs+d || r2.Seq != rec.Seq {
		t.Fatalf("restamp by %d: (%d, %d) → (%d, %d)", int64(d), rec.Seq, rec.CaptureNs, r2.Seq, r2.CaptureNs)
	}
}

func FuzzProtobuf(f *testing.F) {
	c := mustParse(f, "team/*/pose protobuf proto=../../peers/ownmsg/team.proto message=team.Pose stamp=header.stamp seq=header.seq")
	n := mustParse(f, "team/*/pose protobuf proto=../../peers/ownmsg/team.proto message=team.Pose stamp=t_ns seq=zenoh.source_sn")
	p := poseMsg(f, c, 42, t0)
	f.Add(p)
	f.Add(p[:5])
	f.Add(append(append([]byte{}, p...), 0x22, 0x10, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40)) // packed cov
	f.Add([]byte{0x28, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})                            // t_ns, 10-byte varint
	f.Add([]byte{0x32, 0x02, 0xc3, 0x28})                                                                      // note: not UTF-8
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzCodec(t, c, b)
		fuzzCodec(t, n, b)
		// the wire walk agrees with proto.Unmarshal on what is a message
		verr := validate(b, 0, c.f.(*protoFormat).md, 0)
		_, uerr := c.f.(*protoFormat).unmarshal(b)
		if (verr == nil) != (uerr == nil) {
			t.Fatalf("validate: %v; proto.Unmarshal: %v", verr, uerr)
		}
	})
}

func FuzzJSON(f *testing.F) {
	c := mustParse(f, `x json stamp=stamp.sec+stamp.nanosec seq=n`)
	g := mustParse(f, `x json stamp=t unit=ms epoch=gps seq=h.n`)
	for _, s := range []string{`{"n": 7, "stamp": {"sec": 1767225600, "nanosec": 123456789}}`, `{"t": 1.5e12, "h": {"n": 1}}`,
		`{"t": -9223372036854775808, "h": {"n": 18446744073709551615}}`, `{"n":1,"n":2,"stamp":{"sec":1,"nanosec":2}}`, `[`, `{"t":1e400,"h":{"n":0}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzCodec(t, c, b)
		fuzzCodec(t, g, b)
		if v, err := c.Decode(nil, b, 0); err == nil && !json.Valid(v.(json.RawMessage)) {
			t.Fatalf("Decode gave invalid JSON %s", v)
		}
	})
}

func FuzzCDR(f *testing.F) {
	c := mustParse(f, `ros/* ros2msg type=team_msgs/msg/Odom msg_path=msg stamp=header.stamp seq=counter`)
	p := cdrOdom(int32(t0/1e9), uint32(t0%1e9), 11, "odom", []float64{0.5, 0.25})
	f.Add(p)
	f.Add(cdrOdom(-1, 999999999, 0, "", nil))
	be := append([]byte{0, 0, 0, 0}, p[4:]...)
	f.Add(be)
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzCodec(t, c, b)
		if v, err := c.Decode(nil, b, 0); err == nil && !json.Valid(v.(json.RawMessage)) {
			t.Fatalf("Decode gave invalid JSON %s", v)
		}
	})
}

func FuzzCStruct(f *testing.F) {
	c := mustParse(f, `sim/* cstruct struct="uint64_t seq; int64_t t_ns; double pos[3]; float q" stamp=t_ns seq=seq`)
	s := mustParse(f, `sim/* cstruct endian=big struct="uint32_t sec @4; uint32_t nsec @0; uint16_t n @8" stamp=sec+nsec seq=n`)
	p := binary.LittleEndian.AppendUint64(nil, 9)
	p = binary.LittleEndian.AppendUint64(p, uint64(t0))
	for range 3 {
		p = binary.LittleEndian.AppendUint64(p, math.Float64bits(math.NaN()))
	}
	p = binary.LittleEndian.AppendUint32(p, 0)
	f.Add(p)
	f.Add(p[:10])
	f.Add([]byte{0, 0, 0, 1, 0x69, 0, 0, 0, 0, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzCodec(t, c, b)
		fuzzCodec(t, s, b)
	})
}

// FuzzParse: a declaration line never panics, and one that parses
// compiles from its stored meta to the same codec.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`a/** json stamp=t seq=n`,
		`a cstruct struct="uint64_t seq; int64_t t_ns @8" stamp=t_ns seq=seq kind=frame`,
		`a cstruct align=natural struct="u8 a; f64 t; u16 s[2]" stamp=t unit=ms epoch=tai seq=zenoh.source_sn`,
		`a/* ros2msg type=geometry_msgs/PoseStamped stamp=header.stamp`,
		`a none stamp=zenoh.timestamp seq=zenoh.source_sn`,
		`a json stamp="a b" seq=c`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		d, err := Parse(line, "testdata", "fuzz")
		if err != nil {
			if !errors.Is(err, ErrDecl) {
				t.Fatalf("%q: %v is not ErrDecl", line, err)
			}
			return
		}
		ch := &logfmt.Channel{Name: "a", Schema: d.Name, Meta: d.Resolve(&logfmt.Record{HasPubSN: true}, true).Meta()}
		if _, ok, err := ForChannel(ch); !ok || err != nil {
			t.Fatalf("%q: stored declaration does not compile: %v", line, err)
		}
	})
}

// FuzzRMWAttachment: an attachment never panics the reader, and one it
// reads holds the fields it says, where it says (written again, the same
// bytes).
func FuzzRMWAttachment(f *testing.F) {
	f.Add(rmwAttachmentOf(41, t0))
	f.Add(rmwAttachmentOf(-1, 0)[:30])
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, ts, err := rmwAttachment(b)
		if err != nil {
			return
		}
		want := rmwAttachmentOf(seq, ts)
		if len(b) == len(want)-1 { // the gid without its length
			want = append(want[:len(want)-17:len(want)-17], b[len(b)-16:]...)
		} else {
			want = append(want[:len(want)-16:len(want)-16], b[len(b)-16:]...)
		}
		if !bytes.Equal(want, b) {
			t.Fatalf("read (%d, %d) from %x", seq, ts, b)
		}
	})
}

// FuzzForChannel: a log's channel meta is untrusted input: whatever a
// crafted log stores as a declaration compiles or is an error, and a
// codec that compiles stamps and decodes any payload without a panic.
func FuzzForChannel(f *testing.F) {
	for _, line := range []string{
		`a ros2msg type=team_msgs/msg/Odom msg_path=msg stamp=header.stamp seq=counter`,
		`a cstruct struct="uint64_t seq; int64_t t_ns" stamp=t_ns seq=seq`,
		`a json stamp=t unit=ms seq=n`,
		`a protobuf proto=../../peers/ownmsg/team.proto message=team.Pose stamp=header.stamp seq=header.seq`,
	} {
		d, err := Parse(line, "testdata", "seed")
		if err != nil {
			f.Fatal(err)
		}
		m := d.Resolve(&logfmt.Record{}, false).Meta()
		f.Add(d.Name, m[MetaEncoding], m[MetaData], m[MetaStamp], m[MetaSeq], []byte(`{"t": 1, "n": 2}`))
	}
	f.Fuzz(func(t *testing.T, name, enc, data, stamp, seq string, payload []byte) {
		ch := &logfmt.Channel{Name: "a", Schema: name, Meta: map[string]string{MetaEncoding: enc, MetaData: data, MetaStamp: stamp, MetaSeq: seq}}
		c, ok, err := ForChannel(ch)
		if !ok {
			t.Fatal("a channel with an encoding is declared")
		}
		if err != nil {
			return
		}
		rec := &logfmt.Record{Payload: payload, Header: payload}
		c.StampRecord(rec, Arrival{HasZenohTs: true})
		c.Decode(payload, payload, 0)
		c.RestampResized(payload, append([]byte(nil), payload...), 1e9)
	})
}
