package codec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/codec from the cases in vectors_test.go")

const vectorDir = "../testdata/codec"

// vector is the JSON beside each binary test vector: what an independent
// implementation must decode the bytes to, or the error it must report.
type vector struct {
	Schema      string          `json:"schema"`
	Comment     string          `json:"comment"`
	File        string          `json:"file,omitempty"`         // State, TimeReply, ClockProbe
	HeaderFile  string          `json:"header_file,omitempty"`  // Frame
	PayloadFile string          `json:"payload_file,omitempty"` // Frame
	EpochNs     int64           `json:"epoch_ns"`
	Value       json.RawMessage `json:"value,omitempty"`
	PayloadSHA  string          `json:"payload_sha256,omitempty"`
	Error       *vectorError    `json:"error,omitempty"`
}

type vectorError struct {
	Field  string `json:"field"`
	Offset int    `json:"offset"`
	Kind   string `json:"kind"` // the sentinel's text: "bad magic", "truncated", ...
}

func sampleState(n int) State {
	s := State{
		Seq: 310, TNs: 1_700_000_000_123_456_789, EstimateTNs: 1_700_000_000_118_000_000,
		Position:        Vec3{0.031, 0.85, -1.2},
		Orientation:     Quat{0, 0, 0.7071067811865476, 0.7071067811865476},
		LinearVelocity:  Vec3{0.5, -0.25, 0},
		AngularVelocity: Vec3{0, 0, 0.125},
		Sensors:         []Sensor{}, // zero sensors are [] in the JSON, not null
	}
	for i := range n {
		s.Sensors = append(s.Sensors, Sensor{ID: uint32(100 + i), TNs: s.TNs - int64(i+1)*1_000_000})
	}
	return s
}

func pixels(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + 3)
	}
	return p
}

type stateCase struct {
	name, comment string
	epoch         int64
	s             State
}

type frameCase struct {
	name, comment string
	epoch         int64
	h             FrameHeader
}

func stateCases() []stateCase {
	neg := sampleState(2)
	neg.TNs, neg.EstimateTNs = -1_500_000_001, -2_000_000_000
	neg.Sensors[0].TNs, neg.Sensors[1].TNs = -1, math.MinInt64
	maxSeq := sampleState(1)
	maxSeq.Seq, maxSeq.TNs, maxSeq.Sensors[0].TNs = math.MaxUint64, math.MaxInt64, math.MaxInt64
	zero := sampleState(0)
	zero.Seq = 0
	return []stateCase{
		{"state_basic", "4 sensors (200 bytes), epoch 0: elapsed is unix seconds", 0, sampleState(4)},
		{"state_session_epoch", "elapsed against a session epoch 5.84 s earlier", 1_700_000_000_123_456_789 - 5_840_000_000, sampleState(4)},
		{"state_negative_t", "negative t_ns and sensor stamps (before 1970, and int64 min)", 0, neg},
		{"state_max_seq", "seq = 2^64-1, t_ns = 2^63-1", 0, maxSeq},
		{"state_zero_sensors", "no sensors (136 bytes), seq 0 (first sample after a restart)", 0, zero},
	}
}

func frameCases() []frameCase {
	padded := NewFrameHeader(7, 1_700_000_000_200_000_000, 2, 3, 2, Mono16)
	padded.Stride, padded.DataSize = 8, 16
	return []frameCase{
		{"frame_rgb8", "4x2 rgb8", 0, NewFrameHeader(42, 1_700_000_000_012_000_000, 1, 4, 2, RGB8)},
		{"frame_bgr8", "4x2 bgr8", 0, NewFrameHeader(43, 1_700_000_000_045_333_333, 1, 4, 2, BGR8)},
		{"frame_rgba8", "2x2 rgba8", 0, NewFrameHeader(1, 1_700_000_000_000_000_001, 3, 2, 2, RGBA8)},
		{"frame_bgra8", "2x2 bgra8", 0, NewFrameHeader(2, 1_700_000_000_000_000_002, 3, 2, 2, BGRA8)},
		{"frame_mono8", "5x3 mono8, negative t_ns", 0, NewFrameHeader(math.MaxUint64, -12_345, 4, 5, 3, Mono8)},
		{"frame_mono16_padded", "3x2 mono16 with 2 bytes of row padding (stride 8)", 0, padded},
		{"frame_empty", "0x0 frame, empty payload", 0, NewFrameHeader(0, 1_700_000_000_000_000_000, 0, 0, 0, RGB8)},
	}
}

type badCase struct {
	name, comment, schema string
	b                     []byte // payload for State, header for Frame
	want                  vectorError
}

func badCases() []badCase {
	st := AppendState(nil, ptr(sampleState(4)))
	fr := AppendFrameHeader(nil, ptr(NewFrameHeader(42, 1, 1, 4, 2, RGB8)))
	rc := AppendReplayClock(nil, &replayClockCases()[0].c)
	mod := func(b []byte, f func([]byte)) []byte { c := bytes.Clone(b); f(c); return c }
	return []badCase{
		{"bad_state_magic", "foreign bytes", SchemaState, mod(st, func(b []byte) { copy(b, "JUNK") }), vectorError{"magic", 0, "bad magic"}},
		{"bad_state_version", "a future version", SchemaState, mod(st, func(b []byte) { b[4] = 2 }), vectorError{"version", 4, "unsupported version"}},
		{"bad_state_truncated", "cut inside sensor[2].t_ns", SchemaState, st[:180], vectorError{"sensor[2].t_ns", 176, "truncated"}},
		{"bad_state_short_fixed", "cut inside position", SchemaState, st[:40], vectorError{"position", 32, "truncated"}},
		{"bad_state_trailing", "one byte too many", SchemaState, append(bytes.Clone(st), 0), vectorError{"end", 200, "trailing bytes"}},
		{"bad_state_reserved", "sensor[1].reserved not zero", SchemaState, mod(st, func(b []byte) { b[136+16+4] = 1 }), vectorError{"sensor[1].reserved", 156, "invalid value"}},
		{"bad_frame_magic", "foreign user header", SchemaFrame, mod(fr, func(b []byte) { b[0] = 'X' }), vectorError{"magic", 0, "bad magic"}},
		{"bad_frame_encoding", "pixel encoding 99", SchemaFrame, mod(fr, func(b []byte) { b[6] = 99 }), vectorError{"encoding", 6, "invalid value"}},
		{"bad_frame_stride", "stride smaller than width × bpp", SchemaFrame, mod(fr, func(b []byte) { b[36] = 11 }), vectorError{"stride", 36, "invalid value"}},
		{"bad_frame_data_size", "data_size != stride × height", SchemaFrame, mod(fr, func(b []byte) { b[40]++ }), vectorError{"data_size", 40, "invalid value"}},
		{"bad_frame_truncated", "header cut inside t_ns", SchemaFrame, fr[:20], vectorError{"t_ns", 16, "truncated"}},
		{"bad_replay_clock_flags", "an unknown flag bit", SchemaReplayClock, mod(rc, func(b []byte) { b[7] = 0x80 }), vectorError{"flags", 6, "invalid value"}},
		{"bad_replay_clock_reserved", "reserved not zero", SchemaReplayClock, mod(rc, func(b []byte) { b[44] = 1 }), vectorError{"reserved", 44, "invalid value"}},
		{"bad_replay_clock_truncated", "cut inside rate", SchemaReplayClock, rc[:36], vectorError{"rate", 32, "truncated"}},
	}
}

type replayClockCase struct {
	name, comment string
	c             ReplayClock
}

func replayClockCases() []replayClockCase {
	return []replayClockCase{
		{"replay_clock_tick", "a tick while playing at 1x on the receive clock, pass 0", ReplayClock{LogTimeNs: 1_764_446_401_250_000_000,
			PositionNs: 1_250_000_000, Seq: 125, Rate: 1, Running: true}},
		{"replay_clock_record", "with a record, capture clock, restamped, paused at rate 0.5, third pass, negative position (jitter before the window)",
			ReplayClock{LogTimeNs: -1_500_000_001, PositionNs: -2_000_000, Seq: 1<<64 - 1, Rate: 0.5, Pass: 2, Capture: true, Restamped: true, Record: true}},
	}
}

func ptr[T any](v T) *T { return &v }

func writeVector(t *testing.T, name string, v vector, files map[string][]byte) {
	t.Helper()
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(vectorDir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vectorDir, name+".json"), append(j, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func regenerate(t *testing.T) {
	os.RemoveAll(vectorDir)
	if err := os.MkdirAll(vectorDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range stateCases() {
		b := AppendState(nil, &c.s)
		s, err := DecodeState(b, c.epoch)
		if err != nil {
			t.Fatal(err)
		}
		val, _ := json.Marshal(s)
		writeVector(t, c.name, vector{Schema: SchemaState, Comment: c.comment, File: c.name + ".bin", EpochNs: c.epoch, Value: val},
			map[string][]byte{c.name + ".bin": b})
	}
	for _, c := range frameCases() {
		hb := AppendFrameHeader(nil, &c.h)
		p := pixels(int(c.h.DataSize))
		f, err := DecodeFrame(hb, p, c.epoch)
		if err != nil {
			t.Fatal(err)
		}
		val, _ := json.Marshal(f.FrameHeader)
		sum := sha256.Sum256(p)
		writeVector(t, c.name, vector{Schema: SchemaFrame, Comment: c.comment + "; pixel byte i is (7i+3) mod 256",
			HeaderFile: c.name + ".header.bin", PayloadFile: c.name + ".payload.bin", EpochNs: c.epoch, Value: val,
			PayloadSHA: hex.EncodeToString(sum[:])},
			map[string][]byte{c.name + ".header.bin": hb, c.name + ".payload.bin": p})
	}
	probe := ClockProbe{T1Ns: 1_000_000_000, T2Ns: 1_000_050_000, T3Ns: 1_000_051_000, T4Ns: 1_000_105_000}
	val, _ := json.Marshal(probe)
	writeVector(t, "clock_probe", vector{Schema: SchemaClockProbe, Comment: "seeds/002 example: offset -2000 ns, rtt 104000 ns", File: "clock_probe.bin", Value: val},
		map[string][]byte{"clock_probe.bin": AppendClockProbe(nil, probe)})
	reply := TimeReply{T2Ns: 1_700_000_000_000_050_000, T3Ns: 1_700_000_000_000_051_000}
	val, _ = json.Marshal(reply)
	writeVector(t, "time_reply", vector{Schema: SchemaTimeReply, Comment: "time service reply", File: "time_reply.bin", Value: val},
		map[string][]byte{"time_reply.bin": AppendTimeReply(nil, reply)})
	for _, c := range replayClockCases() {
		val, _ := json.Marshal(c.c)
		writeVector(t, c.name, vector{Schema: SchemaReplayClock, Comment: c.comment, File: c.name + ".bin", Value: val},
			map[string][]byte{c.name + ".bin": AppendReplayClock(nil, &c.c)})
	}
	for _, c := range badCases() {
		v := vector{Schema: c.schema, Comment: c.comment, Error: &c.want}
		if c.schema == SchemaFrame {
			v.HeaderFile = c.name + ".header.bin"
		} else {
			v.File = c.name + ".bin"
		}
		writeVector(t, c.name, v, map[string][]byte{v.File + v.HeaderFile: c.b})
	}
}

// TestVectors decodes every vector in testdata/codec and checks the decoded
// values, the re-encoding, and the error field/offset of the bad ones. The
// Python peer is checked against the same files.
func TestVectors(t *testing.T) {
	if *update {
		regenerate(t)
	}
	names, _ := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	if len(names) < 20 {
		t.Fatalf("found %d vectors in %s; run go test ./codec -run TestVectors -update", len(names), vectorDir)
	}
	read := func(f string) []byte {
		if f == "" {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(vectorDir, f))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, name := range names {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".json"), func(t *testing.T) {
			var v vector
			raw := read(filepath.Base(name))
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(raw, []byte("null")) {
				t.Fatal("the vector has a null: lists are [] (docs/wire-format.md)")
			}
			c, ok := Lookup(v.Schema)
			if !ok {
				t.Fatalf("unknown schema %q", v.Schema)
			}
			h, p := read(v.HeaderFile), read(v.File+v.PayloadFile)
			got, err := c.Decode(h, p, v.EpochNs)
			if v.Error != nil {
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("want DecodeError, got %v", err)
				}
				if de.Field != v.Error.Field || de.Offset != v.Error.Offset || de.Err.Error() != v.Error.Kind {
					t.Fatalf("error %q: want field %s offset %d kind %s", err, v.Error.Field, v.Error.Offset, v.Error.Kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want, have any
			gotJSON, _ := json.Marshal(headerOf(got))
			json.Unmarshal(v.Value, &want)
			json.Unmarshal(gotJSON, &have)
			wj, _ := json.Marshal(want)
			hj, _ := json.Marshal(have)
			if !bytes.Equal(wj, hj) {
				t.Fatalf("decoded\n%s\nwant\n%s", hj, wj)
			}
			if re := encode(t, got); !bytes.Equal(re, append(h, p...)) {
				t.Fatalf("re-encoding differs:\n% x\n% x", re, append(h, p...))
			}
		})
	}
}

func headerOf(v any) any {
	if f, ok := v.(Frame); ok {
		return f.FrameHeader
	}
	return v
}

func encode(t *testing.T, v any) []byte {
	switch x := v.(type) {
	case State:
		return AppendState(nil, &x)
	case Frame:
		return append(AppendFrameHeader(nil, &x.FrameHeader), x.Pixels...)
	case ClockProbe:
		return AppendClockProbe(nil, x)
	case TimeReply:
		return AppendTimeReply(nil, x)
	case ReplayClock:
		return AppendReplayClock(nil, &x)
	}
	t.Fatalf("no encoder for %T", v)
	return nil
}
