package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/vrlog/vrlog/foxglove"
	"github.com/vrlog/vrlog/foxws"
	"github.com/vrlog/vrlog/foxws/foxwstest"
	"github.com/vrlog/vrlog/internal/peertest"
)

// vrlog view served to the official Foxglove client: @foxglove/ws-protocol
// (tools/foxglove-client, pinned; `make foxglove-client` installs it),
// which decodes every message with the advertised protobuf descriptors.
// Its messages are compared with the Python reader's reading of the same
// records: pixels, stamps, seqs, positions.

// fgEvent is one line of tools/foxglove-client's output.
type fgEvent struct {
	Kind       string          `json:"kind"`
	Topic      string          `json:"topic"`
	Schema     string          `json:"schema"`
	LogTime    string          `json:"logTime"`
	T          string          `json:"t"`
	Fields     json.RawMessage `json:"fields"`
	JSON       string          `json:"json"`
	Level      int             `json:"level"`
	Message    string          `json:"message"`
	Encoding   string          `json:"encoding"`
	SchemaName string          `json:"schemaName"`
}

// rawImage is a decoded foxglove.RawImage (protobufjs toObject, int64 as
// strings).
type rawImage struct {
	Timestamp struct {
		Seconds string `json:"seconds"`
		Nanos   int64  `json:"nanos"`
	} `json:"timestamp"`
	Width, Height, Step uint32
	Encoding            string `json:"encoding"`
	FrameID             string `json:"frame_id"`
	DataSHA256          string `json:"data_sha256"`
	DataLen             int    `json:"data_len"`
}

func (r rawImage) tNs() int64 {
	s, _ := strconv.ParseInt(r.Timestamp.Seconds, 10, 64)
	return s*1e9 + r.Timestamp.Nanos
}

// poseMsg is a decoded foxglove.PoseInFrame.
type poseMsg struct {
	FrameID string `json:"frame_id"`
	Pose    struct {
		Position struct{ X, Y, Z float64 } `json:"position"`
	} `json:"pose"`
}

// stateMsg is the part of a state's JSON message compared.
type stateMsg struct {
	Seq      uint64 `json:"seq"`
	TNs      int64  `json:"t_ns"`
	Position struct{ X, Y, Z *float64 }
}

// pyRef is the Python reader's reading of a log: frames and states by
// capture stamp (a publisher restart repeats seqs).
type pyRef struct {
	Frames map[int64]struct {
		Seq    uint64 `json:"seq"`
		SHA256 string `json:"sha256"`
		W, H   int
	}
	States map[int64]struct {
		Seq     uint64 `json:"seq"`
		X, Y, Z float64
	}
	Probes int
}

const pyRefScript = `
import hashlib, json, sys, vrlog
out = {"Frames": {}, "States": {}, "Probes": 0}
with vrlog.open(sys.argv[1]) as log:
    for rec, f in log.frames():
        out["Frames"][str(f.header.t_ns)] = {"seq": f.header.seq, "sha256": hashlib.sha256(f.pixels().tobytes()).hexdigest(),
                                             "W": f.header.width, "H": f.header.height}
    for rec, s in log.states():
        out["States"][str(s.t_ns)] = {"seq": s.seq, "X": s.position.x, "Y": s.position.y, "Z": s.position.z}
    probes = [c.id for c in log.channels if c.schema == "vrlog.ClockProbe/1"]
    out["Probes"] = sum(1 for _ in log.records(probes)) if probes else 0
json.dump(out, sys.stdout)
`

func pythonRef(t *testing.T, log string) pyRef {
	t.Helper()
	out, err := exec.Command(peertest.Python(t), "-c", pyRefScript, log).Output()
	if err != nil {
		t.Fatalf("python reader: %v", err)
	}
	var ref pyRef
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// startView runs vrlog view with args on a free port and returns its URL
// once it serves.
func startView(t *testing.T, args ...string) (string, *proc) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	p := start(t, vrlogBin, append([]string{"view", "--addr", addr}, args...)...)
	waitFor(t, 20*time.Second, "vrlog view to serve", func() bool { return strings.Contains(p.stderr.String(), "serving on ws://"+addr) })
	return "ws://" + addr, p
}

// foxgloveClient runs tools/foxglove-client and returns its events.
func foxgloveClient(t *testing.T, url string, args ...string) []fgEvent {
	t.Helper()
	dir := filepath.Join(root(), "tools", "foxglove-client")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@foxglove", "ws-protocol")); err != nil {
		t.Fatalf("the Foxglove client is not installed: run `make foxglove-client` (%v)", err)
	}
	cmd := exec.Command("node", append([]string{"client.mjs", "--url", url}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("foxglove client: %v\n%s", err, stderr.String())
	}
	var evs []fgEvent
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e fgEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("client line %q: %v", sc.Text(), err)
		}
		evs = append(evs, e)
	}
	return evs
}

// checkAgainst compares the client's messages with the Python reader's
// records: every frame's pixels and stamp, every state's stamps and
// position, every pose the state's; it returns the messages per schema.
func checkAgainst(t *testing.T, evs []fgEvent, ref pyRef) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, e := range evs {
		switch e.Kind {
		case "status":
			t.Errorf("status from the server: %d %s", e.Level, e.Message)
		case "channel":
			if e.SchemaName == "" || (e.Encoding != "json" && e.Encoding != "protobuf") {
				t.Errorf("channel %s: schema %q, encoding %q", e.Topic, e.SchemaName, e.Encoding)
			}
		}
		if e.Kind != "message" {
			continue
		}
		n[e.Schema]++
		switch e.Schema {
		case foxglove.SchemaRawImage:
			var m rawImage
			if err := json.Unmarshal(e.Fields, &m); err != nil {
				t.Fatal(err)
			}
			f, found := ref.Frames[m.tNs()]
			if !found || f.SHA256 != m.DataSHA256 || int(m.Width) != f.W || int(m.Height) != f.H || m.Step != m.Width*3 || m.Encoding != "rgb8" {
				t.Fatalf("frame t_ns %d: %+v; the Python reader's: %+v (found %v)", m.tNs(), m, f, found)
			}
		case "vrsdk.State/1":
			var m stateMsg
			if err := json.Unmarshal([]byte(e.JSON), &m); err != nil {
				t.Fatal(err)
			}
			s, ok := ref.States[m.TNs]
			if !ok || s.Seq != m.Seq || m.Position.X == nil || *m.Position.X != s.X || *m.Position.Y != s.Y || *m.Position.Z != s.Z {
				t.Fatalf("state t_ns %d: %s; the Python reader's: %+v", m.TNs, e.JSON, s)
			}
		case foxglove.SchemaPoseInFrame:
			var m poseMsg
			if err := json.Unmarshal(e.Fields, &m); err != nil {
				t.Fatal(err)
			}
			match := false
			for _, s := range ref.States {
				match = match || (s.X == m.Pose.Position.X && s.Y == m.Pose.Position.Y && s.Z == m.Pose.Position.Z)
			}
			if !match || m.FrameID != foxglove.PoseFrameID {
				t.Fatalf("pose %+v matches no state", m)
			}
		}
	}
	return n
}

// The sample log (recorded over the real transports) served to the
// official client over foxglove.websocket.v1: every record arrives,
// decoded with the advertised descriptors, equal to the Python reader's.
func TestViewLogOfficialClient(t *testing.T) {
	log := filepath.Join(root(), "testdata", "sample.vrlog")
	ref := pythonRef(t, log)
	url, _ := startView(t, log, "--speed", "20", "-q")
	pngPath := filepath.Join(t.TempDir(), "frame.png")
	want := len(ref.Frames) + 2*len(ref.States) + ref.Probes
	evs := foxgloveClient(t, url, "--count", strconv.Itoa(want), "--png", pngPath)
	n := checkAgainst(t, evs, ref)
	if n[foxglove.SchemaRawImage] != len(ref.Frames) || n["vrsdk.State/1"] != len(ref.States) || n[foxglove.SchemaPoseInFrame] != len(ref.States) ||
		n["vrlog.ClockProbe/1"] != ref.Probes {
		t.Fatalf("messages %v; the log has %d frames, %d states, %d probes", n, len(ref.Frames), len(ref.States), ref.Probes)
	}
	checkPNG(t, pngPath, 64, 48)
}

func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() != w || img.Bounds().Dy() != h {
		t.Fatalf("PNG of the first frame: %v %v", img.Bounds(), err)
	}
}

// The live simulator through vrlog view --live, recorded at the same time:
// the official client's frames and states are the recorded log's (by the
// Python reader), pixel for pixel and stamp for stamp.
func TestViewLiveOfficialClient(t *testing.T) {
	r, dir := robot(t), t.TempDir()
	logPath := filepath.Join(dir, "live.vrlog")
	zenoh, rec := simRecord(t, r, logPath, []string{"--width", "160", "--height", "120", "--state-hz", "100", "--frame-content", "gradient"})
	url, view := startView(t, append([]string{"--live", "-q", "-k", "vr/" + r + "/**", "-s", "vr/" + r + "/**"}, zenoh...)...)
	evs := foxgloveClient(t, url, "--count", "300", "--png", filepath.Join(dir, "live.png"))
	rec.signal(syscall.SIGINT)
	if code := rec.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, rec.stderr)
	}
	view.signal(syscall.SIGINT)
	ref := pythonRef(t, logPath)
	n := checkAgainst(t, evs, ref)
	if n[foxglove.SchemaRawImage] < 20 || n["vrsdk.State/1"] < 100 {
		t.Fatalf("live messages %v", n)
	}
	checkPNG(t, filepath.Join(dir, "live.png"), 160, 120)
	if dst := os.Getenv("VRLOG_VIEW_PNG"); dst != "" { // docs/viewing.md's picture
		b, _ := os.ReadFile(filepath.Join(dir, "live.png"))
		os.WriteFile(dst, b, 0o644)
	}
}

// simRecord runs the bundled simulator as robot r (30 Hz frames, simArgs)
// and records it into log (recArgs); it returns the zenoh flags that reach
// the simulator and the recorder.
func simRecord(t *testing.T, r, log string, simArgs []string, recArgs ...string) ([]string, *proc) {
	t.Helper()
	port := strconv.Itoa(freePort(t))
	zenoh := []string{"--no-multicast", "--connect", "tcp/127.0.0.1:" + port}
	start(t, vrlogBin, append([]string{"sim", "--listen", "tcp/127.0.0.1:" + port, "--no-multicast", "-q", "--robot", r,
		"--frame-hz", "30", "--duration", "60s", "--start-delay", "300ms"}, simArgs...)...)
	rec := start(t, vrlogBin, append(append([]string{"record", "-q", "-o", log, "-k", "vr/" + r + "/**", "-s", "vr/" + r + "/**",
		"--probe-interval", "0"}, zenoh...), recArgs...)...)
	return zenoh, rec
}

// One client that reads nothing and one that must get everything, from a
// log of 640x480 frames at 30 Hz and states at 1 kHz played at 1x: the
// reading client loses nothing, the other loses frames only (counted and
// said when it leaves, or is disconnected after --write-timeout).
func TestViewSlowClient(t *testing.T) {
	r, dir := robot(t), t.TempDir()
	logPath := filepath.Join(dir, "s.vrlog")
	_, rec := simRecord(t, r, logPath, []string{"--width", "640", "--height", "480", "--state-hz", "1000"}, "--duration", "3s")
	if code := rec.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, rec.stderr)
	}
	ref := pythonRef(t, logPath)
	url, view := startView(t, logPath, "--write-timeout", "2s", "--client-queue", "16")
	// The slow one subscribes to everything and never reads.
	slow := foxwstest.Dial(t, url, foxws.SubprotocolSDK)
	for _, topic := range []string{"vr/" + r + "/state", "vr/" + r + "/camera/front"} {
		for slow.ByTopic[topic] == 0 {
			slow.Read()
		}
		slow.Subscribe(uint32(len(topic)), topic)
	}
	fast := foxwstest.Dial(t, url, foxws.SubprotocolV1)
	fast.Read()
	fast.Subscribe(1, "vr/"+r+"/state")
	fast.Subscribe(2, "vr/"+r+"/camera/front")
	got := map[uint32]int{}
	for got[1] < len(ref.States) || got[2] < len(ref.Frames) {
		m, err := fast.TryRead(20 * time.Second)
		if err != nil {
			t.Fatalf("fast client, after %v of %d states and %d frames: %v\n%s", got, len(ref.States), len(ref.Frames), err, view.stderr)
		}
		if m.Op == foxws.OpMessageData {
			got[m.SubID]++
		}
	}
	if got[1] != len(ref.States) || got[2] != len(ref.Frames) {
		t.Fatalf("fast client got %v; the log has %d states, %d frames", got, len(ref.States), len(ref.Frames))
	}
	// The slow client lost frames only. It is disconnected once a write to
	// it took longer than 2 s; if its socket took the last message it was
	// sent, it has nothing left to refuse and stays until it leaves.
	slow.Close()
	fast.Close()
	client := regexp.MustCompile(`client \S+ (?:disconnected \(took nothing[^)]*\)|left): sent \d+ messages \([\d.]+ (?:[KMGT]i)?B\), dropped (\d+) \((\d+) frames\)`)
	var line []string
	waitFor(t, 20*time.Second, "the clients' lines", func() bool {
		for _, m := range client.FindAllStringSubmatch(view.stderr.String(), -1) {
			if m[1] != "0" {
				line = m
			}
		}
		return strings.Count(view.stderr.String(), "view: client ") == 2
	})
	if line == nil || line[1] != line[2] {
		t.Fatalf("the slow client's line: %q\n%s", line, view.stderr)
	}
	t.Logf("%d states, %d frames of 640x480; the slow client: %s", len(ref.States), len(ref.Frames), line[0])
}

// checkViewDeclared: vrlog view serves channels with declared schemas
// (docs/schemas.md; TestRecordDeclaredSchemas records them) as the MCAP
// export writes them: each advertised with the export's schema name,
// schema encoding and message encoding (protobuf with its
// FileDescriptorSet, ros2msg + cdr, JSON with a JSON Schema), and every
// message, written into an MCAP under the schema advertised, decodes with
// the MCAP project's decoders (tools/mcapcheck/declared.py) to what the
// export's message decoded to.
func checkViewDeclared(t *testing.T, py, log, prefix string, exported []declaredMsg) {
	t.Helper()
	want := map[string][]declaredMsg{}
	for _, m := range exported {
		want[m.Topic] = append(want[m.Topic], m)
	}
	topics := []string{prefix + "/pose", prefix + "/cam"}
	url, view := startView(t, log, "--channel", prefix+"/*", "--speed", "4", "-q")
	c := foxwstest.Dial(t, url, foxws.SubprotocolV1)
	defer c.Close()
	for _, topic := range topics {
		for c.ByTopic[topic] == 0 {
			c.Read()
		}
	}
	mcapPath := filepath.Join(t.TempDir(), "view.mcap")
	f, err := os.Create(mcapPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := mcap.NewWriter(f, &mcap.WriterOptions{Chunked: true})
	if err != nil || w.WriteHeader(&mcap.Header{}) != nil {
		t.Fatalf("mcap writer: %v", err)
	}
	for i, topic := range topics {
		a, e := c.Channels[c.ByTopic[topic]], want[topic][0]
		if a.SchemaName != e.Schema || a.SchemaEncoding != e.SchemaEncoding || a.Encoding != e.Encoding {
			t.Fatalf("%s advertised as %s (%s, messages %s); the export's is %s (%s, messages %s)",
				topic, a.SchemaName, a.SchemaEncoding, a.Encoding, e.Schema, e.SchemaEncoding, e.Encoding)
		}
		data := []byte(a.Schema)
		if a.SchemaEncoding == "protobuf" { // a binary FileDescriptorSet, in base64
			if data, err = base64.StdEncoding.DecodeString(a.Schema); err != nil {
				t.Fatalf("%s: schema: %v", topic, err)
			}
		}
		id := uint16(i + 1)
		if err := w.WriteSchema(&mcap.Schema{ID: id, Name: a.SchemaName, Encoding: a.SchemaEncoding, Data: data}); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteChannel(&mcap.Channel{ID: id, SchemaID: id, Topic: topic, MessageEncoding: a.Encoding}); err != nil {
			t.Fatal(err)
		}
		c.Subscribe(uint32(id), topic)
	}
	n := map[uint32]int{}
	for n[1] < len(want[topics[0]]) || n[2] < len(want[topics[1]]) {
		m, err := c.TryRead(20 * time.Second)
		if err != nil {
			t.Fatalf("after %v of %d and %d messages: %v\n%s", n, len(want[topics[0]]), len(want[topics[1]]), err, view.stderr)
		}
		if m.Text != nil && m.Text["op"] == "status" {
			t.Fatalf("status from the server: %s", m.Raw)
		}
		if m.Op != foxws.OpMessageData {
			continue
		}
		if err := w.WriteMessage(&mcap.Message{ChannelID: uint16(m.SubID), Sequence: uint32(n[m.SubID]), LogTime: m.LogTime,
			PublishTime: m.LogTime, Data: m.Data}); err != nil {
			t.Fatal(err)
		}
		n[m.SubID]++
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, undec := c.ByTopic[topics[0]+foxglove.UndecodableSuffix]; undec {
		t.Errorf("%s: an undecodable companion advertised", topics[0])
	}
	got := map[string][]declaredMsg{}
	for _, m := range declaredMessages(t, py, mcapPath, prefix+"/") {
		got[m.Topic] = append(got[m.Topic], m)
	}
	for _, topic := range topics {
		if len(got[topic]) != len(want[topic]) {
			t.Fatalf("%s: %d messages decoded from the view, %d from the export", topic, len(got[topic]), len(want[topic]))
		}
		for i, e := range want[topic] {
			if !reflect.DeepEqual(got[topic][i].Decoded, e.Decoded) {
				t.Fatalf("%s message %d: from the view %v, from the export %v", topic, i, got[topic][i].Decoded, e.Decoded)
			}
		}
	}
}

// record --view serves what the recorder records to Foxglove as it
// comes, from the recorder's own subscriptions: every message the
// official client decodes is a record of the log, pixels and stamps as
// the Python reader reads them.
func TestRecordView(t *testing.T) {
	r, dir := robot(t), t.TempDir()
	logPath := filepath.Join(dir, "rv.vrlog")
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	_, rec := simRecord(t, r, logPath, []string{"--width", "160", "--height", "120", "--state-hz", "100", "--frame-content", "gradient"},
		"--view", "--view-addr", addr)
	waitFor(t, 20*time.Second, "record --view to serve", func() bool { return strings.Contains(rec.stderr.String(), "viewing on ws://"+addr) })
	evs := foxgloveClient(t, "ws://"+addr, "--count", "300")
	rec.signal(syscall.SIGINT)
	if code := rec.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, rec.stderr)
	}
	n := checkAgainst(t, evs, pythonRef(t, logPath))
	if n[foxglove.SchemaRawImage] < 20 || n["vrsdk.State/1"] < 100 {
		t.Fatalf("messages seen through record --view: %v", n)
	}
}
