//go:build cgo

package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/controller"
	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/replayctl"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// The replay as a test fixture for a controller (docs/replay.md), over
// real zenoh sessions and iceoryx2 services started by each test.

// replayAsync runs the command in the background.
func replayAsync(t *testing.T, args ...string) <-chan replayResult {
	t.Helper()
	ch := make(chan replayResult, 1)
	go func() { ch <- runReplay(t, args...) }()
	return ch
}

func waitResult(t *testing.T, ch <-chan replayResult, d time.Duration) replayResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(d):
		t.Fatalf("the replay did not finish within %v", d)
	}
	return replayResult{}
}

// --wait-for-subscribers: without subscribers, --wait-timeout ends the
// replay with exit 3 naming every channel still unmatched, having
// published nothing.
func TestWaitTimesOut(t *testing.T) {
	f := writeLog(t, 200*time.Millisecond)
	zp := newZenohPeer(t)
	t0 := time.Now()
	r := runReplay(t, "--json", "--quiet", "--no-multicast", "--connect", zp.ep, "--wait-for-subscribers", "1", "--wait-timeout", "1500ms", f.path)
	if r.code != cliutil.ExitRuntime {
		t.Fatalf("exit %d, want 3\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if d := time.Since(t0); d < 1500*time.Millisecond {
		t.Fatalf("gave up after %v", d)
	}
	for _, want := range []string{"--wait-for-subscribers: no subscribers after 1.5s on 3 channel(s)", f.stateKey + " (zenoh: no matching subscriber)",
		f.rawKey + " (zenoh: no matching subscriber)", f.service + " (iceoryx2: 0 of 1 subscribers)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.rep.Total.Sent != 0 || r.rep.WaitedS == nil || *r.rep.WaitedS < 1.5 {
		t.Fatalf("summary: sent %d, waited %v", r.rep.Total.Sent, r.rep.WaitedS)
	}
}

// --wait-for-subscribers starts on subscribers that come late, one by one
// (zenoh keys, then an iceoryx2 service wanting 2), and they get every
// record from the first.
func TestWaitStartsOnLateSubscribers(t *testing.T) {
	f := writeLog(t, 500*time.Millisecond)
	zp := newZenohPeer(t)
	res := replayAsync(t, "--json", "--no-multicast", "--connect", zp.ep, "--wait-for-subscribers", "2", "--linger", "500ms", f.path)
	time.Sleep(time.Second)
	states, stopS := zenohCollect(t, zp, f.stateKey)
	raws, stopR := zenohCollect(t, zp, f.rawKey)
	frames, stopF := iceoryxCollect(t, f.service)
	time.Sleep(time.Second)
	select {
	case r := <-res:
		t.Fatalf("started with one of two iceoryx2 subscribers: exit %d\n%s", r.code, r.stderr)
	default:
	}
	frames2, stopF2 := iceoryxCollect(t, f.service)
	r := waitResult(t, res, 30*time.Second)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	waitCount(t, func() int { return len(states.items()) }, len(f.states))
	waitCount(t, func() int { return len(raws.items()) }, len(f.raw))
	waitCount(t, func() int { return len(frames.items()) }, len(f.frames))
	waitCount(t, func() int { return len(frames2.items()) }, len(f.frames))
	stopS()
	stopR()
	stopF()
	stopF2()
	if !bytes.Equal(states.items()[0].Payload, f.states[0].Payload) {
		t.Fatal("the first state is not the log's first")
	}
	if r.rep.WaitedS == nil || *r.rep.WaitedS < 1.5 {
		t.Fatalf("waited %v", *r.rep.WaitedS)
	}
	for _, want := range []string{"waiting for subscribers on", "(iceoryx2: 1 of 2 subscribers)", "every channel has its subscribers"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// send sends a control command, retrying while the queryable's
// declaration has not reached the client yet.
func send(t *testing.T, s *zenoh.Session, name, cmd string) replayctl.Status {
	t.Helper()
	for end := time.Now().Add(15 * time.Second); ; {
		st, err := replayctl.Send(context.Background(), s, name, cmd, 2*time.Second)
		if err == nil {
			return st
		}
		if !errors.Is(err, replayctl.ErrNoReplay) || time.Now().After(end) {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
}

// Remote control: --start-paused off a terminal waits for the control
// channel; step, seek and rate move the position exactly as asked, and the
// subscriber gets exactly the records they say.
func TestControlChannelMovesThePosition(t *testing.T) {
	f := writeLog(t, 1500*time.Millisecond)
	zp := newZenohPeer(t)
	states, stop := zenohCollect(t, zp, f.stateKey)
	res := replayAsync(t, "--json", "--quiet", "--no-multicast", "--connect", zp.ep, "--channel", f.stateKey, "--start-paused",
		"--wait-for-subscribers", "1", "--control", "ctltest", "--linger", "300ms", f.path)
	pos := func(i int) int64 { return f.states[i].RecvMonoNs - f.logStartMon }
	first := func(at time.Duration) int { // the first state at or after a position
		for i := range f.states {
			if pos(i) >= int64(at) {
				return i
			}
		}
		return len(f.states)
	}
	if st := send(t, zp.s, "ctltest", "status"); st.Sent != 0 || (st.State != replayctl.StatePaused && st.State != replayctl.StateWaiting) {
		t.Fatalf("status: %+v", st)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(states.items()); n != 0 {
		t.Fatalf("%d states published while paused", n)
	}
	want := []int{0, 1, 2}
	if st := send(t, zp.s, "ctltest", "step 3"); st.Sent != 3 || st.PositionNs != pos(2) || st.State != replayctl.StatePaused {
		t.Fatalf("step 3: %+v, want position %d", st, pos(2))
	}
	if st := send(t, zp.s, "ctltest", "seek 1"); st.PositionNs != 1e9 || st.Sent != 3 {
		t.Fatalf("seek 1: %+v", st)
	}
	i := first(time.Second)
	want = append(want, i, i+1)
	if st := send(t, zp.s, "ctltest", "step 2"); st.PositionNs != pos(i+1) || st.Sent != 5 {
		t.Fatalf("step 2 after seek: %+v, want position %d", st, pos(i+1))
	}
	if st := send(t, zp.s, "ctltest", "seek 0.2"); st.PositionNs != 2e8 {
		t.Fatalf("seek back: %+v", st)
	}
	j := first(200 * time.Millisecond)
	want = append(want, j)
	if st := send(t, zp.s, "ctltest", "step"); st.PositionNs != pos(j) {
		t.Fatalf("step after seeking back: %+v", st)
	}
	waitCount(t, func() int { return len(states.items()) }, len(want))
	if st := send(t, zp.s, "ctltest", "rate 4"); st.Rate != 4 {
		t.Fatalf("rate: %+v", st)
	}
	// The machine's noise while the rest plays at 4×, through zenoh too.
	probe := pacedProbe(t, zp, f.stateKey+"/probe", time.Second/stateHz/4)
	send(t, zp.s, "ctltest", "resume")
	for k := j + 1; k < len(f.states); k++ {
		want = append(want, k)
	}
	r := waitResult(t, res, 30*time.Second)
	noise := probe()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	waitCount(t, func() int { return len(states.items()) }, len(want))
	stop()
	got := states.items()
	for k, i := range want {
		if !bytes.Equal(got[k].Payload, f.states[i].Payload) {
			t.Fatalf("received %d: seq %d, want the log's state %d", k, seqOf(t, got[k]), i)
		}
	}
	// After the resume at 4×: arrivals a quarter of the recorded gaps apart.
	orig := monos(f.states[j+1:], func(x logfmt.Record) int64 { return x.RecvMonoNs / 4 })
	checkDeltas(t, "at rate 4", orig, monos(got[len(want)-len(orig):], func(x zenoh.Sample) int64 { return x.RecvMonoNs }),
		r.rep.Total.TimingError, noise)
	if c := r.rep.Total; c.Steps != 6 || c.Sent != uint64(len(want)) {
		t.Fatalf("summary: %d sent, %d stepped", c.Sent, c.Steps)
	}
	if r.rep.Control == nil || *r.rep.Control != "ctltest" {
		t.Fatalf("summary control %v", r.rep.Control)
	}
}

// clockMsg is one received clock message.
type clockMsg struct {
	c    codec.ReplayClock
	recv int64
}

func clockMsgs(t *testing.T, ss []zenoh.Sample) []clockMsg {
	t.Helper()
	var out []clockMsg
	for _, s := range ss {
		c, err := codec.DecodeReplayClock(s.Payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, clockMsg{c, s.RecvMonoNs})
	}
	return out
}

// The published clock matches the schedule: with every record, the
// record's own log time (the recorder's receive wall clock), before it;
// its ticks, the log time the schedule maps their moment to (against the
// states' arrivals), advancing while playing, frozen while paused.
func TestClockMatchesTheSchedule(t *testing.T) {
	f := writeLog(t, time.Second)
	zp := newZenohPeer(t)
	key := "vrtest/clock/" + filepath.Base(filepath.Dir(f.path))
	clocks, stopC := zenohCollect(t, zp, key)
	states, stopS := zenohCollect(t, zp, f.stateKey)
	r := runReplay(t, "--json", "--quiet", "--no-multicast", "--connect", zp.ep, "--channel", f.stateKey, "--wait-for-subscribers", "1",
		"--delay", "300ms", "--clock-key", key, "--clock-rate", "200", "--clock-per-record", "--linger", "500ms", f.path)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	waitCount(t, func() int { return len(states.items()) }, len(f.states))
	time.Sleep(100 * time.Millisecond)
	stopC()
	stopS()
	msgs := clockMsgs(t, clocks.items())
	var recs, ticks []clockMsg
	for i, m := range msgs {
		if i > 0 && m.c.Seq <= msgs[i-1].c.Seq {
			t.Fatalf("clock seq %d after %d", m.c.Seq, msgs[i-1].c.Seq)
		}
		if m.c.Capture || m.c.Restamped {
			t.Fatalf("flags %+v", m.c)
		}
		if m.c.Record {
			recs = append(recs, m)
		} else {
			ticks = append(ticks, m)
		}
	}
	if len(recs) != len(f.states) {
		t.Fatalf("%d clock messages with records, %d records", len(recs), len(f.states))
	}
	for i, m := range recs {
		if m.c.LogTimeNs != f.states[i].RecvWallNs || m.c.PositionNs != f.states[i].RecvMonoNs-f.logStartMon || !m.c.Running || m.c.Rate != 1 {
			t.Fatalf("clock with record %d: %+v, want log time %d", i, m.c, f.states[i].RecvWallNs)
		}
	}
	// Each tick reads the log time the schedule maps its moment to: in seq
	// order (the order the clock was read), at or after the record before
	// it and before the record after it, unless that one was late (by at
	// most the replay's own timing error). Before the schedule starts (the
	// delay) it reads the window's start, standing still.
	// (The lateness is measured a few µs before the record's clock message
	// is read: 2 ms cover that and the reading's own cost on a loaded machine.)
	slack := r.rep.Total.TimingError.Max + int64(2*time.Millisecond)
	k, playing := 0, 0
	for _, m := range msgs {
		if m.c.Record {
			k++
			continue
		}
		switch {
		case k == 0 && !m.c.Running:
			if m.c.PositionNs != 0 || m.c.LogTimeNs != f.states[0].RecvWallNs-(f.states[0].RecvMonoNs-f.logStartMon) {
				t.Fatalf("tick before the first record: %+v", m.c)
			}
		case k == 0: // the schedule started; the first record is due (late by at most the slack)
			if m.c.LogTimeNs > recs[0].c.LogTimeNs+slack {
				t.Fatalf("tick %d reads %d, ahead of the first record at %d (slack %v)", m.c.Seq, m.c.LogTimeNs, recs[0].c.LogTimeNs, time.Duration(slack))
			}
		case !m.c.Running:
		default:
			playing++
			lo, hi := recs[k-1].c.LogTimeNs, recs[k-1].c.LogTimeNs+int64(100*time.Millisecond)
			if k < len(recs) {
				hi = recs[k].c.LogTimeNs
			}
			if m.c.LogTimeNs < lo || m.c.LogTimeNs > hi+slack {
				t.Fatalf("tick %d reads %d, between records at %d and %d (slack %v)", m.c.Seq, m.c.LogTimeNs, lo, hi, time.Duration(slack))
			}
		}
	}
	if playing < 40 { // 200 at 200 Hz for 1 s; a loaded machine loses ticks (Go's ticker drops what it could not deliver)
		t.Fatalf("%d ticks while playing", playing)
	}
	t.Logf("%d ticks while playing, each between its records (slack %v)", playing, time.Duration(slack))
	last := ticks[len(ticks)-1].c
	if last.Running || last.LogTimeNs != f.states[len(f.states)-1].RecvWallNs {
		t.Fatalf("the last tick (after the end) %+v", last)
	}
}

// On the capture clock with --restamp, the clock is the restamped t_ns of
// the records it goes with.
func TestClockRestampedCapture(t *testing.T) {
	f := writeLog(t, 300*time.Millisecond)
	zp := newZenohPeer(t)
	key := "vrtest/clock/" + filepath.Base(filepath.Dir(f.path))
	clocks, stopC := zenohCollect(t, zp, key)
	states, stopS := zenohCollect(t, zp, f.stateKey)
	r := runReplay(t, "--json", "--quiet", "--no-multicast", "--connect", zp.ep, "--channel", f.stateKey, "--wait-for-subscribers", "1",
		"--clock", "capture", "--restamp", "--clock-key", key, "--clock-rate", "0", "--clock-per-record", "--linger", "300ms", f.path)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	waitCount(t, func() int { return len(states.items()) }, len(f.states))
	waitCount(t, func() int { return len(clocks.items()) }, len(f.states))
	stopC()
	stopS()
	for i, m := range clockMsgs(t, clocks.items()) {
		_, tns, err := codec.StateStamp(states.items()[i].Payload)
		if err != nil {
			t.Fatal(err)
		}
		if !m.c.Capture || !m.c.Restamped || !m.c.Record || m.c.LogTimeNs != tns || tns != f.states[i].CaptureNs+*r.rep.RestampDeltaNs {
			t.Fatalf("clock %d: %+v, restamped t_ns %d", i, m.c, tns)
		}
	}
}

// commands collects the controller's commands.
func commands(t *testing.T, ss []zenoh.Sample) []controller.Command {
	t.Helper()
	var out []controller.Command
	for _, s := range ss {
		c, err := controller.DecodeCommand(s.Payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// runController runs the example controller on its own session until the
// test ends.
func runController(t *testing.T, ep, stateKey, cmdKey string, delay time.Duration) {
	t.Helper()
	s, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := controller.Run(ctx, s, controller.Config{StateKey: stateKey, CommandKey: cmdKey, Kp: 2, Kd: 0.5, Smooth: 0.5, Delay: delay}); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done; s.Close() })
}

// Lockstep into the example controller at 4× a 200 Hz log (records 1.25
// ms apart, the controller taking 5 ms): every state is answered, one
// command per state in order, and no state is released before the answer
// to the one before.
func TestLockstepAnswersEveryState(t *testing.T) {
	f := writeLog(t, 500*time.Millisecond)
	zp := newZenohPeer(t)
	cmdKey := f.stateKey + "/cmd"
	cmds, stop := zenohCollect(t, zp, cmdKey)
	runController(t, zp.ep, f.stateKey, cmdKey, 5*time.Millisecond)
	r := runReplay(t, "--json", "--quiet", "--no-multicast", "--connect", zp.ep, "--channel", f.stateKey, "--wait-for-subscribers", "1", "--rate", "4",
		"--lockstep", cmdKey, "--lockstep-timeout", "2s", "--linger", "300ms", f.path)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	waitCount(t, func() int { return len(cmds.items()) }, len(f.states))
	stop()
	for i, c := range commands(t, cmds.items()) {
		if c.Seq != uint64(i) || c.StateSeq != uint64(i) || c.StateTNs != f.states[i].CaptureNs {
			t.Fatalf("command %d answers state %d (seq %d)", i, c.StateSeq, c.Seq)
		}
	}
	l := r.rep.Lockstep
	if l == nil || l.Answered != uint64(len(f.states)) || l.Missed != 0 || len(l.Triggers) != 1 || l.Triggers[0] != f.stateKey {
		t.Fatalf("lockstep %+v", l)
	}
	// The log's 500 ms at 4× is 125 ms; a 5 ms answer per state holds it
	// to at least 100 × 5 ms.
	if min := float64(len(f.states)) * 0.005; r.rep.ElapsedS < min {
		t.Fatalf("took %.3f s, less than the controller's %.3f s", r.rep.ElapsedS, min)
	}
}

// Without an answer, each trigger is released after the timeout and
// counted as a missed step; three in a row (the default bound) end the
// run, and no answer at all is a failed check (exit 1), so a lockstep run
// against a controller that never ran does not pass, in three timeouts;
// --max-missed-in-a-row 0 lifts the bound.
func TestLockstepMissedSteps(t *testing.T) {
	f := writeLog(t, 50*time.Millisecond) // 10 states
	zp := newZenohPeer(t)
	r := runReplay(t, "--json", "--quiet", "--no-multicast", "--connect", zp.ep, "--channel", f.stateKey,
		"--lockstep", f.stateKey+"/nobody", "--lockstep-timeout", "50ms", "--linger", "0s", f.path)
	if r.code != 1 || !strings.Contains(r.stderr, "--lockstep "+f.stateKey+"/nobody: no answer at all: 3 trigger records in a row went out unanswered after the 50ms timeout") {
		t.Fatalf("exit %d (want 1)\n%s", r.code, r.stderr)
	}
	if l := r.rep.Lockstep; l.Missed != 3 || l.Answered != 0 || r.rep.Channels[0].Missed != l.Missed {
		t.Fatalf("lockstep %+v", l)
	}
	if !strings.Contains(runReplay(t, "--quiet", "--no-multicast", "--channel", f.stateKey, "--lockstep", "nobody", "--lockstep-timeout", "10ms",
		"--max-missed-in-a-row", "0", "--linger", "0s", f.path).stdout, "0 trigger records answered, 10 missed") {
		t.Fatal("the text summary does not report the missed steps")
	}
}

// --capture records the controller's commands with the released states in
// one log on one clock; analyze reports the reaction the controller was
// told to add: never less, and close to it (load only adds).
func TestCaptureReaction(t *testing.T) {
	f := writeLog(t, time.Second)
	zp := newZenohPeer(t)
	cmdKey := f.stateKey + "/cmd"
	const delay = 20 * time.Millisecond
	runController(t, zp.ep, f.stateKey, cmdKey, delay)
	out := filepath.Join(t.TempDir(), "response.vrlog")
	// In lockstep (the answers taken from the capture itself): a
	// controller slowed by the machine's load still answers every state
	// in its own window.
	r := runReplay(t, "--json", "--quiet", "--no-multicast", "--connect", zp.ep, "--channel", f.stateKey, "--wait-for-subscribers", "1",
		"--lockstep", cmdKey, "--capture", cmdKey, "-o", out, "--linger", "300ms", "--duration", "0.3", f.path)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	n := int(r.channel(t, f.stateKey).Sent)
	c := r.rep.Capture
	if c == nil || len(c.Missed) != 0 || len(c.Channels) != 2 || c.Channels[0].Role != "trigger" || c.Channels[0].Records != uint64(n) ||
		c.Channels[1].Role != "response" || c.Channels[1].Records != uint64(n) {
		t.Fatalf("capture %+v", c)
	}
	recs, rd := readAll(t, out)
	for i, rec := range recs[f.stateKey] {
		if !bytes.Equal(rec.Payload, f.states[i].Payload) || !rec.HasStamp || rec.Seq != uint64(i) {
			t.Fatalf("released record %d differs", i)
		}
	}
	for _, ch := range rd.Channels() {
		if ch.Name == f.stateKey && (ch.Meta[logfmt.MetaTrigger] != "1" || ch.Meta["zenoh.encoding"] != "application/octet-stream") {
			t.Fatalf("trigger channel meta %v", ch.Meta)
		}
	}
	rep, err := analyzer.AnalyzeFiles([]string{out}, analyzer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Reaction) != 1 {
		t.Fatalf("%+v", rep.Reaction)
	}
	x := rep.Reaction[0]
	t.Logf("reaction: %+v", x.LatencyMs)
	ms := float64(delay) / 1e6
	if x.Count != uint64(n) || x.Answered != uint64(n) || x.Missing != 0 || x.LatencyMs.Min < ms || x.LatencyMs.P50 > ms+25 {
		t.Fatalf("reaction %+v: want %d answered, latency from %v ms", x, n, ms)
	}

	// The log exists: refused without --force; with it, a replay that no
	// controller answers captured nothing (exit 1, the log kept).
	if r := runReplay(t, "--quiet", "--no-multicast", "--capture", cmdKey, "-o", out, f.path); r.code != cliutil.ExitUsage ||
		!strings.Contains(r.stderr, "--force") {
		t.Fatalf("existing -o: exit %d %s", r.code, r.stderr)
	}
	r = runReplay(t, "--json", "--quiet", "--no-multicast", "--capture", "nobody/**", "-o", out, "--force", "--duration", "0.1", "--linger", "0s", f.path)
	if r.code != cliutil.ExitCheckFailed || !strings.Contains(r.stderr, "--capture captured nothing on nobody/**") || len(r.rep.Capture.Missed) != 1 {
		t.Fatalf("captured nothing: exit %d %s", r.code, r.stderr)
	}
	if recs, _ := readAll(t, out); len(recs[f.stateKey]) == 0 {
		t.Fatal("the response log lost its released records")
	}
}

// readAll reads a log's records by channel name.
func readAll(t *testing.T, path string) (map[string][]logfmt.Record, *logfmt.Reader) {
	t.Helper()
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	names := map[uint16]string{}
	for _, c := range r.Channels() {
		names[c.ID] = c.Name
	}
	out := map[string][]logfmt.Record{}
	it := r.Records(logfmt.Filter{})
	for it.Next() {
		rec := *it.Record()
		rec.Payload, rec.Header = slices.Clone(rec.Payload), slices.Clone(rec.Header)
		out[names[rec.Channel]] = append(out[names[rec.Channel]], rec)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out, r
}

// Any zenoh client: the Python peer (written from the docs, on the
// official wheel) decodes the replay's clock and drives it with plain
// queries, the command as payload and as selector parameters.
func TestPythonPeerControlsAndReadsTheClock(t *testing.T) {
	f := writeLog(t, time.Second)
	ep := "tcp/127.0.0.1:" + strconv.Itoa(freePort(t))
	name := "py" + strconv.Itoa(os.Getpid())
	key := "vrtest/clock/" + filepath.Base(filepath.Dir(f.path))
	py := peertest.Start(t, "replay_client.py", "--listen", ep, "--control", name, "--clock-key", key, "--after", "1.5",
		"--command", "step 3", "--command", "?seek=0.5", "--command", "jump", "--command", "rate 2", "--command", "resume")
	r := runReplay(t, "--json", "--quiet", "--connect", ep, "--no-multicast", "--channel", f.stateKey, "--start-paused",
		"--control", name, "--clock-key", key, "--clock-rate", "50", "--linger", "500ms", f.path)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if err := py.Wait(30 * time.Second); err != nil {
		t.Fatalf("peer: %v\n%s", err, py.Stderr())
	}
	b, _ := os.ReadFile(py.Log)
	type line struct {
		Clock   *codec.ReplayClock `json:"clock"`
		Command string             `json:"command"`
		Status  *replayctl.Status  `json:"status"`
		Error   string             `json:"error"`
	}
	var clocks []codec.ReplayClock
	replies := map[string]line{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var x line
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if x.Clock != nil {
			clocks = append(clocks, *x.Clock)
		} else {
			replies[x.Command] = x
		}
	}
	pos2 := f.states[2].RecvMonoNs - f.logStartMon
	if s := replies["step 3"].Status; s == nil || s.Sent != 3 || s.PositionNs != pos2 {
		t.Fatalf("step 3: %+v", replies["step 3"])
	}
	if s := replies["?seek=0.5"].Status; s == nil || s.PositionNs != 5e8 {
		t.Fatalf("?seek=0.5: %+v", replies["?seek=0.5"])
	}
	if x := replies["jump"]; x.Status != nil || !strings.Contains(x.Error, "unknown") {
		t.Fatalf("jump: %+v", x)
	}
	if s := replies["rate 2"].Status; s == nil || s.Rate != 2 {
		t.Fatalf("rate 2: %+v", replies["rate 2"])
	}
	// The clock as the peer decoded it: the window's start while paused,
	// the stepped record's time, the seek's target, then running at 2×.
	var sawStart, sawStep, sawSeek, sawRunning bool
	for i, c := range clocks {
		if i > 0 && c.Seq != clocks[i-1].Seq+1 {
			t.Fatalf("clock seq %d after %d", c.Seq, clocks[i-1].Seq)
		}
		switch {
		case c.Running:
			sawRunning = sawRunning || c.Rate == 2
		case c.PositionNs == 0 && c.LogTimeNs == f.states[0].RecvWallNs-(f.states[0].RecvMonoNs-f.logStartMon):
			sawStart = true
		case c.PositionNs == pos2 && c.LogTimeNs == f.states[2].RecvWallNs:
			sawStep = true
		case c.PositionNs == 5e8:
			sawSeek = true
		}
	}
	if !sawStart || !sawStep || !sawSeek || !sawRunning {
		t.Fatalf("clock: start %v, step %v, seek %v, running at 2× %v (%d messages)", sawStart, sawStep, sawSeek, sawRunning, len(clocks))
	}
}
