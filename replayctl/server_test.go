//go:build cgo

package replayctl

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// records is a seekable source of n records 10 ms apart on one channel.
type records struct{ n int }

func (s records) Pass(ctx context.Context, emit func(*player.Rec) bool) error {
	return s.PassFrom(ctx, 0, emit)
}

func (s records) PassFrom(_ context.Context, from int64, emit func(*player.Rec) bool) error {
	for i := range s.n {
		k := int64(i) * int64(10*time.Millisecond)
		if k >= from && !emit(&player.Rec{Key: k, Payload: binary.LittleEndian.AppendUint64(nil, uint64(i))}) {
			return nil
		}
	}
	return nil
}

// sessions opens the replay's and a client's zenoh sessions on loopback.
func sessions(t *testing.T) (replay, client *zenoh.Session) {
	t.Helper()
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	a, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(); a.Close() })
	return a, b
}

// The control channel over real zenoh sessions: commands from a client
// session move the replay as asked and are answered with the status once
// they took effect; a command given as selector parameters works the same;
// what the replay refuses is an error reply; the status is published.
func TestControlOverZenoh(t *testing.T) {
	rs, cs := sessions(t)
	var mu sync.Mutex
	var sent []uint64
	sink := player.SinkFunc(func(r *player.Rec) error {
		mu.Lock()
		sent = append(sent, binary.LittleEndian.Uint64(r.Payload))
		mu.Unlock()
		return nil
	})
	p, err := player.New(records{100}, sink, player.Options{Channels: []player.Channel{{Name: "c"}}, Loops: 1, StartPaused: true,
		Length: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Serve(rs, "t1", p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	statuses, err := cs.Subscribe(StatusKey("t1"), zenoh.SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer statuses.Close()
	done := make(chan error, 1)
	go func() { _, err := p.Run(context.Background()); done <- err }()

	ctx := context.Background()
	send := func(cmd string) Status {
		t.Helper()
		var st Status
		var err error
		for end := time.Now().Add(10 * time.Second); ; { // the queryable's declaration travels to the client first
			if st, err = Send(ctx, cs, "t1", cmd, 2*time.Second); !errors.Is(err, ErrNoReplay) || time.Now().After(end) {
				break
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return st
	}
	if st := send("status"); st.State != StatePaused || st.Sent != 0 || st.Name != "t1" || st.SpanS != 1 {
		t.Fatalf("status: %+v", st)
	}
	if st := send("step 3"); st.Sent != 3 || st.PositionNs != int64(20*time.Millisecond) {
		t.Fatalf("step 3: %+v", st)
	}
	if st := send("seek 0.5"); st.PositionNs != int64(500*time.Millisecond) {
		t.Fatalf("seek: %+v", st)
	}
	// The same grammar as selector parameters, from a plain zenoh get.
	rep, err := cs.Get(ctx, ControlKey("t1")+"?step=2", nil, 5*time.Second)
	if err != nil || len(rep) != 1 || rep[0].Err {
		t.Fatalf("get ?step=2: %v %+v", err, rep)
	}
	var st Status
	if err := json.Unmarshal(rep[0].Payload, &st); err != nil || st.PositionNs != int64(510*time.Millisecond) || st.Sent != 5 {
		t.Fatalf("?step=2: %v %+v", err, st)
	}
	if _, err := Send(ctx, cs, "t1", "seek 5", 5*time.Second); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "outside the window") {
		t.Fatalf("seek past the end: %v", err)
	}
	if _, err := Send(ctx, cs, "t1", "jump", 5*time.Second); !errors.Is(err, ErrCommand) {
		t.Fatalf("bad command: %v", err)
	}
	rep, _ = cs.Get(ctx, ControlKey("t1"), []byte("jump 3"), 5*time.Second)
	if len(rep) != 1 || !rep[0].Err || !strings.Contains(string(rep[0].Payload), "unknown") {
		t.Fatalf("a bad command from any client: %+v", rep)
	}
	if st := send("rate 50"); st.Rate != 50 {
		t.Fatalf("rate: %+v", st)
	}
	send("resume")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := send("status"); st.State != StateFinished || st.Sent != 53 {
		t.Fatalf("after the end: %+v", st)
	}
	if _, err := Send(ctx, cs, "t1", "pause", 5*time.Second); !errors.Is(err, ErrRefused) {
		t.Fatalf("pause after the end: %v", err)
	}
	srv.Close()
	mu.Lock()
	if len(sent) != 53 || sent[3] != 50 || sent[5] != 52 {
		t.Fatalf("published %v", sent)
	}
	mu.Unlock()
	// The published status followed the replay to its end.
	var last Status
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for last.State != StateFinished {
		got, err := statuses.Receive(rctx, nil)
		if err != nil {
			t.Fatalf("published status: %v (last %+v)", err, last)
		}
		json.Unmarshal(got[len(got)-1].Payload, &last)
	}
	if _, err := Send(ctx, cs, "t1", "status", 300*time.Millisecond); !errors.Is(err, ErrNoReplay) {
		t.Fatalf("no replay: %v", err)
	}
}

// While a step waits for its records (here a lockstep record whose answer
// never comes), status is answered at once, and stop too: it ends the
// wait, and the step is answered then.
func TestStatusAndStopWhileAStepWaits(t *testing.T) {
	rs, cs := sessions(t)
	answers := make(chan player.Answer)
	p, err := player.New(records{10}, player.SinkFunc(func(*player.Rec) error { return nil }), player.Options{
		Channels: []player.Channel{{Name: "c"}}, Loops: 1, StartPaused: true, Length: time.Second,
		Lockstep: &player.Lockstep{Trigger: []bool{true}, Answers: answers, Timeout: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Serve(rs, "t2", p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	done := make(chan error, 1)
	go func() { _, err := p.Run(context.Background()); done <- err }()
	ctx := context.Background()
	for end := time.Now().Add(10 * time.Second); ; { // the queryable's declaration travels to the client first
		if _, err = Send(ctx, cs, "t2", "status", 2*time.Second); !errors.Is(err, ErrNoReplay) || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	stepped := make(chan error, 1)
	go func() { _, err := Send(ctx, cs, "t2", "step 1", time.Minute); stepped <- err }()
	for !p.Status().Waiting {
		time.Sleep(5 * time.Millisecond)
	}
	st, err := Send(ctx, cs, "t2", "status", 5*time.Second)
	if err != nil || st.State != StatePaused || !st.LockstepWait || st.Sent != 1 {
		t.Fatalf("status while the step waits: %v %+v", err, st)
	}
	if _, err := Send(ctx, cs, "t2", "stop", 5*time.Second); err != nil {
		t.Fatalf("stop while the step waits: %v", err)
	}
	<-stepped // answered once the stop ended the wait (with the status or an error)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
