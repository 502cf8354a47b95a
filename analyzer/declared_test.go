package analyzer

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cputime"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/schema"
)

// declaredLog starts a log at p for channels declared by line: the
// declaration (resolved as record resolves it), its codec, the writer.
func declaredLog(t *testing.T, p, line string) (*schema.Decl, *schema.Codec, *logfmt.Writer) {
	t.Helper()
	d, err := schema.Parse(line, ".", "test")
	if err != nil {
		t.Fatal(err)
	}
	d = d.Resolve(&logfmt.Record{}, false)
	cd, err := schema.Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	w, err := logfmt.Create(p, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d, cd, w
}

// A channel with a declared schema (a packed C struct) is timed from the
// stamps the recorder stored through its declaration, like a vrsdk state
// channel; the report says where they came from, and why its first
// undecodable record failed.
func TestDeclaredChannel(t *testing.T) {
	p := filepath.Join(t.TempDir(), "declared.vrlog")
	d, cd, w := declaredLog(t, p, `sim/pose cstruct struct="uint64_t seq; int64_t t_ns; double x" stamp=t_ns seq=seq`)
	id, _ := w.AddChannel(logfmt.Channel{Name: "sim/pose", Transport: logfmt.TransportZenoh, Topic: "sim/pose", Schema: d.Name, Meta: d.Meta()})
	raw, _ := w.AddChannel(logfmt.Channel{Name: "sim/cmd", Transport: logfmt.TransportZenoh, Topic: "sim/cmd"})
	const t0, period = int64(1_767_225_600e9), int64(10e6)
	for i := range int64(100) {
		seq := uint64(i)
		if i >= 40 {
			seq += 2 // two skipped after seq 39 (and the undecodable one below is a third)
		}
		payload := binary.LittleEndian.AppendUint64(nil, seq)
		payload = binary.LittleEndian.AppendUint64(payload, uint64(t0+i*period))
		payload = binary.LittleEndian.AppendUint64(payload, 0)
		if i == 70 {
			payload = payload[:20] // cut short: undecodable
		}
		rec := &logfmt.Record{Channel: id, RecvWallNs: t0 + i*period + 1e6, RecvMonoNs: 1e9 + i*period, Payload: payload}
		cd.StampRecord(rec, schema.Arrival{})
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&logfmt.Record{Channel: raw, RecvWallNs: rec.RecvWallNs + 1, RecvMonoNs: rec.RecvMonoNs + 1, Payload: []byte("go")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, full := range []bool{false, true} {
		rep, err := AnalyzeFiles([]string{p}, Options{FullDecode: full})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Channel("sim/pose")
		if c.Kind != KindState || c.StampSource != "payload t_ns" || c.SeqSource != "payload seq" {
			t.Fatalf("full %v: kind %s, stamp from %q, seq from %q", full, c.Kind, c.StampSource, c.SeqSource)
		}
		if c.Skipped != 3 || c.Undecodable != 1 || c.LatencyMs == nil || c.LatencyMs.P50 != 1 {
			t.Fatalf("full %v: skipped %d, undecodable %d, latency %+v", full, c.Skipped, c.Undecodable, c.LatencyMs)
		}
		if u := c.FirstUndecodable; u == nil || u.RecvMonoNs != 1e9+70*period || u.Offset != 20 || !strings.Contains(u.Reason, "truncated") {
			t.Fatalf("full %v: first undecodable %+v", full, u)
		}
		if r := rep.Channel("sim/cmd"); r.StampSource != "receive stamp" || r.Kind != KindRaw {
			t.Fatalf("raw channel: %+v", r)
		}
		// The text says where both channels' timing came from (the
		// declared struct's stamp field is named t_ns, as a vrsdk state's).
		var text strings.Builder
		if err := rep.WriteText(&text, 0); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"\n  sim/pose  stamp: payload t_ns; seq: payload seq\n", "\n  sim/cmd  stamp: receive stamp;"} {
			if !strings.Contains(text.String(), want) {
				t.Fatalf("full %v: the timing sources lack %q:\n%s", full, want, text.String())
			}
		}
	}
}

// BenchmarkTimingScanDeclared: analyze's timing scan of a channel with a
// declared schema (JSON here; any encoding: the scan reads the stamps the
// recorder stored, never the payload) beside the same records of a
// vrsdk state channel, in one run (-count N interleaves them).
func BenchmarkTimingScanDeclared(b *testing.B) {
	const n = 300_000
	d, err := schema.Parse(`sim/pose json stamp=t seq=n`, ".", "bench")
	if err != nil {
		b.Fatal(err)
	}
	d = d.Resolve(&logfmt.Record{}, false)
	dir := b.TempDir()
	logs := map[string]string{}
	for _, kind := range []string{"vrsdk", "declared"} {
		p := filepath.Join(dir, kind+".vrlog")
		w, err := logfmt.Create(p, logfmt.WriterOptions{Sync: logfmt.SyncNone})
		if err != nil {
			b.Fatal(err)
		}
		c := logfmt.Channel{Name: "sim/pose", Transport: logfmt.TransportZenoh, Topic: "sim/pose", Schema: codec.SchemaState}
		if kind == "declared" {
			c.Schema, c.Meta = d.Name, d.Meta()
		}
		id, _ := w.AddChannel(c)
		const t0 = int64(1_767_225_600e9)
		payload := make([]byte, 136)
		for i := range int64(n) {
			t := t0 + i*1e6
			if err := w.Write(&logfmt.Record{Channel: id, RecvWallNs: t + 2e5, RecvMonoNs: 1e9 + i*1e6, CaptureNs: t, Seq: uint64(i), HasStamp: true, Payload: payload}); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		logs[kind] = p
	}
	for _, kind := range []string{"vrsdk", "declared"} {
		b.Run(kind, func(b *testing.B) {
			cpu0 := cputime.Process()
			for b.Loop() {
				rep, err := AnalyzeFiles([]string{logs[kind]}, Options{})
				if err != nil || rep.Channels[0].Count != n || rep.Channels[0].Undecodable != 0 {
					b.Fatalf("%v %+v", err, rep.Channels)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrecords/s")
			if cpu := cputime.Process() - cpu0; cpu > 0 { // what a shared machine inflates least
				b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds()/1e6, "Mrecords/cpu-s")
			}
		})
	}
}

// A declared schema that fits none of its channel's payloads (a C struct
// declared 16 bytes for 24-byte payloads) leaves nothing to measure: every
// check on the channel fails saying so, with the first record's reason,
// rather than passing on zero skips and outages; a channel that decoded
// is judged as ever.
func TestChecksOnAnUndecodableChannel(t *testing.T) {
	p := filepath.Join(t.TempDir(), "wrong.vrlog")
	d, cd, w := declaredLog(t, p, `sim/*/pose cstruct struct="uint64_t seq; int64_t t_ns" stamp=t_ns seq=seq`)
	pose, _ := w.AddChannel(logfmt.Channel{Name: "sim/r1/pose", Transport: logfmt.TransportZenoh, Topic: "sim/r1/pose", Schema: d.Name, Meta: d.Meta()})
	state, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState})
	const t0, period = int64(1_767_225_600e9), int64(20e6)
	for i := range int64(50) {
		payload := binary.LittleEndian.AppendUint64(nil, uint64(i))
		payload = binary.LittleEndian.AppendUint64(payload, uint64(t0+i*period))
		payload = binary.LittleEndian.AppendUint64(payload, 7) // 8 bytes the declaration leaves out
		rec := &logfmt.Record{Channel: pose, RecvWallNs: t0 + i*period + 1e6, RecvMonoNs: 1e9 + i*period, Payload: payload}
		cd.StampRecord(rec, schema.Arrival{})
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		st := &logfmt.Record{Channel: state, RecvWallNs: rec.RecvWallNs + 1, RecvMonoNs: rec.RecvMonoNs + 1, CaptureNs: t0 + i*period,
			Seq: uint64(i), HasStamp: true, Payload: codec.AppendState(nil, &codec.State{Seq: uint64(i), TNs: t0 + i*period})}
		if err := w.Write(st); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := AnalyzeFiles([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Channel("sim/r1/pose"); c.Undecodable != 50 || c.Count != 50 {
		t.Fatalf("pose: %d of %d undecodable", c.Undecodable, c.Count)
	}
	zero := func(ch string) []Limit { l, _ := ParseLimit(ch+"0", false); return []Limit{l} }
	if err := rep.ApplyChecks(Thresholds{MaxSkips: zero(""), MaxRestarts: zero("sim/r1/pose="), MaxOutageMs: zero("sim/**=")}); err != nil {
		t.Fatal(err)
	}
	failed := map[string]string{}
	for _, c := range rep.Failed() {
		failed[c.Name+" "+c.Channel] = c.Message
	}
	for _, k := range []string{"max-skips sim/r1/pose", "max-restarts sim/r1/pose", "max-outage sim/r1/pose"} {
		if m := failed[k]; !strings.Contains(m, "nothing measured: none of its 50 records decoded (the first at byte 16: ") || !strings.Contains(m, "trailing bytes") {
			t.Fatalf("%s: %q; failed: %v", k, m, failed)
		}
	}
	if len(failed) != 3 || rep.Pass {
		t.Fatalf("failed %v, pass %v: the state channel's check passes", failed, rep.Pass)
	}
}

// A declared channel whose seq is its record count (no seq= in its
// declaration) has no counter a skip or restart shows in: max-skips and
// max-restarts do not apply to it, as to a raw channel, so a gate over
// every channel leaves it out and one that names it is an error (it
// passed with 0 skips, unmeasured).
func TestNoCounterNoSkipCheck(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nocounter.vrlog")
	d, cd, w := declaredLog(t, p, `sim/raw none stamp=zenoh.timestamp`)
	id, _ := w.AddChannel(logfmt.Channel{Name: "sim/raw", Transport: logfmt.TransportZenoh, Topic: "sim/raw", Schema: d.Name, Meta: d.Meta()})
	state, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState})
	const t0, period = int64(1_767_225_600e9), int64(10e6)
	for i := range int64(50) {
		rec := &logfmt.Record{Channel: id, RecvWallNs: t0 + i*period + 1e6, RecvMonoNs: 1e9 + i*period, Payload: []byte("x")}
		if err := cd.StampRecord(rec, schema.Arrival{ZenohNs: t0 + i*period, HasZenohTs: true, Count: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		st := &logfmt.Record{Channel: state, RecvWallNs: rec.RecvWallNs + 1, RecvMonoNs: rec.RecvMonoNs + 1, CaptureNs: t0 + i*period,
			Seq: uint64(i), HasStamp: true, Payload: codec.AppendState(nil, &codec.State{Seq: uint64(i), TNs: t0 + i*period})}
		for _, r := range []*logfmt.Record{rec, st} {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	analyze := func() *Report {
		rep, err := AnalyzeFiles([]string{p}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c := rep.Channel("sim/raw"); c == nil || c.SeqSource != "record count" || c.Count != 50 {
			t.Fatalf("sim/raw: %+v", c)
		}
		return rep
	}
	zero := func(ch string) []Limit { l, _ := ParseLimit(ch+"0", false); return []Limit{l} }
	rep := analyze()
	if err := rep.ApplyChecks(Thresholds{MaxSkips: zero(""), MaxRestarts: zero("")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Checks {
		if c.Channel == "sim/raw" {
			t.Fatalf("%+v: a channel without a counter checked", c)
		}
	}
	if len(rep.Checks) != 2 || !rep.Pass {
		t.Fatalf("checks %+v: want the state channel's two", rep.Checks)
	}
	err := analyze().ApplyChecks(Thresholds{MaxSkips: zero("sim/raw=")})
	if err == nil || !strings.Contains(err.Error(), `"sim/raw" matches no channel with seq stamps (there are: vr/r1/state)`) {
		t.Fatalf("max-skips sim/raw=0: %v", err)
	}
}
