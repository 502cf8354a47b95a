package analyzer

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

// disorderLog writes n 1 kHz states in many small chunks with every kind
// of disorder the books tell apart: duplicates, reordered pairs, seq
// gaps, a 2 s outage, and a restart from a new publisher.
func disorderLog(t *testing.T, path string, n int) {
	t.Helper()
	w, err := logfmt.Create(path, logfmt.WriterOptions{ChunkSize: 16 << 10, Sync: logfmt.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	id, err := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Schema: codec.SchemaState,
		Compression: logfmt.Compression{Kind: logfmt.CompressionZstd}})
	if err != nil {
		t.Fatal(err)
	}
	const t0, ms = int64(1_764_446_400_000_000_000), int64(1_000_000)
	type sample struct {
		seq uint64
		t   int64
		pub string
	}
	var ss []sample
	seq, at, pub := uint64(0), t0, "sim-a"
	for i := range n {
		switch {
		case i == n/2:
			seq, pub = 0, "sim-b" // restart
		case i == n/3:
			at += 2000 * ms // outage
		case i%900 == 899:
			seq += 3 // gap
		}
		ss = append(ss, sample{seq, at, pub})
		if i%500 == 499 {
			ss = append(ss, ss[len(ss)-1]) // duplicate
		}
		if i%700 == 699 {
			ss[len(ss)-1], ss[len(ss)-2] = ss[len(ss)-2], ss[len(ss)-1] // reordered
		}
		seq++
		at += ms
	}
	var buf []byte
	for i, s := range ss {
		st := codec.State{Seq: s.seq, TNs: s.t, Sensors: []codec.Sensor{{ID: 1, TNs: s.t - ms}}}
		buf = codec.AppendState(buf[:0], &st)
		recv := t0 + int64(i)*ms + 300_000 + int64(i%7)*20_000
		if err := w.Write(&logfmt.Record{Channel: id, RecvWallNs: recv, RecvMonoNs: recv - hostMonoOrigin, CaptureNs: s.t, Seq: s.seq, HasStamp: true,
			PublisherID: []byte(s.pub), Payload: buf}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// The timing books kept on a goroutine of their own, with chunks loaded
// ahead (more than one core), give exactly the report and the plots of
// one core: on logs with duplicates, reordered samples, seq gaps,
// outages, restarts, stray payloads, and frames arriving late.
func TestBooksSameOnAnyCores(t *testing.T) {
	dir := t.TempDir()
	faults, _ := writeSession(t, synth.Default())
	disorder, late := filepath.Join(dir, "disorder.vrlog"), filepath.Join(dir, "late.vrlog")
	disorderLog(t, disorder, 20_000)
	longLog{states: 90_000, frameDelay: 14 * time.Millisecond, lateEvery: 100, withStates: true, withFrames: true}.write(t, late)
	for _, c := range []struct {
		name  string
		paths []string
		opts  Options
	}{
		{"faults", []string{faults}, Options{PlotBins: 50}},
		{"disorder", []string{disorder}, Options{PlotBins: 50}},
		{"late frames", []string{late}, Options{}},
		{"late frames, 30 s window", []string{late}, Options{LagWindow: 30 * time.Second}},
		{"three logs", []string{faults, disorder, late}, Options{PlotBins: 20}},
	} {
		var reports, pages [2][]byte
		for k, procs := range []int{1, 2} {
			prev := runtime.GOMAXPROCS(procs)
			a := New(c.opts)
			err := a.Plan(c.paths)
			for _, p := range c.paths {
				if err == nil {
					err = a.AddFile(p)
				}
			}
			runtime.GOMAXPROCS(prev)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			rep := a.Report()
			if st := rep.Channel("vr/r1/state"); c.name == "disorder" && (st.Duplicates == 0 || st.Reorders == 0 || st.SkipEvents == 0 ||
				st.RestartCount != 1 || len(st.Outages) != 1 || !st.Restarts[0].PublisherChange) {
				t.Fatalf("the disorder log lacks some disorder: %+v", st)
			}
			reports[k], _ = json.Marshal(rep)
			var h bytes.Buffer
			if err := a.WriteHTML(&h, rep); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			pages[k] = h.Bytes()
		}
		if !bytes.Equal(reports[0], reports[1]) {
			t.Errorf("%s: one core and two differ:\n%s\n%s", c.name, reports[0], reports[1])
		}
		if !bytes.Equal(pages[0], pages[1]) {
			t.Errorf("%s: the HTML reports of one core and two differ", c.name)
		}
	}
}

// hostMonoOrigin is where the test logs' monotonic clock starts on their
// wall clock: synth's, so that logs analyzed together are one host's
// (hostclock.OneReceiveClock).
const hostMonoOrigin = 1_700_000_000_000_000_000
