package analyzer

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// responseLog writes a response log as replay --capture does: robot r1's
// released states (trigger channel) every 100 ms, each answered on
// vr/r1/cmd after 20 ms except the 4th (seq 3); the 6th answered twice (the
// first counts); a stray command before the first release; robot r2
// answered after 5 ms.
func responseLog(t *testing.T) string {
	t.Helper()
	return responseLogOf(t, &logfmt.ReplayOutcome{Schema: logfmt.OutcomeSchema, Finished: true, Triggers: 20, Released: 20})
}

// responseLogOf is responseLog with the outcome record o (nil: none, as
// a replay killed before it finished the log leaves it).
func responseLogOf(t *testing.T, o *logfmt.ReplayOutcome) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "response.vrlog")
	w, err := logfmt.Create(path, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	trig := map[string]string{logfmt.MetaTrigger: "1", "zenoh.encoding": "application/octet-stream"}
	s1, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState, Meta: trig})
	c1, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/cmd", Transport: logfmt.TransportZenoh, Topic: "vr/r1/cmd"})
	s2, _ := w.AddChannel(logfmt.Channel{Name: "vr/r2/state", Transport: logfmt.TransportZenoh, Topic: "vr/r2/state", Schema: codec.SchemaState, Meta: trig})
	c2, _ := w.AddChannel(logfmt.Channel{Name: "vr/r2/cmd", Transport: logfmt.TransportZenoh, Topic: "vr/r2/cmd"})
	const mono0, wall0, ms = int64(1e12), int64(1.7e18), int64(1e6)
	put := func(ch uint16, at int64, seq uint64, state bool) {
		r := logfmt.Record{Channel: ch, RecvMonoNs: mono0 + at, RecvWallNs: wall0 + at, Payload: []byte("cmd")}
		if state {
			st := codec.State{Seq: seq, TNs: wall0 + at - 5*ms, Sensors: []codec.Sensor{}}
			r.Payload, r.Seq, r.CaptureNs, r.HasStamp = codec.AppendState(nil, &st), seq, st.TNs, true
		}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	put(c1, -50*ms, 0, false)
	for i := int64(0); i < 10; i++ {
		at := i * 100 * ms
		put(s1, at, uint64(i), true)
		put(s2, at+ms, uint64(i), true)
		put(c2, at+6*ms, 0, false)
		if i != 3 {
			put(c1, at+20*ms, 0, false)
		}
		if i == 5 {
			put(c1, at+30*ms, 0, false)
		}
	}
	// The recorder's heartbeat: the recording ends 2 s after the last
	// response (replay --linger), which is no outage of the controller.
	hb, _ := w.AddChannel(logfmt.Channel{Name: "vrlog/heartbeat", Transport: logfmt.TransportInternal, Topic: "vrlog/heartbeat", Schema: codec.SchemaHeartbeat})
	w.Write(&logfmt.Record{Channel: hb, RecvMonoNs: mono0 + 3000*ms, RecvWallNs: wall0 + 3000*ms})
	if o != nil {
		b, _ := json.Marshal(o)
		oc, _ := w.AddChannel(logfmt.Channel{Name: logfmt.OutcomeChannel, Transport: logfmt.TransportInternal, Topic: logfmt.OutcomeChannel, Schema: logfmt.OutcomeSchema})
		w.Write(&logfmt.Record{Channel: oc, RecvMonoNs: mono0 + 2000*ms, RecvWallNs: wall0 + 2000*ms, Payload: b})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// The reaction per trigger: the first response after each release, before
// the next one; unanswered triggers counted and listed; each response
// channel paired with its robot's trigger channel.
func TestReaction(t *testing.T) {
	rep, err := AnalyzeFiles([]string{responseLog(t)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Reaction) != 2 {
		t.Fatalf("%+v", rep.Reaction)
	}
	r1, r2 := rep.Reaction[0], rep.Reaction[1]
	if r1.Trigger != "vr/r1/state" || len(r1.Responses) != 1 || r1.Responses[0] != "vr/r1/cmd" || r1.Count != 10 || r1.Answered != 9 ||
		r1.Missing != 1 || len(r1.UnansweredSeq) != 1 || r1.UnansweredSeq[0] != 3 {
		t.Fatalf("r1: %+v", r1)
	}
	if d := r1.LatencyMs; d.Count != 9 || d.Min != 20 || d.Max != 20 || d.P50 != 20 {
		t.Fatalf("r1 latency %+v", d)
	}
	if r2.Trigger != "vr/r2/state" || r2.Responses[0] != "vr/r2/cmd" || r2.Answered != 10 || r2.Missing != 0 || r2.LatencyMs.Max != 5 {
		t.Fatalf("r2: %+v", r2)
	}
	// The gate: a trigger without a response fails whatever the limit.
	if err := rep.ApplyChecks(Thresholds{MaxReaction: []Limit{{Value: 25}, mustLimit(t, "vr/r2/state=4ms")}}); err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != 2 || rep.Pass || rep.Checks[0].Pass || !strings.Contains(rep.Checks[0].Message, "1 of 10 triggers got no response") ||
		rep.Checks[1].Pass || rep.Checks[1].Value != 5 {
		t.Fatalf("checks %+v", rep.Checks)
	}
	rep2, _ := AnalyzeFiles([]string{responseLog(t)}, Options{})
	rep2.ApplyChecks(Thresholds{MaxReaction: []Limit{mustLimit(t, "vr/r2/**=6ms")}, MaxOutageMs: []Limit{mustLimit(t, "vr/r2/cmd=150ms")}})
	if !rep2.Pass {
		t.Fatalf("r2 within 6 ms, no outage after its last response: %+v", rep2.Checks)
	}
	if err := rep2.ApplyChecks(Thresholds{MaxReaction: []Limit{mustLimit(t, "vr/r9/state=1ms")}}); err == nil {
		t.Fatal("a trigger pattern matching nothing is a usage error")
	}
	var b strings.Builder
	rep.WriteText(&b, codec.TimeElapsed)
	if !strings.Contains(b.String(), "reaction (response log") {
		t.Fatalf("text report:\n%s", b.String())
	}
	// A log without trigger channels has no reaction, and nothing to gate.
	sample, _ := AnalyzeFiles([]string{"../testdata/sample.vrlog"}, Options{})
	sample.ApplyChecks(Thresholds{MaxReaction: []Limit{{Value: 10}}})
	if len(sample.Reaction) != 0 || sample.Pass || !strings.Contains(sample.Checks[0].Message, "nothing to check") {
		t.Fatalf("sample: %+v %+v", sample.Reaction, sample.Checks)
	}
}

// A response log of a replay that did not finish, that holds fewer
// triggers than its window, or that records no outcome (the replay was
// killed) fails --max-reaction whatever the limit, unless PartialReplay;
// the outcome is no data channel.
func TestReactionOfAPartialReplay(t *testing.T) {
	lim := Thresholds{MaxReaction: []Limit{mustLimit(t, "vr/r2/**=6ms")}}
	for _, c := range []struct {
		name string
		o    *logfmt.ReplayOutcome
		want string // "" passes
	}{
		{"finished", &logfmt.ReplayOutcome{Schema: logfmt.OutcomeSchema, Finished: true, Triggers: 20}, ""},
		{"stopped", &logfmt.ReplayOutcome{Schema: logfmt.OutcomeSchema, Reason: "stopped before the end", Triggers: 20}, "the replay did not finish (stopped before the end)"},
		{"short", &logfmt.ReplayOutcome{Schema: logfmt.OutcomeSchema, Finished: true, Triggers: 35}, "holds 20 of the 35 triggers"},
		{"killed", nil, "records no outcome (the replay was killed"},
	} {
		path := responseLogOf(t, c.o)
		rep, err := AnalyzeFiles([]string{path}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range rep.Channels {
			if ch.Name == logfmt.OutcomeChannel {
				t.Fatalf("%s: the outcome is a data channel of the report", c.name)
			}
		}
		rep.ApplyChecks(lim)
		if c.want == "" {
			if !rep.Pass || len(rep.ReplayIncomplete) != 0 || rep.Files[0].ReplayOutcome == nil {
				t.Fatalf("%s: %+v %v", c.name, rep.Checks, rep.ReplayIncomplete)
			}
			continue
		}
		if rep.Pass || !strings.Contains(rep.Checks[0].Message, c.want) {
			t.Fatalf("%s: %+v", c.name, rep.Checks)
		}
		part, _ := AnalyzeFiles([]string{path}, Options{PartialReplay: true})
		if part.ApplyChecks(lim); !part.Pass || len(part.ReplayIncomplete) == 0 {
			t.Fatalf("%s with PartialReplay: %+v", c.name, part.Checks)
		}
	}
}

// Responses that name their trigger (codec.AnswerTag) are paired with it:
// a late answer is its own trigger's long reaction, not the next
// trigger's short one.
func TestReactionPairedByTag(t *testing.T) {
	path, w, s1, c1 := newResponseLog(t)
	const ms = int64(1e6)
	put := func(ch uint16, at int64, seq uint64, state bool) {
		r := logfmt.Record{Channel: ch, RecvMonoNs: 1e12 + at, RecvWallNs: 1e18 + at}
		if state {
			st := codec.State{Seq: seq, TNs: 1e18 + at}
			r.Payload, r.Seq, r.CaptureNs, r.HasStamp = codec.AppendState(nil, &st), seq, st.TNs, true
		} else {
			r.Payload, r.Header = []byte("cmd"), codec.AppendAnswerTag(nil, seq)
		}
		w.Write(&r)
	}
	// Lockstep with a 100 ms timeout: states 0, 1 answered in 10 ms; state
	// 2's answer comes at 250 ms, after state 3 was released (200 ms,
	// the timeout), whose own answer follows at 260 ms.
	put(s1, 0, 0, true)
	put(c1, 10*ms, 0, false)
	put(s1, 10*ms, 1, true)
	put(c1, 20*ms, 1, false)
	put(s1, 100*ms, 2, true)
	put(s1, 200*ms, 3, true)
	put(c1, 250*ms, 2, false)
	put(c1, 260*ms, 3, false)
	oc, _ := w.AddChannel(logfmt.Channel{Name: logfmt.OutcomeChannel, Transport: logfmt.TransportInternal, Topic: logfmt.OutcomeChannel, Schema: logfmt.OutcomeSchema})
	b, _ := json.Marshal(logfmt.ReplayOutcome{Schema: logfmt.OutcomeSchema, Finished: true, Triggers: 4})
	w.Write(&logfmt.Record{Channel: oc, RecvMonoNs: 2e12, RecvWallNs: 2e18, Payload: b})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, full := range []bool{false, true} {
		rep, err := AnalyzeFiles([]string{path}, Options{FullDecode: full})
		if err != nil {
			t.Fatal(err)
		}
		x := rep.Reaction[0]
		if x.Count != 4 || x.Answered != 4 || x.LatencyMs.Max != 150 || x.LatencyMs.Min != 10 || x.LatencyMs.P50 != 10 {
			t.Fatalf("full decode %v: %+v", full, x)
		}
	}
}

// A trigger channel without any response has no reaction to compare with
// the limit: the check says so instead of "0 ms".
func TestNoReactionAtAll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "response.vrlog")
	w, _ := logfmt.Create(path, logfmt.WriterOptions{})
	s1, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState,
		Meta: map[string]string{logfmt.MetaTrigger: "1"}})
	for i := range int64(3) {
		st := codec.State{Seq: uint64(i), TNs: 1e18 + i*1e8}
		w.Write(&logfmt.Record{Channel: s1, RecvMonoNs: 1e12 + i*1e8, RecvWallNs: 1e18 + i*1e8, Payload: codec.AppendState(nil, &st), Seq: uint64(i), CaptureNs: st.TNs, HasStamp: true})
	}
	oc, _ := w.AddChannel(logfmt.Channel{Name: logfmt.OutcomeChannel, Transport: logfmt.TransportInternal, Topic: logfmt.OutcomeChannel, Schema: logfmt.OutcomeSchema})
	b, _ := json.Marshal(logfmt.ReplayOutcome{Schema: logfmt.OutcomeSchema, Finished: true, Triggers: 3})
	w.Write(&logfmt.Record{Channel: oc, RecvMonoNs: 2e12, RecvWallNs: 2e18, Payload: b})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := AnalyzeFiles([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep.ApplyChecks(Thresholds{MaxReaction: []Limit{{Value: 10}}})
	if rep.Pass || rep.Checks[0].Message != "max-reaction vr/r1/state: no response to measure: 3 of 3 triggers got no response" {
		t.Fatalf("%+v", rep.Checks)
	}
}

func mustLimit(t *testing.T, s string) Limit {
	l, err := ParseLimit(s, true)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A lockstep replay that missed a step (released a trigger unanswered
// after its timeout) and dropped a late answer: the reaction shows both
// from the outcome record (JSON and text), even when the analyzer paired
// every trigger with a response, and --max-reaction fails it whatever the
// limit unless PartialReplay.
func TestReactionShowsMissedSteps(t *testing.T) {
	lim := Thresholds{MaxReaction: []Limit{mustLimit(t, "vr/r2/**=6ms")}}
	path := responseLogOf(t, &logfmt.ReplayOutcome{Schema: logfmt.OutcomeSchema, Finished: true, Triggers: 20, Released: 20,
		Answered: 19, Missed: 1, Late: 1, Lockstep: true})
	rep, err := AnalyzeFiles([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r2 := rep.Reaction[1]
	if r2.Trigger != "vr/r2/state" || r2.Missing != 0 || r2.MissedSteps != 1 || r2.LateAnswers != 1 {
		t.Fatalf("r2: %+v", r2)
	}
	js, _ := json.Marshal(r2)
	if !strings.Contains(string(js), `"missed_steps":1,"late_answers":1`) {
		t.Fatalf("JSON: %s", js)
	}
	rep.ApplyChecks(lim)
	if rep.Pass || !strings.Contains(rep.Checks[0].Message, "1 lockstep step missed: the controller did not answer within the lockstep timeout") {
		t.Fatalf("checks %+v", rep.Checks)
	}
	var b strings.Builder
	rep.WriteText(&b, codec.TimeElapsed)
	if !strings.Contains(b.String(), "vr/r2/state: the replay's outcome: 1 lockstep step missed (released unanswered after the lockstep timeout), 1 late answer(s)") {
		t.Fatalf("text report:\n%s", b.String())
	}
	part, _ := AnalyzeFiles([]string{path}, Options{PartialReplay: true})
	if part.ApplyChecks(lim); !part.Pass {
		t.Fatalf("with PartialReplay: %+v", part.Checks)
	}
	// No missed step: no line, and the gate passes as before.
	ok, _ := AnalyzeFiles([]string{responseLog(t)}, Options{})
	b.Reset()
	ok.WriteText(&b, codec.TimeElapsed)
	if ok.ApplyChecks(lim); !ok.Pass || strings.Contains(b.String(), "the replay's outcome") || ok.Reaction[1].MissedSteps != 0 {
		t.Fatalf("without missed steps: %+v\n%s", ok.Checks, b.String())
	}
}

// A replay stopped while a lockstep step waited (vrlog ctl stop, SIGINT,
// kill -9): its last trigger is in the log without its answer. It is cut,
// neither answered nor missing, so --partial-replay gates the log on the
// 46 answered steps it holds (it reported "1 of 47 triggers got no
// response"); a replay that finished still fails on it.
func TestReactionCutByTheStop(t *testing.T) {
	stopped := &logfmt.ReplayOutcome{Schema: logfmt.OutcomeSchema, Reason: "stopped before the end", Triggers: 200, Released: 47, Answered: 46, Lockstep: true}
	finished := &logfmt.ReplayOutcome{Schema: logfmt.OutcomeSchema, Finished: true, Triggers: 47, Released: 47, Answered: 46, Lockstep: true}
	lim := Thresholds{MaxReaction: []Limit{{Value: 50}}}
	for _, c := range []struct {
		name string
		o    *logfmt.ReplayOutcome
		cut  bool
	}{{"stopped", stopped, true}, {"killed", nil, true}, {"finished", finished, false}} {
		path := cutResponseLog(t, 47, c.o)
		rep, err := AnalyzeFiles([]string{path}, Options{PartialReplay: true})
		if err != nil {
			t.Fatal(err)
		}
		x := rep.Reaction[0]
		rep.ApplyChecks(lim)
		if c.cut {
			if x.Count != 47 || x.Answered != 46 || x.Missing != 0 || x.Cut != 1 || x.CutSeq == nil || *x.CutSeq != 46 || !rep.Pass {
				t.Fatalf("%s: %+v, checks %+v", c.name, x, rep.Checks)
			}
			var b strings.Builder
			rep.WriteText(&b, codec.TimeElapsed)
			if !strings.Contains(b.String(), "trigger seq 46 was cut by the replay's end") {
				t.Fatalf("%s: text:\n%s", c.name, b.String())
			}
			continue
		}
		if x.Missing != 1 || x.Cut != 0 || rep.Pass {
			t.Fatalf("%s: %+v, checks %+v", c.name, x, rep.Checks)
		}
	}
}

// cutResponseLog is a lockstep response log of n triggers 10 ms apart,
// each answered (tagged) 2 ms after its release but the last, with the
// outcome record o (nil: none).
func cutResponseLog(t *testing.T, n int, o *logfmt.ReplayOutcome) string {
	t.Helper()
	path, w, s1, c1 := newResponseLog(t)
	const ms = int64(1e6)
	for i := range n {
		at := int64(i) * 10 * ms
		st := codec.State{Seq: uint64(i), TNs: 1e18 + at}
		w.Write(&logfmt.Record{Channel: s1, RecvMonoNs: 1e12 + at, RecvWallNs: 1e18 + at, Payload: codec.AppendState(nil, &st), Seq: st.Seq, CaptureNs: st.TNs, HasStamp: true})
		if i < n-1 {
			w.Write(&logfmt.Record{Channel: c1, RecvMonoNs: 1e12 + at + 2*ms, RecvWallNs: 1e18 + at + 2*ms, Payload: []byte("cmd"), Header: codec.AppendAnswerTag(nil, uint64(i))})
		}
	}
	if o != nil {
		b, _ := json.Marshal(o)
		oc, _ := w.AddChannel(logfmt.Channel{Name: logfmt.OutcomeChannel, Transport: logfmt.TransportInternal, Topic: logfmt.OutcomeChannel, Schema: logfmt.OutcomeSchema})
		w.Write(&logfmt.Record{Channel: oc, RecvMonoNs: 1e12 + int64(n)*10*ms, RecvWallNs: 1e18 + int64(n)*10*ms, Payload: b})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A response log of a replay at --rate max: triggers 40 ms apart in the
// log released 5-50 ms apart (the replay's pace), an answer 3 ms after
// each but for triggers 60-69 (the controller silent), received today
// while the log was captured a week ago. The answers sit on the log's
// clock: no outage but the silence, at the silence's elapsed inside the
// log's span (the replay's gaps were listed as outages, at elapsed times
// a week off).
func TestResponsesOnTheLogClock(t *testing.T) {
	path, w, s1, c1 := newResponseLog(t)
	const ms = int64(1e6)
	capture0, wall0 := int64(1.7e18), int64(1.7e18)+7*24*3600*1000*ms
	release := wall0
	for i := range 100 {
		release += []int64{5, 6, 20, 50, 7}[i%5] * ms
		st := codec.State{Seq: uint64(i), TNs: capture0 + int64(i)*40*ms}
		w.Write(&logfmt.Record{Channel: s1, RecvMonoNs: release - wall0, RecvWallNs: release, Payload: codec.AppendState(nil, &st), Seq: st.Seq, CaptureNs: st.TNs, HasStamp: true})
		if i < 60 || i >= 70 {
			w.Write(&logfmt.Record{Channel: c1, RecvMonoNs: release - wall0 + 3*ms, RecvWallNs: release + 3*ms, Payload: []byte("cmd")})
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := AnalyzeFiles([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := rep.Channel("vr/r1/cmd")
	if len(cmd.Outages) != 1 || cmd.FirstElapsed != 0.003 || cmd.NominalPeriodMs != 40 {
		t.Fatalf("cmd: first %.3f s, nominal %.3f ms, outages %+v", cmd.FirstElapsed, cmd.NominalPeriodMs, cmd.Outages)
	}
	if o := cmd.Outages[0]; o.FromElapsed != 2.363 || o.ToElapsed != 2.803 {
		t.Fatalf("the silence at %.3f-%.3f s, want 2.363-2.803 (answers to triggers 59 and 70)", o.FromElapsed, o.ToElapsed)
	}
}

// newResponseLog starts a response log of one trigger channel, vr/r1/state
// (s1), and its response channel, vr/r1/cmd (c1).
func newResponseLog(t *testing.T) (path string, w *logfmt.Writer, s1, c1 uint16) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "response.vrlog")
	w, err := logfmt.Create(path, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s1, _ = w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState,
		Meta: map[string]string{logfmt.MetaTrigger: "1"}})
	c1, _ = w.AddChannel(logfmt.Channel{Name: "vr/r1/cmd", Transport: logfmt.TransportZenoh, Topic: "vr/r1/cmd"})
	return path, w, s1, c1
}
