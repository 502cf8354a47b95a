package player

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// seekSource is a sliceSource that can start a pass at a key.
type seekSource struct{ sliceSource }

func (s *seekSource) PassFrom(ctx context.Context, from int64, emit func(*Rec) bool) error {
	for i := range s.recs {
		if s.recs[i].Key >= from && !emit(&s.recs[i]) {
			return nil
		}
	}
	return nil
}

// started runs p in the background; wait returns its summary.
func started(t *testing.T, p *Player) (wait func() *Summary) {
	t.Helper()
	done := make(chan *Summary, 1)
	go func() {
		s, err := p.Run(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	return func() *Summary { return <-done }
}

func do(t *testing.T, p *Player, r Request) Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := p.Do(ctx, r)
	if err != nil {
		t.Fatalf("%+v: %v", r, err)
	}
	return st
}

func (s *recSink) keys(recs []Rec) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for _, c := range s.calls {
		for _, r := range recs { // payloads are unique per record
			if string(r.Payload) == string(c.payload) && r.Channel == c.ch {
				out = append(out, r.Key)
				break
			}
		}
	}
	return out
}

// Step, seek and rate requests move the position exactly as asked: a step
// of N publishes the next N records and answers with the last one's
// position; a seek moves the position to its target and the next record is
// the first at or after it, forwards and backwards.
func TestControlStepSeekRate(t *testing.T) {
	recs := states(100, 10*time.Millisecond, false) // 1 s of log
	origin := recs[0].Key
	now := monoClock()
	sink := &recSink{now: now}
	p, err := New(&seekSource{sliceSource{recs: recs}}, sink, Options{Loops: 1, StartPaused: true, Channels: chans, Now: now,
		Origin: origin, Length: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	wait := started(t, p)
	pos := func(i int) time.Duration { return time.Duration(recs[i].Key - origin) }

	if st := do(t, p, Request{Op: OpStep, N: 3}); st.Sent != 3 || st.Position != pos(2) || !st.Paused || st.Steps != 3 {
		t.Fatalf("step 3: %+v", st)
	}
	if st := do(t, p, Request{Op: OpSeek, At: 505 * time.Millisecond}); st.Position != 505*time.Millisecond || st.Sent != 3 {
		t.Fatalf("seek: %+v", st)
	}
	if lt := p.LogTime(now()); lt.Running || lt.Key != origin+int64(505*time.Millisecond) {
		t.Fatalf("log time after the seek: %+v", lt)
	}
	if st := do(t, p, Request{Op: OpStep, N: 2}); st.Position != pos(52) || st.Sent != 5 {
		t.Fatalf("step after seek: %+v (want position %v)", st, pos(52))
	}
	if st := do(t, p, Request{Op: OpSeek, At: 100 * time.Millisecond}); st.Position != 100*time.Millisecond {
		t.Fatalf("seek back: %+v", st)
	}
	if st := do(t, p, Request{Op: OpStep, N: 1}); st.Position != pos(10) {
		t.Fatalf("step after seeking back: %+v", st)
	}
	if st := do(t, p, Request{Op: OpRate, Rate: 4}); st.Rate != 4 {
		t.Fatalf("rate: %+v", st)
	}
	if st := do(t, p, Request{Op: OpSeek, At: 900 * time.Millisecond}); st.Position != 900*time.Millisecond {
		t.Fatalf("seek: %+v", st)
	}
	if st := do(t, p, Request{Op: OpResume}); st.Paused {
		t.Fatalf("resume: %+v", st)
	}
	s := wait()
	want := []int64{recs[0].Key, recs[1].Key, recs[2].Key, recs[51].Key, recs[52].Key, recs[10].Key}
	for i := 90; i < 100; i++ {
		want = append(want, recs[i].Key)
	}
	got := sink.keys(recs)
	if len(got) != len(want) {
		t.Fatalf("published %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d: key +%v, want +%v", i, time.Duration(got[i]-origin), time.Duration(want[i]-origin))
		}
	}
	if s.Channels[0].Steps != 6 || s.Channels[0].Sent != 16 {
		t.Fatalf("stats %+v", s.Channels[0])
	}
	if _, err := p.Do(context.Background(), Request{Op: OpPause}); !errors.Is(err, ErrFinished) {
		t.Fatalf("after the end: %v", err)
	}
	if !p.Status().Finished {
		t.Fatal("status not finished")
	}
}

// Requests the player cannot carry out are refused before they reach it.
func TestControlRefusesBadRequests(t *testing.T) {
	recs := states(10, time.Millisecond, false)
	p, _ := New(&sliceSource{recs: recs}, SinkFunc(func(*Rec) error { return nil }), Options{Channels: chans, Length: time.Second})
	for _, r := range []Request{{Op: OpStep}, {Op: OpSeek, At: time.Millisecond}, {Op: OpRate, Rate: -1}} {
		if _, err := p.Do(context.Background(), r); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%+v: %v", r, err)
		}
	}
	p, _ = New(&seekSource{sliceSource{recs: recs}}, SinkFunc(func(*Rec) error { return nil }), Options{Channels: chans, Length: time.Second, RateMax: true})
	for _, r := range []Request{{Op: OpSeek, At: 2 * time.Second}, {Op: OpSeek, At: -1}, {Op: OpRate, Rate: 2}} {
		if _, err := p.Do(context.Background(), r); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

// A step past the end is answered when the replay ends.
func TestControlStepPastTheEnd(t *testing.T) {
	recs := states(5, time.Millisecond, false)
	p, _ := New(&sliceSource{recs: recs}, SinkFunc(func(*Rec) error { return nil }), Options{Loops: 1, Channels: chans, StartPaused: true})
	wait := started(t, p)
	st := do(t, p, Request{Op: OpStep, N: 50})
	if st.Sent != 5 || !st.Finished {
		t.Fatalf("%+v", st)
	}
	wait()
}

// answerer stands in for a controller: it answers each published trigger
// record after delay (not a mock of a transport: the player's lockstep
// contract is a channel of answers).
type answerer struct {
	now     func() int64
	delay   time.Duration
	skip    func(i int) bool // no answer to the i-th trigger
	answers chan Answer
	mu      sync.Mutex
	calls   []call
	answer  []int64 // when each answer was sent
	n       int
	wg      sync.WaitGroup
}

func (a *answerer) Publish(r *Rec) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, call{at: a.now(), ch: r.Channel, payload: append([]byte(nil), r.Payload...)})
	if r.Channel != 0 {
		return nil
	}
	i := a.n
	a.n++
	if a.skip != nil && a.skip(i) {
		return nil
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		time.Sleep(a.delay)
		a.mu.Lock()
		a.answer = append(a.answer, a.now())
		a.mu.Unlock()
		a.answers <- Answer{}
	}()
	return nil
}

// Lockstep releases each trigger record only after the answer to the
// previous one: the next record (of any channel) goes out after the
// answer, the stream keeps its order, and a controller slower than the
// record period stretches the schedule instead of being run over.
func TestLockstepWaitsForTheAnswer(t *testing.T) {
	recs := states(30, 4*time.Millisecond, true) // states on 0, frames on 1
	now := monoClock()
	a := &answerer{now: now, delay: 15 * time.Millisecond, answers: make(chan Answer, 16)}
	p, err := New(&sliceSource{recs: recs}, a, Options{Loops: 1, Channels: chans, Now: now,
		Lockstep: &Lockstep{Trigger: []bool{true, false, false}, Answers: a.answers, Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.wg.Wait()
	if len(a.calls) != len(recs) {
		t.Fatalf("published %d of %d", len(a.calls), len(recs))
	}
	trig := 0
	for i, c := range a.calls {
		if c.ch != recs[i].Channel || string(c.payload) != string(recs[i].Payload) {
			t.Fatalf("call %d is not record %d: the stream's order changed", i, i)
		}
		if i > 0 && a.calls[i-1].ch == 0 {
			if c.at < a.answer[trig] {
				t.Fatalf("record %d went out %v before the answer to the trigger before it", i, time.Duration(a.answer[trig]-c.at))
			}
			trig++
		}
	}
	if st := s.Channels[0]; st.Answered != 30 || st.Missed != 0 {
		t.Fatalf("answered %d, missed %d", st.Answered, st.Missed)
	}
	if min := 29 * 15 * time.Millisecond; s.Elapsed < min {
		t.Fatalf("took %v: a controller answering in 15 ms cannot be run over by 4 ms records (≥ %v)", s.Elapsed, min)
	}
	if st := p.Status(); st.Answered != 30 || st.Waiting {
		t.Fatalf("status %+v", st)
	}
}

// A trigger the controller does not answer is released after the timeout
// and counted as a missed step; the replay goes on.
func TestLockstepTimeoutIsAMissedStep(t *testing.T) {
	recs := states(12, time.Millisecond, false)
	now := monoClock()
	a := &answerer{now: now, answers: make(chan Answer, 16), skip: func(i int) bool { return i%4 == 1 }}
	p, _ := New(&sliceSource{recs: recs}, a, Options{Loops: 1, Channels: chans, Now: now, RateMax: true,
		Lockstep: &Lockstep{Trigger: []bool{true, false, false}, Answers: a.answers, Timeout: 20 * time.Millisecond}})
	s, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.wg.Wait()
	if st := s.Channels[0]; st.Answered != 9 || st.Missed != 3 || st.Sent != 12 {
		t.Fatalf("%+v", st)
	}
}

// Stepping a lockstep trigger waits for its answer before the step is
// answered; Stop ends a wait at once.
func TestLockstepStepAndStop(t *testing.T) {
	recs := states(10, time.Millisecond, false)
	now := monoClock()
	answers := make(chan Answer, 1)
	sink := &recSink{now: now}
	p, _ := New(&sliceSource{recs: recs}, sink, Options{Loops: 1, Channels: chans, Now: now, StartPaused: true,
		Lockstep: &Lockstep{Trigger: []bool{true, false, false}, Answers: answers, Timeout: time.Hour}})
	wait := started(t, p)
	go func() { // answered once released (an earlier answer is discarded: it answers an earlier record)
		waitFor(t, func() bool { return p.Status().Waiting })
		answers <- Answer{}
	}()
	if st := do(t, p, Request{Op: OpStep, N: 1}); st.Sent != 1 || st.Answered != 1 || st.Waiting {
		t.Fatalf("step: %+v", st)
	}
	go func() {
		waitFor(t, func() bool { return p.Status().Waiting })
		p.Stop()
	}()
	do(t, p, Request{Op: OpStep, N: 1}) // waits for an answer that never comes: Stop ends it
	if s := wait(); !s.Interrupted || s.Channels[0].Sent != 2 {
		t.Fatalf("%+v", s.Channels[0])
	}
}

// The log time reads the window's start before the first record, the
// stepped record's time while paused, and advances at the rate while
// playing.
func TestLogTime(t *testing.T) {
	recs := states(200, 5*time.Millisecond, false) // 1 s
	origin := recs[0].Key
	now := monoClock()
	p, _ := New(&sliceSource{recs: recs}, SinkFunc(func(*Rec) error { return nil }), Options{Loops: 1, Channels: chans, Now: now,
		StartPaused: true, Origin: origin})
	if lt := p.LogTime(now()); lt.Key != origin || lt.Running {
		t.Fatalf("before the start: %+v", lt)
	}
	wait := started(t, p)
	do(t, p, Request{Op: OpStep, N: 4})
	if lt := p.LogTime(now()); lt.Key != recs[3].Key || lt.Running || lt.Position != 15*time.Millisecond {
		t.Fatalf("paused after 4 steps: %+v", lt)
	}
	do(t, p, Request{Op: OpRate, Rate: 2})
	do(t, p, Request{Op: OpResume})
	time.Sleep(100 * time.Millisecond)
	ta := now()
	a := p.LogTime(ta)
	time.Sleep(100 * time.Millisecond)
	tb := now()
	b := p.LogTime(tb)
	if !a.Running || b.Key <= a.Key {
		t.Fatalf("playing: %+v then %+v", a, b)
	}
	// The reading is the schedule's: exactly the rate × the clock's
	// advance between the two readings (a reading, not a measurement).
	if d := (b.Key - a.Key) - 2*(tb-ta); d < -10 || d > 10 {
		t.Fatalf("log time advanced %v in %v at rate 2", time.Duration(b.Key-a.Key), time.Duration(tb-ta))
	}
	wait()
	if lt := p.LogTime(now()); lt.Running || lt.Key != recs[199].Key {
		t.Fatalf("after the end: %+v", lt)
	}
}

// Run waits for Ready before the first record and applies requests
// meanwhile; Ready's error ends Run.
func TestReadyWaitsAndTakesRequests(t *testing.T) {
	recs := states(10, time.Millisecond, false)
	gate := make(chan struct{})
	sink := &recSink{now: monoClock()}
	p, _ := New(&sliceSource{recs: recs}, sink, Options{Loops: 1, Channels: chans,
		Ready: func(ctx context.Context) error { <-gate; return nil }})
	if !p.Status().Starting {
		t.Fatal("not starting")
	}
	wait := started(t, p)
	if st := do(t, p, Request{Op: OpPause}); !st.Paused || !st.Starting {
		t.Fatalf("pause while starting: %+v", st)
	}
	close(gate)
	if st := do(t, p, Request{Op: OpStep, N: 2}); st.Sent != 2 || st.Starting {
		t.Fatalf("step: %+v", st)
	}
	do(t, p, Request{Op: OpResume})
	if s := wait(); s.Channels[0].Sent != 10 {
		t.Fatalf("%+v", s.Channels[0])
	}

	bad := errors.New("no subscribers")
	p, _ = New(&sliceSource{recs: recs}, sink, Options{Loops: 1, Channels: chans, Ready: func(context.Context) error { return bad }})
	if _, err := p.Run(context.Background()); !errors.Is(err, bad) {
		t.Fatalf("ready's error: %v", err)
	}
	p, _ = New(&sliceSource{recs: recs}, sink, Options{Loops: 1, Channels: chans,
		Ready: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }})
	go func() { waitFor(t, func() bool { return p.Status().Starting }); p.Stop() }()
	if s, err := p.Run(context.Background()); err != nil || !s.Interrupted {
		t.Fatalf("stopped while starting: %v %+v", err, s)
	}
}

// An answer that names another trigger (a late answer to one that timed
// out) is dropped and reported, never taken for the current trigger's, so
// one slow answer cannot shift the pairing of the rest.
func TestLockstepLateAnswerDoesNotShiftThePairing(t *testing.T) {
	recs := states(6, time.Millisecond, false)
	for i := range recs {
		recs[i].Seq = uint64(100 + i)
	}
	now := monoClock()
	answers := make(chan Answer, 16)
	var lates []Late
	var steps []Step
	released := make(chan uint64, 16)
	sink := SinkFunc(func(r *Rec) error {
		if r.Channel == 0 {
			released <- r.Seq
		}
		return nil
	})
	go func() { // answers each trigger by its seq; seq 101 only after the next trigger is out
		for seq := range released {
			switch seq {
			case 101:
			case 102:
				answers <- Answer{Tag: 101, Tagged: true} // late: 101 timed out
				answers <- Answer{Tag: 102, Tagged: true}
			default:
				answers <- Answer{Tag: seq, Tagged: true}
			}
		}
	}()
	p, _ := New(&sliceSource{recs: recs}, sink, Options{Loops: 1, Channels: chans, Now: now, RateMax: true,
		Lockstep: &Lockstep{Trigger: []bool{true, false, false}, Answers: answers, Timeout: 50 * time.Millisecond,
			OnLate: func(l Late) { lates = append(lates, l) }, OnStep: func(s Step) { steps = append(steps, s) }}})
	s, err := p.Run(context.Background())
	close(released)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Channels[0]; st.Answered != 5 || st.Missed != 1 || s.Late != 1 {
		t.Fatalf("answered %d, missed %d, late %d", st.Answered, st.Missed, s.Late)
	}
	if len(lates) != 1 || lates[0].Tag != 101 || lates[0].Current != 102 {
		t.Fatalf("late %+v", lates)
	}
	for i, st := range steps {
		if st.Seq != uint64(100+i) || st.Answered != (st.Seq != 101) {
			t.Fatalf("step %d: %+v", i, st)
		}
	}
}

// A released trigger freezes the log's clock in the same step as it
// counts as sent: no reading says "running" while it waits for its answer.
func TestLockstepClockFrozenOnceReleased(t *testing.T) {
	recs := states(200, time.Millisecond, false)
	now := monoClock()
	answers := make(chan Answer, 1)
	p, _ := New(&sliceSource{recs: recs}, SinkFunc(func(*Rec) error { return nil }), Options{Loops: 1, Channels: chans, Now: now,
		Lockstep: &Lockstep{Trigger: []bool{true, false, false}, Answers: answers, Timeout: time.Second}})
	done := make(chan struct{})
	go func() { defer close(done); p.Run(context.Background()) }()
	var sent uint64
	bad := 0
	for sent < uint64(len(recs)) {
		st := p.Status()
		if st.Finished {
			break
		}
		if st.Sent > sent { // a trigger is out and not answered yet: the clock stands still
			if p.LogTime(now()).Running {
				bad++
			}
			sent = st.Sent
			answers <- Answer{}
		}
	}
	<-done
	if bad > 0 {
		t.Fatalf("%d of %d released triggers read as running while they waited", bad, len(recs))
	}
}
