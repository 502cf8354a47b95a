package hostclock

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// probe is one exchange with a simulator clock offset ahead of the host's,
// delayed fwd on the way there and back on the way back, starting at host
// time t1.
func probe(t1 int64, offset, fwd, back time.Duration) sampler.Probe {
	t2 := t1 + offset.Nanoseconds() + fwd.Nanoseconds()
	t3 := t2 + 20_000 // the simulator's own handling
	return sampler.Probe{T1: t1, T2: t2, T3: t3, T4: t3 - offset.Nanoseconds() + back.Nanoseconds()}
}

// Known offsets come back within the model's uncertainty (RTT/2), however
// the delay splits between the two directions and however many probes
// were queued on the way.
func TestRecoversKnownOffset(t *testing.T) {
	const t0 = 1_764_446_400_000_000_000
	cases := []struct {
		name      string
		offset    time.Duration
		fwd, back time.Duration
		queued    time.Duration // extra delay of every other probe, one way
	}{
		{"symmetric", 3 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond, 0},
		{"behind", -250 * time.Microsecond, 300 * time.Microsecond, 300 * time.Microsecond, 0},
		{"asymmetric", 1500 * time.Millisecond, 10 * time.Millisecond, 40 * time.Millisecond, 0},
		{"all the way one side", -2 * time.Second, 0, 60 * time.Millisecond, 0},
		{"half queued", 7 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 80 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ps []sampler.Probe
			for i := range 20 {
				fwd := c.fwd
				if i%2 == 1 {
					fwd += c.queued
				}
				ps = append(ps, probe(t0+int64(i)*1e9, c.offset, fwd, c.back))
			}
			m, err := FromProbes(ps)
			if err != nil {
				t.Fatal(err)
			}
			errNs := m.OffsetNs() - c.offset.Nanoseconds()
			if errNs < -m.UncertaintyNs() || errNs > m.UncertaintyNs() {
				t.Fatalf("offset %v, want %v ± %v", time.Duration(m.OffsetNs()), c.offset, time.Duration(m.UncertaintyNs()))
			}
			// The estimate is exactly the one-way asymmetry away, and the
			// queued half was left out.
			if want := c.offset + (c.fwd-c.back)/2; m.OffsetNs() != want.Nanoseconds() {
				t.Fatalf("offset %v, want %v (the delay asymmetry's half)", time.Duration(m.OffsetNs()), want)
			}
			if m.Estimate.Used != 10 && c.queued > 0 {
				t.Fatalf("used %d probes, want the 10 unqueued", m.Estimate.Used)
			}
			// A host stamp converts by adding the offset.
			host := int64(t0 + 5e9)
			if got := m.ToSim(host); got != host+m.OffsetNs() {
				t.Fatalf("ToSim(%d) = %d, want +%d", host, got, m.OffsetNs())
			}
		})
	}
}

// A host clock drifting against the simulator's: ToSim follows the drift
// measured over the probes, not just their mean offset.
func TestToSimFollowsDrift(t *testing.T) {
	const t0 = 1_764_446_400_000_000_000
	const ppm = 40
	offsetAt := func(host int64) time.Duration { return 5*time.Millisecond + time.Duration(float64(host-t0)*ppm/1e6) }
	var ps []sampler.Probe
	for i := range 60 {
		t1 := t0 + int64(i)*1e9
		ps = append(ps, probe(t1, offsetAt(t1), time.Millisecond, time.Millisecond))
	}
	m, err := FromProbes(ps)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Estimate.DriftValid {
		t.Fatal("60 s of probes must measure drift")
	}
	for _, at := range []int64{t0, t0 + 30e9, t0 + 59e9} {
		want := at + offsetAt(at).Nanoseconds()
		if d := m.ToSim(at) - want; d < -1000 || d > 1000 { // within 1 µs of the truth; the offset alone is 1.2 ms off at the ends
			t.Fatalf("ToSim at +%ds off by %d ns", (at-t0)/1e9, d)
		}
	}
}

func TestNoProbes(t *testing.T) {
	if _, err := FromProbes(nil); !errors.Is(err, ErrNoProbes) {
		t.Fatalf("no probes: %v", err)
	}
	broken := sampler.Probe{T1: 10, T2: 0, T3: 1000, T4: 20} // negative RTT
	if _, err := FromProbes([]sampler.Probe{broken}); !errors.Is(err, ErrNoProbes) {
		t.Fatalf("only impossible probes: %v", err)
	}
	cfg := synth.Default()
	cfg.ProbeEvery = 0
	r := writeLog(t, cfg)
	if _, err := FromLog(r); !errors.Is(err, ErrNoProbes) {
		t.Fatalf("a log without probes: %v", err)
	}
}

// From a recorded log (synthetic, with a known offset and transport
// latency): the model recovers the offset, and the states' receive stamps,
// converted, lie the transport latency after their capture stamps.
func TestFromLog(t *testing.T) {
	cfg := synth.Default()
	cfg.ClockOffset = 42 * time.Millisecond // simulator minus recorder
	r := writeLog(t, cfg)
	models, err := FromLog(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 1 || models[0].Channel != synth.ProbeName(cfg.Robot) || models[0].Service != "vr/"+cfg.Robot+"/time" {
		t.Fatalf("models %+v", models)
	}
	m := models[0]
	if d := m.OffsetNs() - cfg.ClockOffset.Nanoseconds(); d < -m.UncertaintyNs() || d > m.UncertaintyNs() {
		t.Fatalf("offset %v, want %v ± %v", time.Duration(m.OffsetNs()), cfg.ClockOffset, time.Duration(m.UncertaintyNs()))
	}
	lo := (cfg.Latency - cfg.Jitter).Nanoseconds() - m.UncertaintyNs()
	hi := (cfg.Latency + cfg.Jitter).Nanoseconds() + m.UncertaintyNs()
	var states uint16
	for _, c := range r.Channels() {
		if c.Name == synth.StateKey(cfg.Robot) {
			states = c.ID
		}
	}
	it := r.Records(logfmt.Filter{Channels: []uint16{states}})
	n := 0
	for it.Next() {
		rec := it.Record()
		if !rec.HasStamp {
			continue
		}
		if lat := m.ToSim(rec.RecvWallNs) - rec.CaptureNs; lat < lo || lat > hi {
			t.Fatalf("state seq %d: latency on the simulator's clock %v, want %v..%v", rec.Seq, time.Duration(lat), time.Duration(lo), time.Duration(hi))
		}
		n++
	}
	if err := it.Err(); err != nil || n == 0 {
		t.Fatalf("%d records: %v", n, err)
	}
}

// An undecodable probe is skipped; a channel of nothing but is an error
// that says so.
func TestFromLogBadProbes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.vrlog")
	w, err := logfmt.Create(p, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := w.AddChannel(logfmt.Channel{Name: "vrlog/clock/vr/x/time", Transport: logfmt.TransportInternal, Topic: "vr/x/time", Schema: codec.SchemaClockProbe})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&logfmt.Record{Channel: id, RecvWallNs: 1, Payload: []byte("not a probe")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := logfmt.Open(p, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := FromLog(r); !errors.Is(err, ErrNoProbes) {
		t.Fatalf("a channel of garbage: %v", err)
	} else {
		t.Log(err)
	}
}

func writeLog(t *testing.T, cfg synth.Config) *logfmt.Reader {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.vrlog")
	if _, err := synth.WriteFile(p, cfg, logfmt.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := logfmt.Open(p, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
