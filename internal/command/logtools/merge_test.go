package logtools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

// hostLog writes a synthetic session as one host recorded it: its clock
// offset behind the simulator's, its transport latency, probes every
// probeEvery (0: none).
func hostLog(t *testing.T, name string, offset, latency, probeEvery time.Duration) string {
	t.Helper()
	cfg := synth.Default()
	cfg.Duration, cfg.RestartAt, cfg.ClockOffset, cfg.Latency, cfg.ProbeEvery = 8*time.Second, 0, offset, latency, probeEvery
	p := filepath.Join(t.TempDir(), name)
	if _, err := synth.WriteFile(p, cfg, logfmt.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// merge --clock sim: each input's offset reported and stored, shown by
// info; the probes kept per host; the records on the simulator's clock.
func TestMergeOnSimClock(t *testing.T) {
	a := hostLog(t, "laptop.vrlog", 42*time.Millisecond, 3*time.Millisecond, 250*time.Millisecond)
	b := hostLog(t, "gpubox.vrlog", -80*time.Millisecond, 300*time.Microsecond, 250*time.Millisecond)
	m := filepath.Join(t.TempDir(), "session.vrlog")
	out, errs, code := run(t, "merge", a, b, "-o", m, "--clock", "sim")
	if code != 0 || errs != "" {
		t.Fatalf("merge --clock sim: %d\n%s%s", code, out, errs)
	}
	t.Log(out)
	if !strings.Contains(out, "  vr/r1/state: 198 records left out: second copies of samples another input recorded too") {
		t.Fatalf("merge did not say it left out the second copies:\n%s", out)
	}
	for _, want := range []string{"receive stamps on the simulator's clock (time service vr/r1/time)", a + ": offset +4", b + ": offset -",
		"probes on " + synth.ProbeName("r1") + "\n", "probes on " + synth.ProbeName("r1") + "@2\n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("merge's report lacks %q:\n%s", want, out)
		}
	}
	out, _, code = run(t, "info", "--json", m)
	var in Info
	if err := json.Unmarshal([]byte(out), &in); code != 0 || err != nil {
		t.Fatalf("info: %d %v", code, err)
	}
	if in.ReceiveClock != "simulator" || in.SimClock == nil || len(in.SimClock.Hosts) != 2 {
		t.Fatalf("info: receive clock %q, %+v", in.ReceiveClock, in.SimClock)
	}
	for i, want := range []time.Duration{42 * time.Millisecond, -80 * time.Millisecond} {
		h := in.SimClock.Hosts[i]
		if d := h.OffsetNs - want.Nanoseconds(); d < -h.UncertaintyNs || d > h.UncertaintyNs || h.Probes != 32 || h.Used != 16 {
			t.Fatalf("host %d: %+v, injected %v", i, h, want)
		}
	}
	text, _, _ := run(t, "info", m)
	if !strings.Contains(text, "clock:     receive stamps on the simulator's clock (time service vr/r1/time), merged from 2 hosts:") ||
		strings.Contains(text, hostclock.MetaKey) {
		t.Fatalf("info:\n%s", text)
	}
	// Two copies of one stream: each sample once, on the simulator's
	// clock now: within the hosts' latencies of its capture.
	r, err := logfmt.Open(m, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	it := r.Records(logfmt.Filter{MetaOnly: true})
	for it.Next() {
		if rec := it.Record(); rec.HasStamp {
			if lat := time.Duration(rec.RecvWallNs - rec.CaptureNs); lat < 0 || lat > 8*time.Millisecond {
				t.Fatalf("seq %d: latency on the simulator's clock %v", rec.Seq, lat)
			}
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	// Without --clock sim the two hosts' clocks are 122 ms apart.
	plain := filepath.Join(t.TempDir(), "plain.vrlog")
	if _, errs, code := run(t, "merge", a, b, "-o", plain); code != 0 {
		t.Fatalf("plain merge: %d %s", code, errs)
	}
	if text, _, _ := run(t, "info", plain); !strings.Contains(text, "\nchannels:") || strings.Contains(text, "clock:") {
		t.Fatalf("a plain merge is on the recorders' clocks:\n%s", text)
	}
}

// What merge --clock sim refuses: exit 2, naming the file and what to do.
func TestMergeOnSimClockErrors(t *testing.T) {
	a := hostLog(t, "a.vrlog", 42*time.Millisecond, 3*time.Millisecond, time.Second)
	none := hostLog(t, "none.vrlog", 0, time.Millisecond, 0)
	merged := filepath.Join(t.TempDir(), "merged.vrlog")
	if _, errs, code := run(t, "merge", "--clock", "sim", a, a, "-o", merged); code != 0 {
		t.Fatalf("merge: %s", errs)
	}
	o := filepath.Join(t.TempDir(), "o.vrlog")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", "--clock", "sim", a, none, "-o", o}, none + ": no clock-sync probes; without its probes"},
		{[]string{"merge", "--clock", "sim", a, none, "-o", o, "--time-service", "vr/r1/**"}, none + ": no clock-sync probes"},
		{[]string{"merge", "--clock", "sim", a, a, "-o", o, "--time-service", "vr/r2/time"}, "no clock-sync probes of a time service matching vr/r2/time (it probed vr/r1/time)"},
		{[]string{"merge", "--clock", "sim", a, a, "-o", o, "--time-service", "vr/r1*"}, "--time-service: "},
		{[]string{"merge", "--clock", "sim", merged, a, "-o", o}, merged + ": already on the simulator's clock"},
		{[]string{"merge", merged, a, "-o", o}, "is on the simulator's clock (a merge put it there), " + a + " on its recorder's; merge the hosts' own logs with --clock sim"},
		{[]string{"merge", "--time-service", "vr/r1/time", a, a, "-o", o}, "--time-service chooses the clock of --clock sim"},
		{[]string{"merge", "--clock", "capture", a, a, "-o", o}, `--clock "capture": want recorder or sim`},
	} {
		_, errs, code := run(t, c.args...)
		if code != cliutil.ExitUsage || !strings.Contains(errs, c.want) {
			t.Fatalf("%v: exit %d, want %d saying %q:\n%s", c.args, code, cliutil.ExitUsage, c.want, errs)
		}
		if _, err := os.Stat(o); !os.IsNotExist(err) {
			t.Fatalf("%v: left an output (%v)", c.args, err)
		}
	}
	// Parts of one merged log merge as they are.
	if _, errs, code := run(t, "merge", merged, merged, "-o", o); code != 0 {
		t.Fatalf("merging a merged log with itself: %s", errs)
	}
}

// hostStream writes one host's log of one stream: n records every period
// from capture time first, received 1 ms later on a clock offset behind
// the capture clock; states (zenoh) or frames (iceoryx2).
func hostStream(t *testing.T, name string, state bool, first int64, n int, period, offset time.Duration) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	w, err := logfmt.Create(p, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ch := logfmt.Channel{Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame}
	if state {
		ch = logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState}
	}
	id, err := w.AddChannel(ch)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		c := first + int64(i)*int64(period)
		r := logfmt.Record{Channel: id, RecvWallNs: c + int64(time.Millisecond-offset), RecvMonoNs: mono0 + c - t0, CaptureNs: c, Seq: uint64(i), HasStamp: true}
		if state {
			r.Payload = codec.AppendState(nil, &codec.State{Seq: uint64(i), TNs: c})
		} else {
			h := codec.NewFrameHeader(uint64(i), c, 1, 2, 2, codec.RGB8)
			r.Header, r.Payload = codec.AppendFrameHeader(nil, &h), make([]byte, 12)
		}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// A two-host session (docs/deployment.md): frames recorded on one host,
// states on another. The first frame was captured 14.136 ms before the
// robot's first state; the session's epoch is the first state all the
// same, in either input order (it was the frames log's fallback, the
// first frame), and epoch_source names the states log. analyze of the
// two logs together keeps the same rule.
func TestMergeEpochIsTheFirstState(t *testing.T) {
	const lead = 14_136 * time.Microsecond
	frames := hostStream(t, "frames.vrlog", false, t0, 30, 33*time.Millisecond, 3*time.Millisecond)
	states := hostStream(t, "states.vrlog", true, t0+int64(lead), 100, 10*time.Millisecond, -5*time.Millisecond)
	for _, in := range [][]string{{frames, states}, {states, frames}} {
		m := filepath.Join(t.TempDir(), "session.vrlog")
		if out, errs, code := run(t, append(append([]string{"merge"}, in...), "-o", m)...); code != 0 {
			t.Fatalf("merge %v: %d\n%s%s", in, code, out, errs)
		}
		out, _, code := run(t, "info", "--json", m)
		var info Info
		if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil {
			t.Fatalf("info: %d %v", code, err)
		}
		if info.EpochNs != t0+int64(lead) || !strings.Contains(info.EpochSource, "first state sample on vr/r1/state (in "+states+")") {
			t.Errorf("merge %v: epoch %d (%s), want the first state %d", in, info.EpochNs, info.EpochSource, t0+int64(lead))
		}
		rep, err := analyzer.AnalyzeFiles(in, analyzer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.EpochNs != t0+int64(lead) || !strings.Contains(rep.EpochSource, "(in "+states+")") {
			t.Errorf("analyze %v: epoch %d (%s), want the first state %d", in, rep.EpochNs, rep.EpochSource, t0+int64(lead))
		}
		// A cut of the frames log stores its fallback epoch, and says it is
		// one: analyzed beside the states, it does not win either.
		cutFrames := filepath.Join(t.TempDir(), "frames-cut.vrlog")
		if out, errs, code := run(t, "cut", frames, "-o", cutFrames); code != 0 {
			t.Fatalf("cut: %d\n%s%s", code, out, errs)
		}
		if rep, err := analyzer.AnalyzeFiles([]string{cutFrames, in[0], in[1]}, analyzer.Options{}); err != nil || rep.EpochNs != t0+int64(lead) {
			t.Errorf("analyze of a cut of the frames beside the states: epoch %d (%s) %v", rep.EpochNs, rep.EpochSource, err)
		}
		// A log of the merged session read again keeps it.
		if rep, err = analyzer.AnalyzeFiles([]string{m}, analyzer.Options{}); err != nil || rep.EpochNs != t0+int64(lead) {
			t.Errorf("analyze of the merged log: epoch %d (%s) %v", rep.EpochNs, rep.EpochSource, err)
		}
	}
}
