package e2e

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/mcapexport"
)

// A team's own messages, published by Python nodes on the official zenoh
// wheel, each serialized by the library made for its encoding (protobuf
// from a .proto compiled by grpcio-tools, JSON, ROS 2 CDR by rosbags, a
// packed C struct), recorded with the team's declarations
// (peers/ownmsg/schemas.txt): analyze finds exactly the skips, the
// restart and the lag the publisher injected; the MCAP export, decoded
// by the MCAP project's own decoders, holds what was sent; the Python
// reader decodes each record as cat --json does.
func TestRecordDeclaredSchemas(t *testing.T) {
	py := peertest.Python(t)
	for _, enc := range []struct{ name, dir string }{{"protobuf", "pb"}, {"json", "json"}, {"ros2", "ros"}, {"cstruct", "c"}} {
		t.Run(enc.name, func(t *testing.T) {
			dir := t.TempDir()
			prefix := robot(t) + "/" + enc.dir
			schemas := filepath.Join(dir, "schemas.txt")
			writeDeclarations(t, schemas, robot(t))
			port := strconv.Itoa(freePort(t))
			logPath, truthPath := filepath.Join(dir, "own.vrlog"), filepath.Join(dir, "truth.jsonl")
			args := []string{"record", "--listen", "tcp/127.0.0.1:" + port, "--no-multicast", "-q", "-o", logPath,
				"-k", prefix + "/**", "--probe-interval", "0", "--schemas", schemas}
			rec := start(t, vrlogBin, args...)
			pubArgs := []string{filepath.Join(root(), "peers", "ownmsg.py"), "--connect", "tcp/127.0.0.1:" + port,
				"--prefix", prefix, "--encoding", enc.name, "--log", truthPath}
			if enc.name == "protobuf" {
				pubArgs = append(pubArgs, "--raw")
			}
			pub := start(t, py, pubArgs...)
			endRecording(t, pub, rec, 90*time.Second)
			truth := readOwnTruth(t, truthPath)

			rep := analyzeJSON(t, logPath)
			pose := channelReport(t, rep, prefix+"/pose")
			cam := channelReport(t, rep, prefix+"/cam")
			wantSeq := map[string]string{"protobuf": "payload header.seq", "json": "payload header.seq", "ros2": "zenoh source info", "cstruct": "payload seq"}[enc.name]
			for _, c := range []map[string]any{pose, cam} {
				if enc.name == "ros2" && c["name"] == prefix+"/cam" {
					wantSeq = "rmw_zenoh sequence_number"
				}
				if c["undecodable"].(float64) != 0 || !strings.HasPrefix(c["stamp_source"].(string), "payload ") || c["seq_source"] != wantSeq {
					t.Errorf("%s: undecodable %v, stamp from %v, seq from %v (want a payload stamp, seq from %s)", c["name"], c["undecodable"], c["stamp_source"], c["seq_source"], wantSeq)
				}
				if int(c["count"].(float64)) != len(truth[c["name"].(string)]) {
					t.Errorf("%s: %v records, %d published", c["name"], c["count"], len(truth[c["name"].(string)]))
				}
			}
			// exactly what was injected: 3 skipped at seq 50 on the states, one restart on both (after 0.3 s of silence)
			if pose["skipped"].(float64) != 3 || pose["skip_events"].(float64) != 1 || cam["skipped"].(float64) != 0 {
				t.Errorf("skips: states %v in %v events, frames %v; want 3 in 1, 0", pose["skipped"], pose["skip_events"], cam["skipped"])
			}
			if s := pose["skips"].([]any); len(s) != 1 || s[0].(map[string]any)["last_seq"].(float64) != 49 {
				t.Errorf("skips %v: want one after seq 49", s)
			}
			if pose["restart_count"].(float64) != 1 || cam["restart_count"].(float64) != 1 {
				t.Errorf("restarts: states %v, frames %v; want 1, 1", pose["restart_count"], cam["restart_count"])
			}
			// the skip's gap (4 periods of 5 ms: over 3) and the restart's silence are outages
			if o := interiorOutages(pose); len(o) != 2 || o[0].(map[string]any)["gap_s"].(float64) != 0.02 ||
				o[1].(map[string]any)["gap_s"].(float64) < 0.3 || o[1].(map[string]any)["restart"] != true {
				t.Errorf("states: outages %v, want the skip's (0.02 s) and the restart's (0.3 s)", o)
			}
			lag := findLag(t, rep, prefix+"/cam")
			if p50, mx := lag["latest_ms"].(map[string]any)["p50"].(float64), lag["latest_ms"].(map[string]any)["max"].(float64); p50 != 2 || mx != 2 {
				t.Errorf("lag of the frames: p50 %v max %v ms, want the injected 2 ms", p50, mx)
			}
			// every payload decoded again gives the same figures
			fullOut, err := exec.Command(vrlogBin, "analyze", "--json", "--full-decode", logPath).Output()
			if err != nil {
				t.Fatalf("analyze --full-decode: %v", err)
			}
			var full map[string]any
			if err := json.Unmarshal(fullOut, &full); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{prefix + "/pose", prefix + "/cam"} {
				a, b := channelReport(t, rep, name), channelReport(t, full, name)
				for _, k := range []string{"count", "undecodable", "skipped", "restart_count", "first_ns", "last_ns"} {
					if a[k] != b[k] {
						t.Errorf("%s %s: %v from the stored stamps, %v with --full-decode", name, k, a[k], b[k])
					}
				}
			}
			if enc.name == "protobuf" { // zenoh timestamps and source info on an undeclared channel
				raw := channelReport(t, rep, prefix+"/raw")
				if raw["stamp_source"] != "zenoh timestamp" || raw["seq_source"] != "zenoh source info" || raw["latency_ms"] == nil ||
					raw["skipped"].(float64) != 3 || raw["restart_count"].(float64) != 1 {
					t.Errorf("raw channel with zenoh timestamps: stamp %v seq %v latency %v skipped %v restarts %v",
						raw["stamp_source"], raw["seq_source"], raw["latency_ms"], raw["skipped"], raw["restart_count"])
				}
			}

			// MCAP in the channels' own encodings, decoded by the MCAP libraries
			mcapPath := filepath.Join(dir, "own.mcap")
			if out, err := exec.Command(vrlogBin, "export", logPath, "--format", "mcap", "-o", mcapPath).CombinedOutput(); err != nil {
				t.Fatalf("export: %v\n%s", err, out)
			}
			exported := declaredMessages(t, py, mcapPath, prefix+"/")
			got := map[string][]ownMsg{}
			wantEnc := map[string]string{"protobuf": "protobuf", "json": "json", "ros2": "cdr", "cstruct": "json"}[enc.name]
			for _, m := range exported {
				if strings.HasSuffix(m.Topic, "/raw") {
					continue
				}
				if m.Encoding != wantEnc {
					t.Fatalf("%s: message encoding %s, want %s", m.Topic, m.Encoding, wantEnc)
				}
				got[m.Topic] = append(got[m.Topic], decodedOwn(t, enc.name, m.Decoded, m.Sequence))
			}
			for _, k := range []string{prefix + "/pose", prefix + "/cam"} {
				if len(got[k]) != len(truth[k]) {
					t.Fatalf("%s: %d messages in the MCAP, %d sent", k, len(got[k]), len(truth[k]))
				}
				for i, w := range truth[k] {
					if g := got[k][i]; g.Seq != w.Seq || g.TNs != w.TNs || math.Abs(g.X-w.X) > 1e-12 {
						t.Fatalf("%s message %d: MCAP %+v, sent %+v", k, i, g, w)
					}
				}
			}

			// vrlog view: the same schemas and messages (view_test.go)
			checkViewDeclared(t, py, logPath, prefix, exported)

			// CSV: the decoded fields as columns
			csvDir := filepath.Join(dir, "csv")
			if out, err := exec.Command(vrlogBin, "export", logPath, "--format", "csv", "-o", csvDir).CombinedOutput(); err != nil {
				t.Fatalf("export csv: %v\n%s", err, out)
			}
			xCol := map[string]string{"protobuf": "msg.x", "json": "msg.x", "ros2": "msg.pose.position.x", "cstruct": "msg.x"}[enc.name]
			rows := readCSV(t, filepath.Join(csvDir, mcapexport.CSVName(prefix+"/pose")))
			if len(rows)-1 != len(truth[prefix+"/pose"]) {
				t.Fatalf("csv: %d rows, %d sent", len(rows)-1, len(truth[prefix+"/pose"]))
			}
			xi := slices.Index(rows[0], xCol)
			if xi < 0 {
				t.Fatalf("csv columns %v: no %s", rows[0], xCol)
			}
			for i, w := range truth[prefix+"/pose"] {
				if x, err := strconv.ParseFloat(rows[i+1][xi], 64); err != nil || math.Abs(x-w.X) > 1e-12 {
					t.Fatalf("csv row %d: %s = %q, sent %v", i, xCol, rows[i+1][xi], w.X)
				}
			}

			// the Python reader decodes every record as cat --json does
			catOut, err := exec.Command(vrlogBin, "cat", logPath, "--json", "--channel", prefix+"/*").Output()
			if err != nil {
				t.Fatalf("cat: %v", err)
			}
			pyOut, err := exec.Command(py, "-c", `import json, sys, vrlog
log = vrlog.open(sys.argv[1])
for rec in log.records(payloads=True):
    ch = log.channel(rec.channel)
    if ch.name.startswith(sys.argv[2]) and not ch.name.endswith("/raw"):
        print(json.dumps({"channel": ch.name, "seq": rec.seq, "t_ns": rec.capture_ns, "decoded": log.decode(rec)}))
`, logPath, prefix+"/").CombinedOutput()
			if err != nil {
				t.Fatalf("python reader: %v\n%s", err, pyOut)
			}
			cats, pys := catDecoded(t, catOut, true), catDecoded(t, pyOut, false)
			if len(cats) == 0 || len(cats) != len(pys) {
				t.Fatalf("cat --json: %d decoded records, the Python reader %d", len(cats), len(pys))
			}
			for i := range cats {
				if cats[i] != pys[i] {
					t.Fatalf("record %d:\n cat --json %s\n python     %s", i, cats[i], pys[i])
				}
			}
		})
	}
}

// writeDeclarations writes peers/ownmsg/schemas.txt with the test's
// prefix, next to copies of the definitions it names.
func writeDeclarations(t *testing.T, path, prefix string) {
	src := filepath.Join(root(), "peers", "ownmsg")
	b, err := os.ReadFile(filepath.Join(src, "schemas.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\nown/", "\n"+prefix+"/")
	text = strings.ReplaceAll(text, "proto=team.proto", "proto="+filepath.Join(src, "team.proto"))
	text = strings.ReplaceAll(text, "msg_path=.", "msg_path="+src)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// declaredMsg is one message as tools/mcapcheck/declared.py decoded it.
type declaredMsg struct {
	Topic, Encoding, Schema string
	SchemaEncoding          string `json:"schema_encoding"`
	Sequence                uint64
	Decoded                 map[string]any
}

// declaredMessages decodes the messages of an MCAP under prefix with the
// MCAP project's decoders (tools/mcapcheck/declared.py).
func declaredMessages(t *testing.T, py, mcapPath, prefix string) []declaredMsg {
	t.Helper()
	out, err := exec.Command(py, filepath.Join(root(), "tools", "mcapcheck", "declared.py"), mcapPath, prefix).CombinedOutput()
	if err != nil {
		t.Fatalf("tools/mcapcheck/declared.py: %v\n%s", err, out)
	}
	var msgs []declaredMsg
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m declaredMsg
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber() // nanoseconds exactly
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		msgs = append(msgs, m)
	}
	return msgs
}

type ownMsg struct {
	Key  string  `json:"key"`
	Seq  uint64  `json:"seq"`
	TNs  int64   `json:"t_ns"`
	X    float64 `json:"x"`
	Note string  `json:"-"`
}

func readOwnTruth(t *testing.T, path string) map[string][]ownMsg {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]ownMsg{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m ownMsg
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		out[m.Key] = append(out[m.Key], m)
	}
	return out
}

// decodedOwn takes seq, t_ns and x from a decoded message of each
// encoding (a CDR message has no seq: the MCAP sequence, the source sn).
func decodedOwn(t *testing.T, enc string, d map[string]any, sequence uint64) ownMsg {
	num := func(v any) float64 {
		switch x := v.(type) {
		case json.Number:
			f, _ := x.Float64()
			return f
		case string: // protobuf's JSON writes 64-bit integers as strings
			f, _ := strconv.ParseFloat(x, 64)
			return f
		}
		t.Fatalf("not a number: %v in %v", v, d)
		return 0
	}
	obj := func(v any) map[string]any { return v.(map[string]any) }
	integer := func(v any) int64 {
		n, err := v.(json.Number).Int64()
		if err != nil {
			t.Fatalf("not an integer: %v in %v", v, d)
		}
		return n
	}
	switch enc {
	case "protobuf":
		h := obj(d["header"])
		ts, err := time.Parse(time.RFC3339Nano, h["stamp"].(string))
		if err != nil {
			t.Fatal(err)
		}
		seq, _ := strconv.ParseUint(h["seq"].(string), 10, 64)
		return ownMsg{Seq: seq, TNs: ts.UnixNano(), X: num(d["x"])}
	case "json":
		h := obj(d["header"])
		return ownMsg{Seq: uint64(integer(h["seq"])), TNs: integer(h["stamp_ns"]), X: num(d["x"])}
	case "ros2":
		st := obj(obj(d["header"])["stamp"])
		return ownMsg{Seq: sequence, TNs: integer(st["sec"])*1e9 + integer(st["nanosec"]), X: num(obj(obj(d["pose"])["position"])["x"])}
	}
	return ownMsg{Seq: uint64(integer(d["seq"])), TNs: integer(d["t_ns"]), X: num(d["x"])}
}

// catDecoded lists "channel seq t_ns decoded" per record, the decoded
// JSON normalized (parsed and marshalled again), from cat --json or the
// Python reader's lines.
func catDecoded(t *testing.T, out []byte, cat bool) []string {
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Channel string          `json:"channel"`
			Seq     *uint64         `json:"seq"`
			TNs     *int64          `json:"t_ns"`
			Decoded json.RawMessage `json:"decoded"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if cat && strings.HasSuffix(r.Channel, "/raw") {
			continue
		}
		var v any
		if err := json.Unmarshal(r.Decoded, &v); err != nil {
			t.Fatalf("decoded %s: %v", r.Decoded, err)
		}
		norm, _ := json.Marshal(v)
		lines = append(lines, r.Channel+" "+strconv.FormatUint(*r.Seq, 10)+" "+strconv.FormatInt(*r.TNs, 10)+" "+string(norm))
	}
	return lines
}

func readCSV(t *testing.T, path string) [][]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func findLag(t *testing.T, rep map[string]any, frames string) map[string]any {
	for _, l := range rep["lag"].([]any) {
		if m := l.(map[string]any); m["frames"] == frames {
			return m
		}
	}
	t.Fatalf("no lag for %s in %v", frames, rep["lag"])
	return nil
}
