//go:build cgo

package replayer

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/iceoryx2"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// These tests drive the fixture through the Go API against a controller in
// this process: a real zenoh session of its own (and real iceoryx2 for the
// log's frames), answering each state with its seq in the attachment, as a
// controller written from docs/replay.md does. One behaves, one dies, one
// stalls once for longer than the timeout, one answers on the wrong key.

// stateLog writes n states at period on a zenoh key unique to the test,
// and a frame channel (iceoryx2) at a third of the rate.
func stateLog(t *testing.T, n int, period time.Duration, frames bool) (path, stateKey, service string) {
	t.Helper()
	id := fmt.Sprintf("%d/%s/%d", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
	stateKey, service = "vrtest/"+id+"/state", "vrtest/"+id+"/camera"
	path = filepath.Join(t.TempDir(), "in.vrlog")
	w, err := logfmt.Create(path, logfmt.WriterOptions{ChunkSize: 4 << 10}) // a few chunks, for the damage tests
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := w.AddChannel(logfmt.Channel{Name: stateKey, Transport: logfmt.TransportZenoh, Topic: stateKey, Schema: codec.SchemaState,
		Meta: map[string]string{"zenoh.encoding": "application/octet-stream"}})
	var fc uint16
	if frames {
		fc, _ = w.AddChannel(logfmt.Channel{Name: service, Transport: logfmt.TransportIceoryx2, Topic: service, Schema: codec.SchemaFrame,
			Meta: frameTypes.ToMeta()})
	}
	t0, mono0 := int64(1_764_446_400_000_000_000), int64(5_000_000_000_000)
	for i := range n {
		c := t0 + int64(i)*int64(period)
		s := codec.State{Seq: uint64(i), TNs: c, Position: codec.Vec3{X: float64(i)}}
		if err := w.Write(&logfmt.Record{Channel: sc, RecvWallNs: c + 1e6, RecvMonoNs: mono0 + c - t0 + 1e6, CaptureNs: c, Seq: uint64(i),
			HasStamp: true, Payload: codec.AppendState(nil, &s)}); err != nil {
			t.Fatal(err)
		}
		if frames && i%3 == 0 {
			h := codec.NewFrameHeader(uint64(i/3), c, 1, 4, 2, codec.RGB8)
			if err := w.Write(&logfmt.Record{Channel: fc, RecvWallNs: c + 2e6, RecvMonoNs: mono0 + c - t0 + 2e6, CaptureNs: c, Seq: uint64(i / 3),
				HasStamp: true, Header: codec.AppendFrameHeader(nil, &h), Payload: make([]byte, 24)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, stateKey, service
}

// network is a zenoh session listening on a loopback port that the replay
// and the controller connect to.
func network(t *testing.T) string {
	t.Helper()
	ep := "tcp/127.0.0.1:" + strconv.Itoa(peertest.FreePort(t))
	s, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return ep
}

// behaviour says what the controller does with the state of seq: wait
// first, answer on another key, or die (close its session) instead.
type behaviour func(seq uint64) (wait time.Duration, key string, die bool)

// stallOnce answers seq at after stall, every other state after 1 ms.
func stallOnce(at uint64, stall time.Duration) behaviour {
	return func(seq uint64) (time.Duration, string, bool) {
		if seq == at {
			return stall, "", false
		}
		return time.Millisecond, "", false
	}
}

// controller runs a controller on its own zenoh session: for each state
// on stateKey, an answer (the state's seq, 8 bytes) on answerKey tagged
// with that seq, as behave says. It returns once it subscribed.
func controller(t *testing.T, ep, stateKey, answerKey string, behave behaviour) {
	t.Helper()
	controllerAnswering(t, ep, stateKey, answerKey, behave, answering{copies: 1})
}

// answering is how a controller answers: untagged (no vrlog.seq in the
// attachment), and how many copies of each answer.
type answering struct {
	untagged bool
	copies   int
}

// controllerAnswering is controller, answering as how says.
func controllerAnswering(t *testing.T, ep, stateKey, answerKey string, behave behaviour, how answering) {
	t.Helper()
	s, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(stateKey, zenoh.SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token, err := s.DeclareToken(answerKey) // the controller is here (WaitController)
	if err != nil {
		t.Fatal(err)
	}
	pubs := map[string]*zenoh.Publisher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var once sync.Once
	closeAll := func() {
		once.Do(func() {
			for _, p := range pubs {
				p.Close()
			}
			token.Close()
			sub.Close()
			s.Close()
		})
	}
	go func() {
		defer close(done)
		var buf []zenoh.Sample
		var st codec.State
		for {
			if buf, err = sub.Receive(ctx, buf[:0]); err != nil {
				return
			}
			for _, smp := range buf {
				if err := codec.DecodeStateInto(&st, smp.Payload, 0); err != nil {
					t.Errorf("controller: %v", err)
					continue
				}
				wait, key, die := behave(st.Seq)
				if die {
					closeAll()
					return
				}
				time.Sleep(wait)
				if key == "" {
					key = answerKey
				}
				p := pubs[key]
				if p == nil {
					if p, err = s.Publisher(key, zenoh.PublisherOptions{Express: true, Block: true}); err != nil {
						t.Errorf("controller: %v", err)
						return
					}
					pubs[key] = p
				}
				var tag []byte
				if !how.untagged {
					tag = codec.AppendAnswerTag(nil, st.Seq)
				}
				for range how.copies {
					if err := p.Put(binary.LittleEndian.AppendUint64(nil, st.Seq), tag); err != nil {
						t.Errorf("controller: %v", err)
					}
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done; closeAll() })
}

// lockstepConfig is the lockstep + capture replay of the tests.
func lockstepConfig(t *testing.T, ep, path, answerKey string, timeout time.Duration) Config {
	return Config{Files: []string{path}, Rate: 4, Zenoh: zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true},
		WaitSubscribers: 1, WaitTimeout: 20 * time.Second, Lockstep: answerKey, LockstepTimeout: timeout, MaxMissedInARow: DefaultMaxMissedInARow,
		Capture: []string{answerKey}, Output: filepath.Join(t.TempDir(), "response.vrlog"), Linger: 100 * time.Millisecond}
}

// run opens and runs cfg, timing the run; opened, if set, runs between
// Open and Run (the publishers exist then).
func run(t *testing.T, cfg Config, opened ...func()) (*Report, error, time.Duration) {
	t.Helper()
	r, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, f := range opened {
		f()
	}
	t0 := time.Now()
	rep, err := r.Run(context.Background())
	return rep, err, time.Since(t0)
}

// response reads a response log: each trigger's release and each answer's
// arrival (by the seq it carries) on the log's one clock, and the outcome.
func response(t *testing.T, path, stateKey string) (released, answered map[uint64]int64, out *logfmt.ReplayOutcome) {
	t.Helper()
	rd, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	names := map[uint16]string{}
	internal := map[uint16]bool{}
	for _, c := range rd.Channels() {
		names[c.ID], internal[c.ID] = c.Name, c.Transport == logfmt.TransportInternal
	}
	released, answered = map[uint64]int64{}, map[uint64]int64{}
	it := rd.Records(logfmt.Filter{})
	for it.Next() {
		r := it.Record()
		switch name := names[r.Channel]; {
		case name == stateKey:
			released[r.Seq] = r.RecvMonoNs
		case name == logfmt.OutcomeChannel:
			out = new(logfmt.ReplayOutcome)
			if err := json.Unmarshal(r.Payload, out); err != nil {
				t.Fatal(err)
			}
		case internal[r.Channel]: // the recorder's heartbeats
		default:
			seq := binary.LittleEndian.Uint64(r.Payload)
			if tag, ok := codec.ParseAnswerTag(r.Header); !ok || tag != seq {
				t.Fatalf("answer %d carries attachment %q", seq, r.Header)
			}
			if _, dup := answered[seq]; !dup {
				answered[seq] = r.RecvMonoNs
			}
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return released, answered, out
}

// A controller that keeps up: every state is answered by its own answer,
// each trigger goes out after the answer to the one before, nothing is
// late, and the response log says the replay finished with every trigger.
func TestLockstepCaptureAgainstAController(t *testing.T) {
	const n = 40
	path, stateKey, service := stateLog(t, n, 10*time.Millisecond, true)
	ep := network(t)
	answerKey := stateKey + "/cmd"
	controller(t, ep, stateKey, answerKey, func(uint64) (time.Duration, string, bool) { return 2 * time.Millisecond, "", false })
	cfg := lockstepConfig(t, ep, path, answerKey, 5*time.Second)
	var frames func() int
	rep, err, _ := run(t, cfg, func() { frames = frameSubscriber(t, service) })
	if err != nil {
		t.Fatal(err)
	}
	l := rep.Lockstep
	if l.Answered != n || l.Missed != 0 || l.Late != 0 || l.Tagged < n {
		t.Fatalf("lockstep %+v", l)
	}
	if ch := rep.Channels[1]; ch.Transport != "iceoryx2" || ch.Sent != (n+2)/3 || frames() != (n+2)/3 {
		t.Fatalf("frames %+v, %d received", ch, frames())
	}
	rel, ans, out := response(t, cfg.Output, stateKey)
	if out == nil || !out.Finished || out.Triggers != n || out.Released != n || out.Answered != n {
		t.Fatalf("outcome %+v", out)
	}
	for seq := range uint64(n) {
		if ans[seq] < rel[seq] {
			t.Fatalf("answer %d arrived before its trigger was released", seq)
		}
		if next, ok := rel[seq+1]; ok && next < ans[seq] {
			t.Fatalf("trigger %d was released before the answer to %d", seq+1, seq)
		}
	}
	a, err := analyzer.AnalyzeFiles([]string{cfg.Output}, analyzer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.ReplayIncomplete) != 0 || len(a.Reaction) != 1 || a.Reaction[0].Answered != n {
		t.Fatalf("analyze: %v %+v", a.ReplayIncomplete, a.Reaction)
	}
}

// A controller that dies mid-run: the trigger key loses its subscriber,
// the replay says so at once and fails with ErrControllerGone in far
// less than one lockstep timeout, and the response log it leaves fails
// the gate.
func TestLockstepControllerDies(t *testing.T) {
	const n, dieAt = 200, 10
	path, stateKey, _ := stateLog(t, n, 10*time.Millisecond, false)
	ep := network(t)
	answerKey := stateKey + "/cmd"
	controller(t, ep, stateKey, answerKey, func(seq uint64) (time.Duration, string, bool) { return 0, "", seq == dieAt })
	cfg := lockstepConfig(t, ep, path, answerKey, 10*time.Second)
	var warn syncBuffer
	cfg.Warn = &warn
	rep, err, took := run(t, cfg)
	if !errors.Is(err, ErrControllerGone) {
		t.Fatalf("err %v (want ErrControllerGone)\n%s", err, warn.String())
	}
	if took > 8*time.Second { // a sanity bound, not a benchmark: the timeout alone is 10 s
		t.Fatalf("took %v to notice", took)
	}
	if !strings.Contains(warn.String(), "lost its subscriber: the controller is gone") {
		t.Fatalf("stderr:\n%s", warn.String())
	}
	if l := rep.Lockstep; l.Answered != dieAt || l.Missed != 0 {
		t.Fatalf("lockstep %+v", l)
	}
	_, _, out := response(t, cfg.Output, stateKey)
	if out == nil || out.Finished || !strings.Contains(out.Reason, "lost its subscriber") || out.Triggers != n {
		t.Fatalf("outcome %+v", out)
	}
	a, err := analyzer.AnalyzeFiles([]string{cfg.Output}, analyzer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a.ApplyChecks(analyzer.Thresholds{MaxReaction: []analyzer.Limit{{Value: 1e6}}})
	if a.Pass {
		t.Fatalf("the gate passed a response log of a replay whose controller died: %+v", a.Checks)
	}
}

// A controller that stalls once for longer than the timeout: one missed
// step; its late answer arrives while the next trigger waits, is dropped
// and reported, and the next trigger is answered by its own answer, so
// the rest of the run stays paired.
func TestLockstepControllerStallsOnce(t *testing.T) {
	const n, stallAt = 30, 5
	const timeout = 300 * time.Millisecond
	path, stateKey, _ := stateLog(t, n, 10*time.Millisecond, false)
	ep := network(t)
	answerKey := stateKey + "/cmd"
	controller(t, ep, stateKey, answerKey, stallOnce(stallAt, timeout*3/2)) // the next trigger goes out at the timeout, and is answered in its own time
	cfg := lockstepConfig(t, ep, path, answerKey, timeout)
	var warn syncBuffer
	cfg.Warn = &warn
	rep, err, _ := run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, warn.String())
	}
	l := rep.Lockstep
	if l.Missed != 1 || l.Answered != n-1 || l.Late != 1 || len(l.LateAnswers) != 1 || l.LateAnswers[0] != (LateAnswer{Seq: stallAt, Current: stallAt + 1}) {
		t.Fatalf("lockstep %+v\n%s", l, warn.String())
	}
	if !strings.Contains(warn.String(), fmt.Sprintf("late answer for seq %d dropped (seq %d is the trigger now)", stallAt, stallAt+1)) ||
		!strings.Contains(warn.String(), fmt.Sprintf("seq %d within 300ms, a missed step", stallAt)) {
		t.Fatalf("stderr:\n%s", warn.String())
	}
	rel, ans, out := response(t, cfg.Output, stateKey)
	if out == nil || !out.Finished || out.Missed != 1 || out.Late != 1 {
		t.Fatalf("outcome %+v", out)
	}
	for seq := range uint64(n) {
		next, ok := rel[seq+1]
		switch {
		case !ok:
		case seq == stallAt && next >= ans[seq]:
			t.Fatalf("trigger %d waited for the stalled answer", seq+1)
		case seq != stallAt && next < ans[seq]:
			t.Fatalf("trigger %d was released before the answer to %d: the pairing shifted", seq+1, seq)
		}
	}
}

// A controller that answers on another key: nothing is ever received on
// the lockstep key; the replay warns at the first missed step and fails
// with ErrNoAnswer after DefaultMaxMissedInARow timeouts, not one per
// record.
func TestLockstepAnswersOnTheWrongKey(t *testing.T) {
	const n = 100
	const timeout = 200 * time.Millisecond
	path, stateKey, _ := stateLog(t, n, 10*time.Millisecond, false)
	ep := network(t)
	answerKey := stateKey + "/cmd"
	controller(t, ep, stateKey, answerKey, func(uint64) (time.Duration, string, bool) { return 0, stateKey + "/command", false })
	cfg := lockstepConfig(t, ep, path, answerKey, timeout)
	var warn syncBuffer
	cfg.Warn = &warn
	rep, err, took := run(t, cfg)
	if !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("err %v (want ErrNoAnswer)", err)
	}
	if took > 10*time.Second { // sanity only: one timeout per record would be 20 s
		t.Fatalf("took %v", took)
	}
	if l := rep.Lockstep; l.Missed != DefaultMaxMissedInARow || l.Answered != 0 {
		t.Fatalf("lockstep %+v", l)
	}
	if !strings.Contains(warn.String(), "nothing was received on "+answerKey+" yet") {
		t.Fatalf("stderr:\n%s", warn.String())
	}
	// MaxMissed bounds the misses in all, with the in-a-row bound off.
	cfg = lockstepConfig(t, ep, path, answerKey, 50*time.Millisecond)
	cfg.MaxMissed, cfg.MaxMissedInARow = 5, 0 // 0: no limit, as --max-missed-in-a-row 0
	rep, err, _ = run(t, cfg)
	if !errors.Is(err, ErrNoAnswer) || rep.Lockstep.Missed != 5 {
		t.Fatalf("max missed 5: %v, %+v", err, rep.Lockstep)
	}
}

// syncBuffer is a strings.Builder safe for the fixture's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// frameSubscriber subscribes to an iceoryx2 service the replay publishes
// and counts what it receives until the test ends.
func frameSubscriber(t *testing.T, service string) (received func() int) {
	t.Helper()
	node, err := iceoryx2.NewNode("vrlog-replayer-test")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := node.Subscribe(service, iceoryx2.SubscriberOptions{QueueLen: 1024})
	if err != nil {
		node.Close()
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf []iceoryx2.Sample
		for {
			buf, err = sub.Receive(ctx, buf[:0])
			mu.Lock()
			n += len(buf)
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done; sub.Close(); node.Close() })
	return func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// Frames replayed into a slow iceoryx2 subscriber (the Python peer on the
// official wheel, taking a frame every 20 ms from the service's buffer of
// 2): with BlockIceoryx each frame waits until the subscriber has room and
// it gets every one; without it, iceoryx2's safe overflow overwrites what
// it has not taken yet, and the replay cannot tell (sent counts every
// frame).
func TestFramesIntoASlowSubscriber(t *testing.T) {
	const n = 30 // states; a frame for every third
	const frames = (n + 2) / 3
	for _, block := range []bool{true, false} {
		path, _, service := stateLog(t, n, time.Millisecond, true)
		cfg := Config{Files: []string{path}, RateMax: true, WaitSubscribers: 1, WaitTimeout: 20 * time.Second, BlockIceoryx: block,
			Zenoh: zenoh.Config{Mode: zenoh.ModePeer, DisableMulticastScouting: true}, Linger: 300 * time.Millisecond,
			Channels: mustSet(t, service)}
		var peer *peertest.Peer
		rep, err, _ := run(t, cfg, func() {
			peer = peertest.Start(t, "subscriber.py", "--service", service, "--buffer", "0", "--hold", "0.02", "--frames", strconv.Itoa(frames), "--timeout", "3")
		})
		if err != nil {
			t.Fatal(err)
		}
		peer.Wait(30 * time.Second) // exit 2 when it got fewer than all: counted below
		got := func() int { return len(peertest.Records(t, peer.Log)) }
		sent := rep.Channels[0].Sent
		t.Logf("block %v: sent %d, the slow subscriber got %d", block, sent, got())
		switch {
		case sent != frames:
			t.Fatalf("block %v: sent %d of %d", block, sent, frames)
		case block && got() != frames:
			t.Fatalf("blocking: the slow subscriber got %d of %d", got(), frames)
		case !block && got() >= frames:
			t.Fatalf("without blocking the slow subscriber got all %d: the test does not reproduce the overflow", frames)
		}
	}
}

func mustSet(t *testing.T, pats ...string) *keyexpr.Set {
	s, err := keyexpr.ParseSet(pats)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A run whose context ends (SIGINT in vrlog replay) fails with
// ErrInterrupted, and the response log's outcome says "interrupted" (the
// word the docs give), not the context's error.
func TestInterruptedOutcomeSaysInterrupted(t *testing.T) {
	const n, at = 200, 10
	path, stateKey, _ := stateLog(t, n, 10*time.Millisecond, false)
	ep := network(t)
	answerKey := stateKey + "/cmd"
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	controller(t, ep, stateKey, answerKey, func(seq uint64) (time.Duration, string, bool) {
		if seq == at {
			interrupt()
		}
		return 0, "", false
	})
	cfg := lockstepConfig(t, ep, path, answerKey, 10*time.Second)
	r, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := r.Run(ctx)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v (want ErrInterrupted)", err)
	}
	_, _, out := response(t, cfg.Output, stateKey)
	if out == nil || out.Finished || out.Reason != "interrupted" || rep.Outcome.Reason != "interrupted" {
		t.Fatalf("outcome %+v (report's %+v): want reason interrupted", out, rep.Outcome)
	}
}

// The docs' library snippet (docs/replay.md, "As a Go library") on
// testdata/sample.vrlog: with the state channel selected it runs in
// lockstep with a controller on that channel; without a selection the
// wait for subscribers also waits for the log's iceoryx2 camera, which
// nothing subscribes to, and ends with ErrNoSubscribers.
func TestDocsLibrarySnippetOnTheSample(t *testing.T) {
	prefix := fmt.Sprintf("docsnippet%d", os.Getpid())
	stateKey, answerKey := prefix+"/vr/r1/state", prefix+"/vr/r1/cmd"
	ep := network(t)
	controller(t, ep, stateKey, answerKey, func(uint64) (time.Duration, string, bool) { return 0, "", false })
	states, err := keyexpr.ParseSet([]string{"vr/r1/state"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Files: []string{filepath.Join("..", "testdata", "sample.vrlog")}, Channels: states, RateMax: true, Prefix: prefix,
		Zenoh:           zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true},
		WaitSubscribers: 1, WaitTimeout: 30 * time.Second, WaitController: true,
		Lockstep: answerKey, LockstepTimeout: time.Second, MaxMissedInARow: DefaultMaxMissedInARow,
		Capture: []string{answerKey}, Output: filepath.Join(t.TempDir(), "response.vrlog"), Force: true}
	rep, err, _ := run(t, cfg)
	if err != nil || rep.Lockstep == nil || rep.Lockstep.Answered == 0 || rep.Lockstep.Missed != 0 {
		t.Fatalf("the docs' snippet with the state channel: err %v, lockstep %+v", err, rep.Lockstep)
	}
	cfg.Channels, cfg.WaitTimeout, cfg.Output = nil, time.Second, filepath.Join(t.TempDir(), "response.vrlog")
	if _, err, _ := run(t, cfg); !errors.Is(err, ErrNoSubscribers) || !strings.Contains(err.Error(), "iceoryx2") {
		t.Fatalf("without a selection: err %v (want ErrNoSubscribers naming the iceoryx2 channel)", err)
	}
}

// A recorder of the trigger keys is a matching subscriber, but not the
// controller: WaitController waits for the controller's liveliness token,
// fails after WaitTimeout without it, and starts once it comes.
func TestWaitForControllerNotARecorder(t *testing.T) {
	const n = 10
	path, stateKey, _ := stateLog(t, n, 10*time.Millisecond, false)
	ep := network(t)
	rec, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	recSub, err := rec.Subscribe("**", zenoh.SubscriberOptions{}) // a recorder of everything
	if err != nil {
		t.Fatal(err)
	}
	defer recSub.Close()
	answerKey := stateKey + "/cmd"
	cfg := lockstepConfig(t, ep, path, answerKey, time.Second)
	cfg.WaitController, cfg.WaitTimeout = true, 1500*time.Millisecond
	var warn syncBuffer
	cfg.Warn = &warn
	_, err, took := run(t, cfg)
	if !errors.Is(err, ErrNoSubscribers) || !strings.Contains(err.Error(), "no controller after 1.5s: no zenoh liveliness token on "+answerKey) || took > 5*time.Second {
		t.Fatalf("without a controller: %v after %v", err, took)
	}
	if !strings.Contains(warn.String(), "replay: waiting for the controller: a zenoh liveliness token on "+answerKey) {
		t.Fatalf("stderr %q", warn.String())
	}
	cfg = lockstepConfig(t, ep, path, answerKey, 5*time.Second)
	cfg.WaitController = true
	rep, err, _ := run(t, cfg, func() {
		time.AfterFunc(500*time.Millisecond, func() {
			controller(t, ep, stateKey, answerKey, func(uint64) (time.Duration, string, bool) { return 0, "", false })
		})
	})
	if err != nil || rep.Lockstep.Answered != n || rep.Lockstep.Missed != 0 {
		t.Fatalf("with the controller coming late: %v, %+v", err, rep)
	}
	// The controller dies while the recorder still subscribes: its token
	// goes, and the run ends at once.
	path, stateKey, _ = stateLog(t, 200, 10*time.Millisecond, false)
	answerKey = stateKey + "/cmd"
	controller(t, ep, stateKey, answerKey, func(seq uint64) (time.Duration, string, bool) { return 0, "", seq == 50 })
	cfg = lockstepConfig(t, ep, path, answerKey, 5*time.Second)
	cfg.WaitController, cfg.Rate = true, 1
	_, err, took = run(t, cfg)
	if !errors.Is(err, ErrControllerGone) || !strings.Contains(err.Error(), "liveliness token is gone") || took > 3*time.Second {
		t.Fatalf("a controller that dies beside a recorder: %v after %v", err, took)
	}
}

// A stop that lands while a lockstep step waits for its answer (vrlog ctl
// stop, SIGINT): the controller answers the trigger just released after
// the stop. The replay lingers for it, so the response log holds it; an
// answer that never comes leaves the last trigger cut, not missing.
// Either way analyze --partial-replay gates the log on what it holds (it
// failed: "1 of 47 triggers got no response").
func TestLockstepStoppedMidStep(t *testing.T) {
	const n, stopAt = 200, 46
	for _, c := range []struct {
		name      string
		answerIn  time.Duration // after the stop
		interrupt bool          // cancel the context (SIGINT) instead of Stop
		cut       bool
	}{
		{"stop, answered during the linger", 30 * time.Millisecond, false, false},
		{"SIGINT, answered during the linger", 30 * time.Millisecond, true, false},
		{"stop, never answered", 3 * time.Second, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, stateKey, _ := stateLog(t, n, 10*time.Millisecond, false)
			ep := network(t)
			answerKey := stateKey + "/cmd"
			cfg := lockstepConfig(t, ep, path, answerKey, 10*time.Second)
			cfg.Linger = 500 * time.Millisecond
			r, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ctx, interrupt := context.WithCancel(context.Background())
			defer interrupt()
			controller(t, ep, stateKey, answerKey, func(seq uint64) (time.Duration, string, bool) {
				if seq != stopAt {
					return 0, "", false
				}
				if c.interrupt {
					interrupt()
				} else {
					r.Player().Stop()
				}
				return c.answerIn, "", false
			})
			rep, err := r.Run(ctx)
			if c.interrupt != errors.Is(err, ErrInterrupted) || (!c.interrupt && err != nil) {
				t.Fatalf("err %v", err)
			}
			if l := rep.Lockstep; l.Answered != stopAt || l.Missed != 0 {
				t.Fatalf("lockstep %+v", l)
			}
			a, err := analyzer.AnalyzeFiles([]string{cfg.Output}, analyzer.Options{PartialReplay: true})
			if err != nil {
				t.Fatal(err)
			}
			x := a.Reaction[0]
			a.ApplyChecks(analyzer.Thresholds{MaxReaction: []analyzer.Limit{{Value: 5000}}})
			if x.Count != stopAt+1 || x.Missing != 0 || (x.Cut == 1) != c.cut || x.Answered != stopAt+1-x.Cut || !a.Pass {
				t.Fatalf("reaction %+v, checks %+v", x, a.Checks)
			}
		})
	}
}

// A controller that does not echo the trigger's tag and answers one step
// after the timeout: its late answer releases the next trigger, and every
// later one may be released by the answer before it. The replay cannot
// pair them, so it says so: a warning at the first, a count in the
// report (it reported every step answered, tagged 0, and nothing else).
func TestLockstepUntaggedAnswerAfterAMiss(t *testing.T) {
	const n, stallAt = 30, 5
	const timeout = 300 * time.Millisecond
	path, stateKey, _ := stateLog(t, n, 10*time.Millisecond, false)
	ep := network(t)
	answerKey := stateKey + "/cmd"
	controllerAnswering(t, ep, stateKey, answerKey, stallOnce(stallAt, timeout*13/10), answering{untagged: true, copies: 1})
	cfg := lockstepConfig(t, ep, path, answerKey, timeout)
	var warn syncBuffer
	cfg.Warn = &warn
	rep, err, _ := run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, warn.String())
	}
	l := rep.Lockstep
	if l.Missed < 1 || l.Tagged != 0 || l.UntaggedAfterMiss != l.Answered-stallAt { // every answer after the miss (a loaded machine may miss another)
		t.Fatalf("lockstep %+v\n%s", l, warn.String())
	}
	if strings.Count(warn.String(), "was released by an untagged answer after seq 5 missed") != 1 {
		t.Fatalf("stderr:\n%s", warn.String())
	}
	// A tagged controller with the same stall: nothing unsure.
	path, stateKey, _ = stateLog(t, n, 10*time.Millisecond, false)
	answerKey = stateKey + "/cmd"
	controller(t, ep, stateKey, answerKey, stallOnce(stallAt, timeout*13/10))
	cfg = lockstepConfig(t, ep, path, answerKey, timeout)
	if rep, err, _ = run(t, cfg); err != nil || rep.Lockstep.UntaggedAfterMiss != 0 || rep.Lockstep.Late != 1 {
		t.Fatalf("tagged: %v %+v", err, rep.Lockstep)
	}
}

// A controller that answers twice per trigger: every second answer is a
// duplicate, counted as one, never as late (two identical runs reported
// 67 and 26 late answers, the rest dropped without a word).
func TestLockstepDuplicateAnswers(t *testing.T) {
	const n = 40
	path, stateKey, _ := stateLog(t, n, 10*time.Millisecond, false)
	ep := network(t)
	answerKey := stateKey + "/cmd"
	controllerAnswering(t, ep, stateKey, answerKey, func(uint64) (time.Duration, string, bool) { return 0, "", false }, answering{copies: 2})
	cfg := lockstepConfig(t, ep, path, answerKey, 5*time.Second)
	cfg.Linger = 300 * time.Millisecond
	var warn syncBuffer
	cfg.Warn = &warn
	rep, err, _ := run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, warn.String())
	}
	// The last trigger's second answer may come after the run ended.
	if l := rep.Lockstep; l.Answered != n || l.Missed != 0 || l.Late != 0 || l.Duplicates < n-1 || l.Duplicates > n {
		t.Fatalf("lockstep %+v\n%s", l, warn.String())
	}
	if strings.Contains(warn.String(), "late answer") || strings.Count(warn.String(), "answered again") != 1 {
		t.Fatalf("stderr:\n%s", warn.String())
	}
}

// corruptMiddle writes a copy of the log at path with a bit flipped in its
// middle chunk's record metadata (its CRC fails), and returns it.
func corruptMiddle(t *testing.T, path string) string {
	t.Helper()
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	chunks := r.Chunks()
	r.Close()
	if len(chunks) < 3 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mid := chunks[len(chunks)/2]
	b[mid.Offset+mid.Size()-int64(mid.DataLen)-1] ^= 0x40
	out := filepath.Join(t.TempDir(), "corrupt.vrlog")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// A replay that met a corrupt chunk stopped there, and one --tolerant
// played around it: either way the outcome's triggers are the window's
// (200), not the ones released before the damage (it said 137), and the
// damage is listed once (--tolerant said the skipped chunk twice).
func TestOutcomeOfADamagedLog(t *testing.T) {
	const n = 200
	path, stateKey, _ := stateLog(t, n, 10*time.Millisecond, false)
	bad := corruptMiddle(t, path)
	ep := network(t)
	answerKey := stateKey + "/cmd"
	controller(t, ep, stateKey, answerKey, func(uint64) (time.Duration, string, bool) { return 0, "", false })
	for _, tolerant := range []bool{false, true} {
		cfg := lockstepConfig(t, ep, bad, answerKey, 5*time.Second)
		cfg.RateMax, cfg.Tolerant = true, tolerant
		rep, err, _ := run(t, cfg)
		if tolerant != (err == nil) || (!tolerant && !errors.Is(err, ErrInput)) {
			t.Fatalf("tolerant %v: err %v", tolerant, err)
		}
		o := rep.Outcome
		if o.Finished || o.Triggers != n || o.Released == 0 || o.Released >= n {
			t.Fatalf("tolerant %v: outcome %+v", tolerant, o)
		}
		if tolerant && len(rep.SkippedChunks) != 1 {
			t.Fatalf("skipped chunks %q", rep.SkippedChunks)
		}
	}
}
