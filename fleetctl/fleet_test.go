//go:build cgo

package fleetctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recctl"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// recorders runs a recorder per name on one zenoh session (fed a record
// every millisecond, its control plane mounted), the first idle ones
// armed and the others recording from the start; it returns their
// directories and the session's endpoint.
func recorders(t *testing.T, idle, busy []string) (dirs map[string]string, ep string) {
	t.Helper()
	ep = fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	sess, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var running []*recorder.Recorder
	t.Cleanup(func() {
		cancel()
		for _, r := range running {
			r.Wait()
		}
		sess.Close()
	})
	dirs = map[string]string{}
	for i, name := range append(append([]string{}, idle...), busy...) {
		dirs[name] = t.TempDir()
		r, err := recorder.Open(ctx, recorder.Config{Output: filepath.Join(dirs[name], "run.vrlog"), Session: sess, ZenohKeys: []string{"vrtest/fleet/none"},
			ProbeInterval: -1, FlushInterval: 50 * time.Millisecond, Sync: logfmt.SyncNone, Idle: i < len(idle),
			Feed: func(ctx context.Context, add func(recorder.Fed) bool) {
				tick := time.NewTicker(time.Millisecond)
				defer tick.Stop()
				for n := int64(1); ; n++ {
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
					}
					if !add(recorder.Fed{Name: "vrtest/fleet/" + name, Topic: "vrtest/fleet/" + name, Transport: logfmt.TransportZenoh,
						Record: logfmt.Record{RecvWallNs: time.Now().UnixNano(), RecvMonoNs: n * 1e6, Payload: []byte("state")}}) {
						return
					}
				}
			},
			Mount: func(r *recorder.Recorder, s *zenoh.Session) (io.Closer, error) {
				return recctl.Serve(s, name, r, recctl.Options{})
			}})
		if err != nil {
			t.Fatal(err)
		}
		running = append(running, r)
	}
	return dirs, ep
}

// client opens a session connected to ep.
func client(t *testing.T, ep string) *zenoh.Session {
	t.Helper()
	s, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A fleet of two idle recorders, one busy and one that is not there:
// Find tells them apart (the absent one without a token, the busy one
// with what to do), Start starts the two, Poll follows them, a stop
// query from another session stops them and is answered with what they
// finished; a second stop query gets the same answer at once, a
// malformed one a refusal.
func TestFleetStartsAndStopsTogether(t *testing.T) {
	dirs, ep := recorders(t, []string{"fa", "fb"}, []string{"busy"})
	ctl, asker := client(t, ep), client(t, ep)
	ctx := context.Background()
	var all []string
	waitUntil(t, 10*time.Second, "three recorders", func() bool {
		all, _ = recctl.List(ctx, ctl, time.Second)
		return len(all) == 3
	})
	fl, err := Find(ctx, ctl, []string{"fa", "fb", "busy", "ghost"}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ms := fl.Members()
	if ms[0].Role != Ready || ms[1].Role != Ready || ms[2].Role != LeftOut || ms[2].Silent || !strings.Contains(ms[2].Why, "recording already") ||
		ms[3].Role != LeftOut || !ms[3].Silent || !strings.Contains(ms[3].Why, "none holds its liveliness token") ||
		ms[2].Left != "busy: recording" || ms[3].Left != "not found" {
		t.Fatalf("found %+v", ms)
	}
	if fl, err := Find(ctx, ctl, nil, 2*time.Second); err != nil || len(fl.Members()) != 3 {
		t.Fatalf("every recorder: %v %+v", err, fl)
	}

	srv, err := ServeStop(ctl, "run1")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	n, err := fl.Start(ctx, recctl.Request{File: "fleet-{n}", Note: "fleet test"})
	if err != nil || n != 2 {
		t.Fatalf("started %d: %v", n, err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := fl.Poll(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, m := range fl.Members()[:2] {
		if m.Role != Recording || m.Status == nil || m.Status.State != "recording" || m.File != filepath.Join(dirs[m.Name], "fleet-1.vrlog") {
			t.Fatalf("%s after the start: %+v", m.Name, m)
		}
	}

	// The stop query, from another session; the fleet stops on it.
	type stopped struct {
		rep StopReply
		err error
	}
	got := make(chan stopped, 1)
	waitUntil(t, 10*time.Second, "the fleet's token", func() bool {
		keys, _ := asker.LiveTokens(TokenKey("*"), time.Second)
		return len(keys) == 1 && keys[0] == TokenKey("run1")
	})
	go func() {
		rep, err := RequestStop(ctx, asker, "run1", StopRequest{Reason: "tests done"}, 10*time.Second)
		got <- stopped{rep, err}
	}()
	select {
	case <-srv.Requested():
	case <-time.After(10 * time.Second):
		t.Fatal("the stop query did not arrive")
	}
	if srv.Reason() != "tests done" {
		t.Fatalf("reason %q", srv.Reason())
	}
	fl.Stop(ctx, 5*time.Second, nil)
	srv.Answer(StopReply{OK: true, Recorders: fl.Members()})
	s := <-got
	if s.err != nil || !s.rep.OK || s.rep.Name != "run1" || len(s.rep.Recorders) != 4 {
		t.Fatalf("the stop query's answer: %+v %v", s.rep, s.err)
	}
	for _, m := range s.rep.Recorders[:2] {
		if m.Role != Stopped || !m.Recorded() || m.Finished == nil || m.Finished.Path != m.File || m.Finished.Records == 0 {
			t.Fatalf("%s after the stop: %+v", m.Name, m)
		}
		r, err := logfmt.Open(m.File, logfmt.ReaderOptions{})
		if err != nil || !r.Indexed() || r.Header().Metadata["note"] != "fleet test" {
			t.Fatalf("%s: %v %v", m.File, err, r.Header().Metadata)
		}
		r.Close()
	}
	if again, err := RequestStop(ctx, asker, "run1", StopRequest{}, 5*time.Second); err != nil || !again.OK || len(again.Recorders) != 4 {
		t.Fatalf("a second stop query: %+v %v", again, err)
	}
	for _, payload := range []string{`{"file": "x"}`, `stop`} {
		reps, err := asker.Get(ctx, StopKey("run1"), []byte(payload), 5*time.Second)
		var rep StopReply
		if err != nil || len(reps) != 1 || json.Unmarshal(reps[0].Payload, &rep) != nil || rep.OK || !strings.Contains(rep.Error, "bad stop request") {
			t.Fatalf("a malformed stop query %q: %v %+v", payload, err, reps)
		}
	}
	if _, err := RequestStop(ctx, asker, "nobody", StopRequest{}, time.Second); !errors.Is(err, ErrNoFleet) {
		t.Fatalf("a stop query nobody answers: %v", err)
	}
}

func waitUntil(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !ok(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
