package mcapexport

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/foxglove"
	"github.com/vrlog/vrlog/logfmt"
)

// expectedMsg is one line of the expectation handed to tools/mcapcheck.
type expectedMsg struct {
	Topic       string `json:"topic"`
	LogTime     uint64 `json:"log_time"`
	PublishTime uint64 `json:"publish_time"`
	Sequence    uint32 `json:"sequence"`
	Schema      string `json:"schema"`
	Encoding    string `json:"encoding"`
	// Fields are dotted paths into the decoded message and their values;
	// DataSHA256 the digest of its "data" field (a RawImage's pixels).
	Fields     map[string]any `json:"fields,omitempty"`
	DataSHA256 string         `json:"data_sha256,omitempty"`
}

type fixture struct {
	chans []logfmt.Channel
	recs  []logfmt.Record
	want  []expectedMsg
}

const t0 = int64(1_700_000_000_000_000_000)

func state(seq uint64, t int64) []byte {
	s := codec.State{Seq: seq, TNs: t, EstimateTNs: t - 1000, Orientation: codec.Quat{W: 1},
		Position: codec.Vec3{X: float64(seq), Y: -1.5, Z: 1e-9}, Sensors: []codec.Sensor{{ID: 1, TNs: t - 5}, {ID: 7, TNs: t - 9}}}
	return codec.AppendState(nil, &s)
}

func frame(seq uint64, t int64, w, h uint32) (hdr, pix []byte) {
	fh := codec.NewFrameHeader(seq, t, 3, w, h, codec.RGB8)
	pix = make([]byte, fh.DataSize)
	for i := range pix {
		pix[i] = byte(i*7 + int(seq))
	}
	return codec.AppendFrameHeader(nil, &fh), pix
}

func makeFixture() *fixture { return makeFixtureFrames(8, 4) }

// makeFixtureFrames is the fixture with frames of w×h rgb8 pixels.
func makeFixtureFrames(fw, fh uint32) *fixture {
	f := &fixture{chans: []logfmt.Channel{
		{ID: 1, Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState},
		{ID: 2, Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame,
			Meta: map[string]string{"type": "u8"}},
		{ID: 3, Name: "custom/blob", Transport: logfmt.TransportIceoryx2, Topic: "custom/blob", Schema: "acme.Thing/3"},
		{ID: 4, Name: "vrlog/clock", Transport: logfmt.TransportInternal, Topic: "vr/r1/time", Schema: codec.SchemaClockProbe},
		{ID: 5, Name: "vrlog/recorder", Transport: logfmt.TransportInternal, Topic: "vrlog/recorder", Schema: codec.SchemaHeartbeat},
	}}
	msg := func(r logfmt.Record, topic, schema, enc string, seq uint32) expectedMsg {
		pub := uint64(r.RecvWallNs)
		if r.HasStamp {
			pub = uint64(r.CaptureNs)
		}
		return expectedMsg{Topic: topic, LogTime: uint64(r.RecvWallNs), PublishTime: pub, Sequence: seq, Schema: schema, Encoding: enc}
	}
	add := func(r logfmt.Record, topic, schema, enc string, seq uint32) {
		f.recs = append(f.recs, r)
		f.want = append(f.want, msg(r, topic, schema, enc, seq))
	}
	for i := 0; i < 50; i++ {
		t := t0 + int64(i)*1_000_000
		seq := uint64(i)
		if i == 40 {
			seq = 1 << 33 // beyond uint32: sequence keeps the low 32 bits
		}
		sr := logfmt.Record{Channel: 1, RecvWallNs: t + 300_000, RecvMonoNs: int64(i) * 1_000_000, CaptureNs: t, Seq: seq, HasStamp: true,
			Payload: state(seq, t)}
		add(sr, "vr/r1/state", codec.SchemaState, "json", uint32(seq))
		pose := msg(sr, "vr/r1/state:pose", foxglove.SchemaPoseInFrame, "protobuf", uint32(seq))
		pose.Fields = map[string]any{"frame_id": "world", "timestamp.seconds": t / 1e9, "timestamp.nanos": t % 1e9,
			"pose.position.x": float64(seq), "pose.position.y": -1.5, "pose.position.z": 1e-9,
			"pose.orientation.x": 0.0, "pose.orientation.w": 1.0}
		f.want = append(f.want, pose)
		if i%10 == 0 {
			h, p := frame(uint64(i/10), t, fw, fh)
			add(logfmt.Record{Channel: 2, RecvWallNs: t + 900_000, RecvMonoNs: int64(i)*1_000_000 + 600_000, CaptureNs: t, Seq: uint64(i / 10), HasStamp: true,
				Header: h, Payload: p}, "vr/r1/camera/front", foxglove.SchemaRawImage, "protobuf", uint32(i/10))
			sum := sha256.Sum256(p)
			f.want[len(f.want)-1].DataSHA256 = hex.EncodeToString(sum[:])
			f.want[len(f.want)-1].Fields = map[string]any{"width": fw, "height": fh, "step": 3 * fw, "encoding": "rgb8", "frame_id": "camera_3",
				"timestamp.seconds": t / 1e9, "timestamp.nanos": t % 1e9}
		}
	}
	// A garbage state payload: kept on the :undecodable companion channel.
	add(logfmt.Record{Channel: 1, RecvWallNs: t0 + 60_000_000, RecvMonoNs: 60_000_000, CaptureNs: t0 + 59_000_000, Seq: 60, HasStamp: true,
		Payload: []byte("not a state")}, "vr/r1/state:undecodable", foxglove.SchemaUndecodable, "json", 60)
	// Unknown schema: header and payload verbatim in a vrlog.Opaque message.
	for i := 0; i < 3; i++ {
		r := logfmt.Record{Channel: 3, RecvWallNs: t0 + int64(i)*5_000_000, RecvMonoNs: int64(i) * 5_000_000, Header: []byte{1, 2, byte(i)}, Payload: []byte{9, 9, 9, byte(i)}}
		add(r, "custom/blob", foxglove.SchemaOpaque, "json", uint32(i))
		f.want[len(f.want)-1].Fields = map[string]any{"schema": "acme.Thing/3", "header": base64.StdEncoding.EncodeToString(r.Header),
			"payload": base64.StdEncoding.EncodeToString(r.Payload)}
	}
	// The recorder's heartbeats.
	hb := logfmt.Record{Channel: 5, RecvWallNs: t0 + 70_000_000, RecvMonoNs: 70_000_000}
	add(hb, "vrlog/recorder", codec.SchemaHeartbeat, "json", 0)
	f.want[len(f.want)-1].Fields = map[string]any{"recv_wall_ns": hb.RecvWallNs}
	p := codec.AppendClockProbe(nil, codec.ClockProbe{T1Ns: t0, T2Ns: t0 + 500, T3Ns: t0 + 700, T4Ns: t0 + 1000})
	add(logfmt.Record{Channel: 4, RecvWallNs: t0 + 1000, RecvMonoNs: 1000, Payload: p}, "vrlog/clock", codec.SchemaClockProbe, "json", 0)
	return f
}

func export(t *testing.T, f *fixture, opts MCAPOptions) ([]byte, MCAPStats) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewMCAP(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.chans {
		if err := w.AddChannel(c); err != nil {
			t.Fatal(err)
		}
	}
	for i := range f.recs {
		if err := w.Write(&f.recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.Stats()
}

func TestMCAPGoReader(t *testing.T) {
	f := makeFixture()
	data, st := export(t, f, MCAPOptions{EpochNs: t0, Metadata: map[string]string{"note": "unit test"}})
	if st.Messages != uint64(len(f.want)) || st.Undecodable != 1 {
		t.Fatalf("stats %+v, want %d messages, 1 undecodable", st, len(f.want))
	}
	r, err := mcap.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	info, err := r.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.Statistics.MessageCount != uint64(len(f.want)) {
		t.Fatalf("message count %d, want %d", info.Statistics.MessageCount, len(f.want))
	}
	if len(info.ChunkIndexes) == 0 || info.ChunkIndexes[0].Compression != mcap.CompressionZSTD {
		t.Fatalf("chunk indexes %v", info.ChunkIndexes)
	}
	it, err := r.Messages(mcap.UsingIndex(true), mcap.InOrder(mcap.FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	var states int
	for {
		sch, ch, msg, err := it.NextInto(nil)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ch.Topic == "vr/r1/state" {
			states++
			var m map[string]any
			if err := json.Unmarshal(msg.Data, &m); err != nil {
				t.Fatalf("state json: %v: %s", err, msg.Data)
			}
			if sch.Name != codec.SchemaState || ch.Metadata["vrlog.transport"] != "zenoh" {
				t.Fatalf("schema %q metadata %v", sch.Name, ch.Metadata)
			}
			if states == 2 && (m["elapsed"].(float64) != 0.001 || m["t_ns"].(float64) != float64(t0+1_000_000)) {
				t.Fatalf("second state: %s", msg.Data)
			}
		}
	}
	for id, ch := range info.Channels {
		if ch.MessageEncoding == "" || ch.SchemaID == 0 {
			t.Errorf("channel %d %q: message encoding %q, schema %d", id, ch.Topic, ch.MessageEncoding, ch.SchemaID)
		}
	}
	if states != 50 {
		t.Fatalf("%d states, want 50", states)
	}
	mds, err := r.GetMetadata(info.MetadataIndexes[0].Offset)
	if err != nil || mds.Metadata["note"] != "unit test" {
		t.Fatalf("metadata %v %v", mds, err)
	}
}

// repoRoot finds the module root (the directory holding go.mod).
func repoRoot(t *testing.T) string {
	t.Helper()
	d, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			t.Fatal("go.mod not found above the test directory")
		}
		d = p
	}
}

// RunMCAPCheck runs tools/mcapcheck/check.py with the repo's .venv python
// (made by `make peers`). It fails, never skips, when the venv is missing.
func runMCAPCheck(t *testing.T, mcapPath string, want []expectedMsg, compression string) {
	t.Helper()
	out, err := mcapCheck(t, mcapPath, want, compression)
	if err != nil {
		t.Fatalf("tools/mcapcheck/check.py: %v\n%s", err, out)
	}
	t.Logf("mcapcheck: %s", bytes.TrimSpace(out))
}

func mcapCheck(t *testing.T, mcapPath string, want []expectedMsg, compression string) ([]byte, error) {
	t.Helper()
	root := repoRoot(t)
	py := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("independent MCAP check needs %s with tools/mcapcheck/requirements.txt installed: run `make peers` "+
			"(or python3 -m venv .venv && .venv/bin/pip install -r tools/mcapcheck/requirements.txt): %v", py, err)
	}
	exp := filepath.Join(t.TempDir(), "expected.json")
	b, _ := json.Marshal(map[string]any{"compression": compression, "messages": want})
	if err := os.WriteFile(exp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join(root, "tools", "mcapcheck", "check.py"), mcapPath, exp).CombinedOutput()
	return out, err
}

func TestMCAPPythonReader(t *testing.T) {
	f := makeFixture()
	for _, comp := range []string{"zstd", "none"} {
		t.Run(comp, func(t *testing.T) {
			data, _ := export(t, f, MCAPOptions{Compression: comp, ChunkSize: 4096})
			p := filepath.Join(t.TempDir(), "out.mcap")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			want := comp
			if comp == "none" {
				want = ""
			}
			runMCAPCheck(t, p, f.want, want)
		})
	}
}

// The checker must notice a wrong stamp and a missing message.
func TestMCAPCheckerCatchesMismatch(t *testing.T) {
	f := makeFixture()
	data, _ := export(t, f, MCAPOptions{})
	p := filepath.Join(t.TempDir(), "out.mcap")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := append([]expectedMsg(nil), f.want...)
	bad[3].PublishTime++
	if out, err := mcapCheck(t, p, bad, "zstd"); err == nil {
		t.Fatalf("checker accepted a wrong publish_time:\n%s", out)
	}
	if out, err := mcapCheck(t, p, f.want[1:], "zstd"); err == nil {
		t.Fatalf("checker accepted an unexpected message:\n%s", out)
	}
	// Pixels and pose values are compared, not only counted.
	for _, tc := range []struct {
		name  string
		spoil func(m *expectedMsg) bool
	}{
		{"pixels", func(m *expectedMsg) bool {
			if m.DataSHA256 == "" {
				return false
			}
			m.DataSHA256 = strings.Repeat("0", 64)
			return true
		}},
		{"pose", func(m *expectedMsg) bool {
			if m.Schema != foxglove.SchemaPoseInFrame {
				return false
			}
			m.Fields = map[string]any{"pose.position.y": 1.5}
			return true
		}},
	} {
		bad := append([]expectedMsg(nil), f.want...)
		for i := range bad {
			if tc.spoil(&bad[i]) {
				break
			}
		}
		if out, err := mcapCheck(t, p, bad, "zstd"); err == nil {
			t.Fatalf("checker accepted wrong %s:\n%s", tc.name, out)
		}
	}
}

func TestCSV(t *testing.T) {
	f := makeFixture()
	var buf bytes.Buffer
	w, err := NewCSV(&buf, CSVOptions{TimeFormat: codec.TimeElapsed, EpochNs: t0, ChannelColumn: true})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[uint16]*logfmt.Channel{}
	for i := range f.chans {
		byID[f.chans[i].ID] = &f.chans[i]
	}
	for i := range f.recs {
		if err := w.Write(byID[f.recs[i].Channel], &f.recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(f.recs)+1 {
		t.Fatalf("%d lines for %d records", len(lines), len(f.recs))
	}
	if lines[0] != "channel,"+strings.Join(CSVColumns, ",") {
		t.Fatalf("header %q", lines[0])
	}
	// Second state: dt 1 ms, latency 0.3 ms, elapsed 0.001.
	var second string
	for _, l := range lines {
		if strings.HasPrefix(l, "vr/r1/state,1,") {
			second = l
		}
	}
	want := "vr/r1/state,1,1,1,0.001000000,1700000000001000000,0.001300000,1700000000001300000,1000000,1000000,1000000,300000,0,0,0,168"
	if second != want {
		t.Fatalf("row\n got %s\nwant %s", second, want)
	}
	// seq jump 39 -> 2^33 then back to 41: a skip then a restart.
	var jump, back string
	for _, l := range lines {
		if strings.HasPrefix(l, "vr/r1/state,40,") {
			jump = l
		}
		if strings.HasPrefix(l, "vr/r1/state,41,") {
			back = l
		}
	}
	if c := strings.Split(jump, ","); c[12] != "8589934552" || c[13] != "0" {
		t.Fatalf("jump row %s", jump)
	}
	if c := strings.Split(back, ","); c[12] != "0" || c[13] != "1" {
		t.Fatalf("restart row %s", back)
	}
}

// A record without a capture stamp (a clock probe) has no capture time:
// its t is empty (NaN in pandas), not t_ns 0 counted from the epoch.
func TestCSVUnstamped(t *testing.T) {
	f := makeFixture()
	var buf bytes.Buffer
	w, err := NewCSV(&buf, CSVOptions{TimeFormat: codec.TimeElapsed, EpochNs: t0})
	if err != nil {
		t.Fatal(err)
	}
	rec := logfmt.Record{Channel: f.chans[0].ID, RecvWallNs: t0 + 5_000_000, RecvMonoNs: 5_000_000}
	if err := w.Write(&f.chans[0], &rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	c := strings.Split(lines[1], ",")
	if c[1] != "0" || c[3] != "" || c[4] != "0" || c[5] != "0.005000000" {
		t.Fatalf("unstamped row %s: want has_stamp 0, t empty, t_ns 0, recv_wall 0.005000000", lines[1])
	}
}

// Check reads the index back: a sound export passes, a wrong count, a
// chunk index that points elsewhere and a broken message index fail.
func TestCheck(t *testing.T) {
	f := makeFixture()
	data, st := export(t, f, MCAPOptions{ChunkSize: 4096})
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.mcap", data)
	if err := Check(good, st.Messages); err != nil {
		t.Fatalf("sound export: %v", err)
	}
	if err := Check(good, st.Messages+1); err == nil {
		t.Fatal("accepted a wrong message count")
	}
	info := func() *mcap.Info {
		r, err := mcap.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		in, err := r.Info()
		if err != nil {
			t.Fatal(err)
		}
		return in
	}()
	if len(info.ChunkIndexes) < 2 {
		t.Fatalf("%d chunks: want several", len(info.ChunkIndexes))
	}
	ci := info.ChunkIndexes[1]
	for name, at := range map[string]uint64{
		"chunk opcode":         ci.ChunkStartOffset,
		"chunk record length":  ci.ChunkStartOffset + 1,
		"message index opcode": ci.ChunkStartOffset + ci.ChunkLength,
		"message index entry":  ci.ChunkStartOffset + ci.ChunkLength + 9 + 2 + 4 + 8 + 7, // the first entry's offset, high byte
	} {
		bad := append([]byte(nil), data...)
		bad[at] ^= 0x40
		if err := Check(write(strings.ReplaceAll(name, " ", "_")+".mcap", bad), st.Messages); err == nil {
			t.Errorf("%s damaged: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
