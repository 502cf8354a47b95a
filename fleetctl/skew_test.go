package fleetctl

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/logfmt"
)

const simT0 = int64(1_800_000_000e9)

// hostLog writes a recorder host's log whose clock is offset behind the
// simulator's: exact clock probes (equal delays both ways), records of
// the recorder's own channels before its first data record, and data
// records from firstSim (on the simulator's clock) every 10 ms, the
// second one received 3 ms before the first (a lane written later).
func hostLog(t *testing.T, path string, offset time.Duration, firstSim int64) {
	t.Helper()
	w, err := logfmt.Create(path, logfmt.WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state"})
	probes, _ := w.AddChannel(logfmt.Channel{Name: "vrlog/clock/vr/r1/time", Transport: logfmt.TransportInternal, Topic: "vr/r1/time", Schema: codec.SchemaClockProbe})
	own, _ := w.AddChannel(logfmt.Channel{Name: "vrlog/pause", Transport: logfmt.TransportInternal, Topic: "vrlog/pause", Schema: codec.SchemaPause})
	host := func(sim int64) int64 { return sim - offset.Nanoseconds() }
	write := func(ch uint16, wall int64, payload []byte) {
		if err := w.Write(&logfmt.Record{Channel: ch, RecvWallNs: wall, RecvMonoNs: wall - simT0 + 1e9, Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		t1 := host(firstSim) - 500e6 + int64(i)*100e6
		d := int64(200e3)
		pr := codec.ClockProbe{T1Ns: t1, T2Ns: t1 + d + offset.Nanoseconds(), T3Ns: t1 + d + offset.Nanoseconds(), T4Ns: t1 + 2*d}
		write(probes, pr.T4Ns, codec.AppendClockProbe(nil, pr))
	}
	write(own, host(firstSim)-50e6, []byte("x"))
	write(data, host(firstSim)+3e6, []byte("a"))
	write(data, host(firstSim), []byte("b"))
	for i := 1; i < 200; i++ {
		write(data, host(firstSim)+int64(i)*10e6, []byte("c"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// mergeOnSim merges files on the simulator's clock, as merge --clock sim.
func mergeOnSim(t *testing.T, out string, files ...string) {
	t.Helper()
	var rs []*logfmt.Reader
	for _, f := range files {
		r, err := logfmt.Open(f, logfmt.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rs = append(rs, r)
	}
	al, err := hostclock.Align(rs, files, hostclock.AlignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := logfmt.PlanMerge(rs, logfmt.MergeOptions{Apart: hostclock.IsProbe, Restamp: al.Restamp})
	if err != nil {
		t.Fatal(err)
	}
	w, err := logfmt.Create(out, logfmt.WriterOptions{FlushInterval: -1, Metadata: map[string]string{hostclock.MetaKey: al.SimClock(plan).Encode()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Copy(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Two recorders whose clocks are 250 ms apart, the second beginning its
// recording 7 ms after the first on the simulator's clock: StartSkew
// finds 7 ms, each recorder's first data record (not its own channels'
// nor its probes', not the first written), across a recorder's files.
func TestStartSkew(t *testing.T) {
	dir := t.TempDir()
	a0, a1, b := filepath.Join(dir, "a0.vrlog"), filepath.Join(dir, "a1.vrlog"), filepath.Join(dir, "b.vrlog")
	hostLog(t, a0, 100*time.Millisecond, simT0)
	hostLog(t, a1, 100*time.Millisecond, simT0+3e9) // host a's next file
	hostLog(t, b, -150*time.Millisecond, simT0+7e6)
	merged := filepath.Join(dir, "session.vrlog")
	mergeOnSim(t, merged, a1, b, a0)
	sk, err := StartSkew(merged, map[string][]string{"hosta": {a1, a0}, "hostb": {b}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sk.Firsts) != 2 || sk.Firsts[0].Name != "hosta" || sk.Firsts[0].File != a0 || sk.Firsts[1].Name != "hostb" {
		t.Fatalf("firsts %+v", sk.Firsts)
	}
	if sk.SpreadNs != 7e6 || sk.Firsts[1].AfterNs != 7e6 || sk.Firsts[0].SimNs != simT0 || sk.UncertaintyNs != 2*200e3 {
		t.Fatalf("skew %+v, want 7 ms ± 0.4 ms from %d", sk, simT0)
	}

	if _, err := StartSkew(a0, map[string][]string{"hosta": {a0}}); !errors.Is(err, ErrNoSimClock) {
		t.Fatalf("a log not on the simulator's clock: %v", err)
	}
	if _, err := StartSkew(merged, map[string][]string{"hosta": {filepath.Join(dir, "other.vrlog")}}); err == nil {
		t.Fatal("a file that is no input of the merge was measured")
	}
}
