//go:build cgo

package replay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/replayer"
	"github.com/vrlog/vrlog/transport/iceoryx2"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// The report's types, from the library.
type (
	Report        = replayer.Report
	ChannelReport = replayer.ChannelReport
	TimingError   = replayer.TimingError
)

// logFixture is a log written for a test, with what went into it.
type logFixture struct {
	path        string
	stateKey    string
	rawKey      string
	service     string
	states      []logfmt.Record // in receive order
	frames      []logfmt.Record
	raw         []logfmt.Record
	logStartMon int64
}

const (
	stateHz = 200
	frameHz = 30
)

// writeLog writes span of a 200 Hz state stream (zenoh), a 30 Hz 16×8 camera
// (iceoryx2, with the type details in the channel meta), a 10 Hz raw
// channel and a clock-probe channel (internal, never replayed). Receive
// stamps carry a deterministic ±300 µs jitter so pacing has something to
// reproduce. Names are unique per test (iceoryx2 services are host-wide).
func writeLog(t *testing.T, span time.Duration) *logFixture {
	t.Helper()
	id := fmt.Sprintf("%d/%s/%d", os.Getpid(), t.Name(), time.Now().UnixNano())
	f := &logFixture{path: filepath.Join(t.TempDir(), "in.vrlog"), stateKey: "vrtest/" + id + "/state",
		rawKey: "vrtest/" + id + "/diag", service: "vrtest/" + id + "/camera"}
	w, err := logfmt.Create(f.path, logfmt.WriterOptions{ChunkSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := w.AddChannel(logfmt.Channel{Name: f.stateKey, Transport: logfmt.TransportZenoh, Topic: f.stateKey,
		Schema: codec.SchemaState, Compression: logfmt.Compression{Kind: logfmt.CompressionZstd},
		Meta: map[string]string{"zenoh.encoding": "application/octet-stream"}})
	meta := iceoryx2.TypeDetails{ // a vrsdk frame service's types (docs/wire-format.md)
		Payload:    iceoryx2.TypeDetail{Variant: iceoryx2.Dynamic, TypeName: "u8", Size: 1, Alignment: 1},
		UserHeader: iceoryx2.TypeDetail{Variant: iceoryx2.FixedSize, TypeName: "vrsdk::FrameHeader", Size: 48, Alignment: 8},
	}.ToMeta()
	meta["iox2.subscriber_max_buffer_size"] = "16"
	fc, _ := w.AddChannel(logfmt.Channel{Name: f.service, Transport: logfmt.TransportIceoryx2, Topic: f.service,
		Schema: codec.SchemaFrame, Meta: meta})
	rc, _ := w.AddChannel(logfmt.Channel{Name: f.rawKey, Transport: logfmt.TransportZenoh, Topic: f.rawKey,
		Meta: map[string]string{"zenoh.encoding": "application/json"}})
	pc, _ := w.AddChannel(logfmt.Channel{Name: "vrlog/clock/t", Transport: logfmt.TransportInternal, Topic: "t/time", Schema: codec.SchemaClockProbe})
	t0 := int64(1_764_446_400_000_000_000)
	const mono0 = int64(5_000_000_000_000)
	var all []logfmt.Record
	jit := func(i int) int64 { return int64((i*7919)%601-300) * 1000 } // ±300 µs, deterministic
	for i := 0; int64(i)*1e9/stateHz < int64(span); i++ {
		c := t0 + int64(i)*1e9/stateHz
		s := codec.State{Seq: uint64(i), TNs: c, EstimateTNs: c - 3e6, Position: codec.Vec3{X: float64(i)},
			Sensors: []codec.Sensor{{ID: 1, TNs: c - 1e6}, {ID: 2, TNs: c - 2e6}}}
		all = append(all, logfmt.Record{Channel: sc, RecvWallNs: c + 1e6 + jit(i), RecvMonoNs: mono0 + 1e6 + c - t0 + jit(i),
			CaptureNs: c, Seq: uint64(i), HasStamp: true, Payload: codec.AppendState(nil, &s)})
	}
	for i := 0; int64(i)*1e9/frameHz < int64(span); i++ {
		c := t0 + int64(i)*1e9/frameHz + 2e6
		h := codec.NewFrameHeader(uint64(i), c, 1, 16, 8, codec.RGB8)
		pix := make([]byte, 16*8*3)
		for j := range pix {
			pix[j] = byte(i*31 + j)
		}
		all = append(all, logfmt.Record{Channel: fc, RecvWallNs: c + 3e6, RecvMonoNs: mono0 + 3e6 + c - t0 + jit(i+5),
			CaptureNs: c, Seq: uint64(i), HasStamp: true, Header: codec.AppendFrameHeader(nil, &h), Payload: pix})
	}
	for i := 0; int64(i)*1e8 < int64(span); i++ {
		c := t0 + int64(i)*1e8 + 5e5
		all = append(all, logfmt.Record{Channel: rc, RecvWallNs: c, RecvMonoNs: mono0 + c - t0, Payload: []byte(fmt.Sprintf(`{"n":%d}`, i))})
		p := codec.ClockProbe{T1Ns: c, T2Ns: c + 1, T3Ns: c + 2, T4Ns: c + 3}
		all = append(all, logfmt.Record{Channel: pc, RecvWallNs: c + 3, RecvMonoNs: mono0 + c - t0 + 3, Payload: codec.AppendClockProbe(nil, p)})
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].RecvMonoNs < all[b].RecvMonoNs })
	for i := range all {
		if err := w.Write(&all[i]); err != nil {
			t.Fatal(err)
		}
		if all[i].Channel != pc && (f.logStartMon == 0 || all[i].RecvMonoNs < f.logStartMon) {
			f.logStartMon = all[i].RecvMonoNs
		}
		switch all[i].Channel {
		case sc:
			f.states = append(f.states, all[i])
		case fc:
			f.frames = append(f.frames, all[i])
		case rc:
			f.raw = append(f.raw, all[i])
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

// zenohPeer is a test-side zenoh session listening on a loopback port.
type zenohPeer struct {
	s  *zenoh.Session
	ep string
}

func newZenohPeer(t testing.TB) *zenohPeer {
	t.Helper()
	ep := "tcp/127.0.0.1:" + strconv.Itoa(freePort(t))
	s, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &zenohPeer{s: s, ep: ep}
}

// collect receives on a subscriber in the background until stop.
type collected[T any] struct {
	mu   sync.Mutex
	got  []T
	done chan struct{}
}

func (c *collected[T]) items() []T { c.mu.Lock(); defer c.mu.Unlock(); return slices.Clone(c.got) }

func zenohCollect(t testing.TB, p *zenohPeer, key string) (*collected[zenoh.Sample], func()) {
	t.Helper()
	sub, err := p.s.Subscribe(key, zenoh.SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, sub)
}

func iceoryxCollect(t *testing.T, service string) (*collected[iceoryx2.Sample], func()) {
	t.Helper()
	n, err := iceoryx2.NewNode("vrlog-replay-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	var sub *iceoryx2.Subscriber
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if sub, err = n.Subscribe(service, iceoryx2.SubscriberOptions{QueueLen: 1024}); err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("service %s never appeared: %v", service, err)
		}
	}
	return collect(t, sub)
}

// receiver is what both transports' subscribers offer.
type receiver[S any] interface {
	Receive(ctx context.Context, dst []S) ([]S, error)
	Close() error
}

// collect drains sub into a collected until stop (or the test's end).
func collect[S any](t testing.TB, sub receiver[S]) (*collected[S], func()) {
	c := &collected[S]{done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(c.done)
		var buf []S
		for {
			var err error
			buf, err = sub.Receive(ctx, buf[:0])
			c.mu.Lock()
			c.got = append(c.got, buf...)
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	stop := func() { cancel(); <-c.done; sub.Close() }
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			stop()
		}
	})
	return c, stop
}

func freePort(t testing.TB) int { return peertest.FreePort(t) }

// replayResult is one in-process run of the command.
type replayResult struct {
	code           int
	stdout, stderr string
	rep            Report
}

func runReplay(t testing.TB, args ...string) replayResult {
	t.Helper()
	app := cliutil.Single(Command())
	var out, errb bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errb
	code := cliutil.Execute(app, append([]string{"replay"}, args...))
	r := replayResult{code: code, stdout: out.String(), stderr: errb.String()}
	if slices.Contains(args, "--json") && code != cliutil.ExitUsage {
		if err := json.Unmarshal(out.Bytes(), &r.rep); err != nil {
			t.Fatalf("summary JSON: %v\n%s\nstderr: %s", err, out.String(), errb.String())
		}
	}
	return r
}

func (r replayResult) channel(t *testing.T, name string) ChannelReport {
	t.Helper()
	for _, c := range r.rep.Channels {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no channel %s in the summary", name)
	return ChannelReport{}
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// checkDeltas compares inter-arrival times with the log's. Each received
// delta may differ from the recorded one by the two publishes' timing
// errors plus the transport's latency variation. Both bounds come from the
// same run: the median deviation may exceed neither twice replay's own
// median timing error plus twice the median deviation of a plainly paced
// probe stream sent through zenoh at the same time (noise: what the
// machine's scheduling and transport did then), with 500 µs of slack; the
// worst case stays within twice the reported maximum error plus 50 ms.
func checkDeltas(t *testing.T, what string, orig, got []int64, rep TimingError, noise time.Duration) {
	t.Helper()
	if len(orig) != len(got) || len(got) < 3 {
		t.Fatalf("%s: %d arrivals for %d records", what, len(got), len(orig))
	}
	var dev []int64
	for i := 1; i < len(got); i++ {
		d := (got[i] - got[i-1]) - (orig[i] - orig[i-1])
		dev = append(dev, max(d, -d))
	}
	slices.Sort(dev)
	med, worst := dev[len(dev)/2], dev[len(dev)-1]
	bound := 2*rep.P50 + 2*int64(noise) + int64(500*time.Microsecond)
	t.Logf("%s: |delta - original| median %v (bound %v: replay's p50 %v, probe %v), max %v (reported timing error max %v)",
		what, time.Duration(med), time.Duration(bound), time.Duration(rep.P50), noise, time.Duration(worst), time.Duration(rep.Max))
	if med > bound {
		t.Errorf("%s: median inter-arrival deviation %v > %v", what, time.Duration(med), time.Duration(bound))
	}
	if worst > 2*rep.Max+int64(50*time.Millisecond) {
		t.Errorf("%s: inter-arrival deviation %v exceeds 2×%v + 50ms", what, time.Duration(worst), time.Duration(rep.Max))
	}
}

func monos[T any](xs []T, f func(T) int64) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// TestReplayIntoSubscribers replays a log at 1× into Go zenoh and iceoryx2
// subscribers and the Python subscriber peer at once: identical bytes,
// per-channel order, inter-arrival deltas, and the summary's counts.
func TestReplayIntoSubscribers(t *testing.T) {
	f := writeLog(t, 1500*time.Millisecond)
	py := startPython(t, "--state-key", f.stateKey, "--states", strconv.Itoa(len(f.states)),
		"--service", f.service, "--frames", strconv.Itoa(len(f.frames)), "--buffer", "64", "--timeout", "60")
	zp := newZenohPeer(t)
	states, stopS := zenohCollect(t, zp, f.stateKey)
	raws, stopR := zenohCollect(t, zp, f.rawKey)
	frames, stopF := iceoryxCollect(t, f.service) // the python peer created the service
	probe := pacedProbe(t, zp, f.stateKey+"/probe", time.Second/stateHz)
	r := runReplay(t, "--json", "--quiet", "--no-multicast-scouting", "--connect", zp.ep, "--connect", py.ep,
		"--delay", "1.5", "--linger", "1s", f.path)
	noise := probe()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	waitCount(t, func() int { return len(states.items()) }, len(f.states))
	waitCount(t, func() int { return len(frames.items()) }, len(f.frames))
	waitCount(t, func() int { return len(raws.items()) }, len(f.raw))
	stopS()
	stopR()
	stopF()

	gs, gf, gr := states.items(), frames.items(), raws.items()
	for i, s := range gs {
		if !bytes.Equal(s.Payload, f.states[i].Payload) || s.Encoding != "application/octet-stream" {
			t.Fatalf("state %d differs (encoding %q)", i, s.Encoding)
		}
	}
	for i, s := range gr {
		if !bytes.Equal(s.Payload, f.raw[i].Payload) || s.Encoding != "application/json" {
			t.Fatalf("raw %d differs: %q %q", i, s.Payload, s.Encoding)
		}
	}
	for i, s := range gf {
		if !bytes.Equal(s.UserHeader, f.frames[i].Header) || !bytes.Equal(s.Payload, f.frames[i].Payload) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if c := r.channel(t, f.stateKey); c.Sent != uint64(len(f.states)) || c.TimingError.Count != c.Sent {
		t.Fatalf("summary %+v", c)
	}
	if len(r.rep.Channels) != 3 {
		t.Fatalf("%d channels replayed (the probe channel must not be)", len(r.rep.Channels))
	}
	maxErr := r.rep.Total.TimingError.Max
	checkDeltas(t, "zenoh states", monos(f.states, func(x logfmt.Record) int64 { return x.RecvMonoNs }),
		monos(gs, func(x zenoh.Sample) int64 { return x.RecvMonoNs }), r.channel(t, f.stateKey).TimingError, noise)
	checkDeltas(t, "iceoryx2 frames", monos(f.frames, func(x logfmt.Record) int64 { return x.RecvMonoNs }),
		monos(gf, func(x iceoryx2.Sample) int64 { return x.RecvMonoNs }), r.channel(t, f.service).TimingError,
		noise+200*time.Microsecond) // + the subscriber's 200 µs poll period
	// Cross-channel: each frame arrives at its place among the states.
	if d := (gf[10].RecvMonoNs - gs[100].RecvMonoNs) - (f.frames[10].RecvMonoNs - f.states[100].RecvMonoNs); d > 2*maxErr+int64(50*time.Millisecond) || -d > 2*maxErr+int64(50*time.Millisecond) {
		t.Errorf("frame 10 vs state 100 off by %v", time.Duration(d))
	}

	if err := py.wait(60 * time.Second); err != nil {
		t.Fatalf("python subscriber: %v\n%s", err, py.stderr())
	}
	var pyStates, pyFrames []pyRecord
	for _, x := range py.records(t) {
		if strings.HasPrefix(x.Channel, "frame:") {
			pyFrames = append(pyFrames, x)
		} else {
			pyStates = append(pyStates, x)
		}
	}
	if len(pyStates) != len(f.states) || len(pyFrames) != len(f.frames) {
		t.Fatalf("python got %d states, %d frames; want %d, %d", len(pyStates), len(pyFrames), len(f.states), len(f.frames))
	}
	for i, x := range pyStates {
		if x.PayloadSHA256 != sha(f.states[i].Payload) || x.Seq == nil || *x.Seq != f.states[i].Seq {
			t.Fatalf("python state %d differs", i)
		}
	}
	for i, x := range pyFrames {
		if x.PayloadSHA256 != sha(f.frames[i].Payload) || x.HeaderSHA256 != sha(f.frames[i].Header) || *x.Seq != f.frames[i].Seq {
			t.Fatalf("python frame %d differs", i)
		}
	}
}

func waitCount(t *testing.T, n func() int, want int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); n() < want && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
	}
	if got := n(); got != want {
		t.Fatalf("received %d, want %d", got, want)
	}
}

// statesOnly runs a zenoh-only replay of the state channel and returns
// what arrived and the summary.
func statesOnly(t *testing.T, f *logFixture, args ...string) ([]zenoh.Sample, replayResult) {
	t.Helper()
	zp := newZenohPeer(t)
	c, stop := zenohCollect(t, zp, f.stateKey)
	args = append([]string{"--json", "--quiet", "--no-multicast-scouting", "--connect", zp.ep, "--delay", "1", "--linger", "300ms",
		"--channel", f.stateKey}, args...)
	r := runReplay(t, append(args, f.path)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	want := int(r.rep.Total.Sent)
	waitCount(t, func() int { return len(c.items()) }, want)
	stop()
	return c.items(), r
}

func seqOf(t *testing.T, s zenoh.Sample) uint64 {
	q, _, err := codec.StateStamp(s.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestRateTwoHalvesDuration(t *testing.T) {
	f := writeLog(t, time.Second)
	got, r := statesOnly(t, f, "--rate", "2")
	// At 2× each state arrives at a constant offset from half its recorded
	// time: the median offset of the second half of the states equals the
	// first half's (at another rate they part by (1/rate - 1/2) of half the
	// span). Medians, so that a few states the transport held up (a fresh
	// publisher's first puts, a loaded machine) do not decide it.
	half := func(part []zenoh.Sample, from int) int64 {
		var o []int64
		for i, s := range part {
			o = append(o, s.RecvMonoNs-(f.states[from+i].RecvMonoNs-f.states[0].RecvMonoNs)/2)
		}
		slices.Sort(o)
		return o[len(o)/2]
	}
	n := len(got) / 2
	d := half(got[n:], n) - half(got[:n], 0)
	span := f.states[len(f.states)-1].RecvMonoNs - f.states[0].RecvMonoNs
	t.Logf("log span %v, summary elapsed %.3f s, timing error %+v; second half vs first half %v", time.Duration(span), r.rep.ElapsedS, r.rep.Total.TimingError, time.Duration(d))
	slack := 2*r.rep.Total.TimingError.P99 + int64(30*time.Millisecond)
	if d > slack || d < -slack {
		t.Fatalf("at 2× the second half of %v of log arrived %v off the first's pace", time.Duration(span), time.Duration(d))
	}
	for i, s := range got {
		if !bytes.Equal(s.Payload, f.states[i].Payload) {
			t.Fatalf("state %d differs", i)
		}
	}
}

func TestLoopAndWindow(t *testing.T) {
	f := writeLog(t, time.Second)
	got, r := statesOnly(t, f, "--start", "0.2", "--end", "0.5", "--loop", "2")
	var want []uint64
	var mono []int64 // the recorded receive stamps of one pass
	for _, s := range f.states {
		if off := s.RecvMonoNs - f.logStartMon; off >= 200e6 && off < 500e6 {
			want = append(want, s.Seq)
			mono = append(mono, s.RecvMonoNs)
		}
	}
	want = append(want, want...)
	var seqs []uint64
	for _, s := range got {
		seqs = append(seqs, seqOf(t, s))
	}
	if !slices.Equal(seqs, want) || r.rep.Passes != 2 {
		t.Fatalf("seqs %v\nwant %v (passes %d)", seqs, want, r.rep.Passes)
	}
	// The second pass starts one window (0.3 s) after the first: compared
	// through each pass's median arrival offset from the recorded stamps,
	// which one sample the transport held up (a loaded machine) cannot move.
	n := len(want) / 2
	offset := func(pass []zenoh.Sample) int64 {
		var o []int64
		for i, s := range pass {
			o = append(o, s.RecvMonoNs-mono[i])
		}
		slices.Sort(o)
		return o[len(o)/2]
	}
	slack := 2*r.rep.Total.TimingError.P99 + int64(30*time.Millisecond)
	if d := offset(got[n:]) - offset(got[:n]) - int64(300*time.Millisecond); d < -slack || d > slack {
		t.Fatalf("second pass began %v after the first (slack %v)", time.Duration(d), time.Duration(slack))
	}
}

func TestInjectDropIsSeeded(t *testing.T) {
	f := writeLog(t, time.Second)
	var runs [2][]uint64
	for k := range runs {
		got, r := statesOnly(t, f, "--rate", "max", "--inject", "drop=0.1", "--seed", "42")
		for _, s := range got {
			runs[k] = append(runs[k], seqOf(t, s))
		}
		// Seq gaps at the subscriber = the drops the summary reports.
		gaps := uint64(0)
		prev := int64(-1)
		for _, q := range runs[k] {
			gaps += uint64(int64(q) - prev - 1)
			prev = int64(q)
		}
		gaps += uint64(int64(len(f.states)) - 1 - prev)
		c := r.channel(t, f.stateKey)
		if gaps != c.Dropped || c.Dropped < 5 || c.Dropped > 45 { // binomial(200, 0.1)
			t.Fatalf("run %d: %d seq gaps, %d dropped", k, gaps, c.Dropped)
		}
	}
	if !slices.Equal(runs[0], runs[1]) {
		t.Fatal("same seed, different drops")
	}
}

func TestInjectOutageAndRestart(t *testing.T) {
	f := writeLog(t, time.Second)
	got, r := statesOnly(t, f, "--rate", "4", "--inject", "outage=0.3:0.2", "--inject", "restart=0.5")
	var want []uint64
	var orig [][]byte
	base := int64(-1)
	for _, s := range f.states {
		off := s.RecvMonoNs - f.logStartMon
		switch {
		case off < 300e6:
			want, orig = append(want, s.Seq), append(orig, s.Payload)
		case off >= 500e6:
			if base < 0 {
				base = int64(s.Seq)
			}
			want, orig = append(want, s.Seq-uint64(base)), append(orig, s.Payload)
		}
	}
	var seqs []uint64
	for i, s := range got {
		seqs = append(seqs, seqOf(t, s))
		// Only seq (bytes 8..15) changed.
		if i < len(orig) && (!bytes.Equal(s.Payload[:8], orig[i][:8]) || !bytes.Equal(s.Payload[16:], orig[i][16:])) {
			t.Fatalf("state %d changed beyond seq", i)
		}
	}
	c := r.channel(t, f.stateKey)
	if !slices.Equal(seqs, want) || c.Reseq != uint64(len(want)-int(c.Sent-c.Reseq)) || c.OutageSkipped == 0 {
		t.Fatalf("seqs %v\nwant %v\nsummary %+v", seqs, want, c)
	}
	if seqs[len(seqs)-1] >= seqs[0]+100 {
		t.Fatal("no restart visible")
	}
}

func TestRestampShiftsByTheConstant(t *testing.T) {
	f := writeLog(t, 500*time.Millisecond)
	zp := newZenohPeer(t)
	states, stopS := zenohCollect(t, zp, f.stateKey)
	raws, stopR := zenohCollect(t, zp, f.rawKey)
	frames, stopF := iceoryxCollectAfterStart(t, f.service)
	before := time.Now().UnixNano()
	r := runReplay(t, "--json", "--quiet", "--restamp", "--no-multicast-scouting", "--connect", zp.ep, "--delay", "1.5", "--linger", "500ms", f.path)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	frames.wait(t)
	waitCount(t, func() int { return len(states.items()) }, len(f.states))
	waitCount(t, func() int { return len(raws.items()) }, len(f.raw))
	stopS()
	stopR()
	stopF()
	if r.rep.RestampDeltaNs == nil {
		t.Fatal("no restamp_delta_ns")
	}
	d := *r.rep.RestampDeltaNs
	// The first record's t_ns maps to the moment it was published.
	if first := f.states[0].CaptureNs + d; first < before || first > time.Now().UnixNano() {
		t.Fatalf("first t_ns maps to %d, outside the run [%d, now]", first, before)
	}
	for i, s := range states.items() {
		want := bytes.Clone(f.states[i].Payload)
		if err := codec.ShiftState(want, d); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(s.Payload, want) {
			t.Fatalf("state %d is not the original shifted by %d", i, d)
		}
	}
	for i, s := range frames.c.items() {
		h, err := codec.DecodeFrameHeader(s.UserHeader, 0)
		if err != nil || h.TNs != f.frames[i].CaptureNs+d || h.Seq != f.frames[i].Seq || !bytes.Equal(s.Payload, f.frames[i].Payload) {
			t.Fatalf("frame %d: %+v %v", i, h, err)
		}
	}
	for i, s := range raws.items() {
		if !bytes.Equal(s.Payload, f.raw[i].Payload) {
			t.Fatalf("raw %d changed", i)
		}
	}
}

// iceoryxCollectAfterStart subscribes once the replay created the service.
type lateCollector struct {
	c     *collected[iceoryx2.Sample]
	ready chan struct{}
	stop  func()
	n     int
}

func iceoryxCollectAfterStart(t *testing.T, service string) (*lateCollector, func()) {
	l := &lateCollector{ready: make(chan struct{})}
	go func() {
		defer close(l.ready)
		l.c, l.stop = iceoryxCollect(t, service)
	}()
	return l, func() { <-l.ready; l.stop() }
}

func (l *lateCollector) wait(t *testing.T) { <-l.ready }

func TestCorruptAndTruncatedInput(t *testing.T) {
	f := writeLog(t, time.Second)
	b, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := logfmt.Open(f.path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	chunks := r.Chunks()
	r.Close()
	if len(chunks) < 4 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	// A bit flip in the last byte of the middle chunk's record metadata
	// (read whatever the channel selection): its CRC fails.
	mid := chunks[len(chunks)/2]
	bad := bytes.Clone(b)
	bad[mid.Offset+mid.Size()-int64(mid.DataLen)-1] ^= 0x40
	corrupt := filepath.Join(t.TempDir(), "corrupt.vrlog")
	os.WriteFile(corrupt, bad, 0o644)
	// The file cut in the middle of the last chunk (and so without footer).
	last := chunks[len(chunks)-1]
	trunc := filepath.Join(t.TempDir(), "trunc.vrlog")
	os.WriteFile(trunc, b[:last.Offset+last.Size()/2], 0o644)

	for _, c := range []struct{ name, path string }{{"corrupt", corrupt}, {"truncated", trunc}} {
		t.Run(c.name, func(t *testing.T) {
			res := runReplay(t, "--quiet", "--rate", "max", "--linger", "0", "--no-multicast-scouting", "--channel", f.stateKey, c.path)
			if res.code != cliutil.ExitUsage || !strings.Contains(res.stderr, c.path) || !strings.Contains(res.stderr, "--tolerant") {
				t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
			}
			f2 := *f
			f2.path = c.path
			got, rep := statesOnly(t, &f2, "--rate", "max", "--tolerant")
			if len(got) == 0 || len(got) >= len(f.states) || len(rep.rep.SkippedChunks) == 0 {
				t.Fatalf("tolerant: %d of %d states, skipped %v", len(got), len(f.states), rep.rep.SkippedChunks)
			}
			// What arrives is intact and in order.
			j := 0
			for _, s := range got {
				for j < len(f.states) && !bytes.Equal(f.states[j].Payload, s.Payload) {
					j++
				}
				if j == len(f.states) {
					t.Fatalf("state seq %d is not an original record in order", seqOf(t, s))
				}
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	f := writeLog(t, 100*time.Millisecond)
	for _, args := range [][]string{
		{},
		{"--rate", "0", f.path},
		{"--rate", "fast", f.path},
		{"--loop", "-1", f.path},
		{"--clock", "gps", f.path},
		{"--inject", "drop=2", f.path},
		{"--inject", "meteor=1", f.path},
		{"--channel", "no/such/**", f.path},
		{"--end", "1", "--duration", "1", f.path},
		{"--start", "0.5", "--end", "0.2", f.path},
		{"--start", "yesterday", f.path},
		// the test fixture's flags
		{"--wait-for-subscribers", "-1", f.path},
		{"--wait-timeout", "1s", f.path}, // without --wait-for-subscribers
		{"--control", "a/b", f.path},
		{"--control", "*", f.path},
		{"--clock-key", "vr/*/clock", f.path},
		{"--clock-per-record", f.path}, // without --clock-key
		{"--clock-key", "k", "--clock-rate", "0", f.path},
		{"--lockstep", "vr/cmd*", f.path},
		{"--lockstep", f.stateKey, f.path},  // would answer itself
		{"--lockstep", "vrtest/**", f.path}, // the same through a pattern
		{"--lockstep", "x", "--lockstep-timeout", "0s", f.path},
		{"--lockstep", "x", "--clock-key", "x", f.path}, // the clock would answer
		{"--lockstep", "x", "--stimulus", "no/such", f.path},
		{"--lockstep", "x", "--channel", f.service, f.path},                           // no state channel to trigger on
		{"--stimulus", f.stateKey, f.path},                                            // neither lockstep nor capture
		{"--capture", "x", f.path},                                                    // no -o
		{"-o", "r.vrlog", f.path},                                                     // no --capture
		{"--capture", f.service, "-o", filepath.Join(t.TempDir(), "r.vrlog"), f.path}, // would capture itself
		{"--remap", "no/such/**=x/**", f.path},
		{"--channel", "vr/cam*", f.path},
		{filepath.Join(t.TempDir(), "missing.vrlog")},
	} {
		if r := runReplay(t, args...); r.code != cliutil.ExitUsage {
			t.Errorf("%v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
	// A negative and a zero lockstep timeout say the same range (-1s said
	// "want >= 0", and 0 was refused too).
	for _, d := range []string{"-1s", "0s"} {
		if r := runReplay(t, "--lockstep", "x", "--lockstep-timeout", d, f.path); r.code != cliutil.ExitUsage || !strings.Contains(r.stderr, "want a duration > 0") {
			t.Errorf("--lockstep-timeout %s: exit %d %q", d, r.code, r.stderr)
		}
	}
	notLog := filepath.Join(t.TempDir(), "x.vrlog")
	os.WriteFile(notLog, []byte("not a log at all, just text"), 0o644)
	if r := runReplay(t, notLog); r.code != cliutil.ExitUsage {
		t.Errorf("foreign file: exit %d", r.code)
	}
}

// ---- the Python subscriber peer ----

type pyRecord struct {
	Channel       string  `json:"channel"`
	Seq           *uint64 `json:"seq"`
	TNs           *int64  `json:"t_ns"`
	HeaderSHA256  string  `json:"header_sha256"`
	PayloadSHA256 string  `json:"payload_sha256"`
}

type pyPeer struct {
	ep   string
	out  string
	cmd  *exec.Cmd
	done chan error
	mu   sync.Mutex
	errb bytes.Buffer
}

// startPython runs peers/subscriber.py listening on a loopback port and
// waits for its "ready" line.
func startPython(t *testing.T, args ...string) *pyPeer {
	t.Helper()
	py := peertest.Python(t)
	p := &pyPeer{ep: "tcp/127.0.0.1:" + strconv.Itoa(freePort(t)), out: filepath.Join(t.TempDir(), "py.jsonl"), done: make(chan error, 1)}
	args = append([]string{filepath.Join(peertest.Root(), "peers", "subscriber.py"), "--listen", p.ep, "--out", p.out}, args...)
	p.cmd = exec.Command(py, args...)
	p.cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	stderr, _ := p.cmd.StderrPipe()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			p.mu.Lock()
			p.errb.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if sc.Text() == "ready" {
				once.Do(func() { close(ready) })
			}
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() { p.cmd.Process.Kill() })
	select {
	case <-ready:
	case err := <-p.done:
		t.Fatalf("python subscriber exited: %v\n%s", err, p.stderr())
	case <-time.After(30 * time.Second):
		t.Fatalf("python subscriber not ready\n%s", p.stderr())
	}
	return p
}

func (p *pyPeer) stderr() string { p.mu.Lock(); defer p.mu.Unlock(); return p.errb.String() }

func (p *pyPeer) wait(d time.Duration) error {
	select {
	case err := <-p.done:
		return err
	case <-time.After(d):
		return fmt.Errorf("still running after %v", d)
	}
}

func (p *pyPeer) records(t *testing.T) []pyRecord {
	b, err := os.ReadFile(p.out)
	if err != nil {
		t.Fatal(err)
	}
	var out []pyRecord
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r pyRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", p.out, err)
		}
		out = append(out, r)
	}
	return out
}
