//go:build cgo

package recorder

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Fed records land in the log with the stamps they carry, beside what the
// recorder receives on a session it was given (and does not close).
func TestFeedAndSharedSession(t *testing.T) {
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	sess, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out := filepath.Join(t.TempDir(), "r.vrlog")
	st := codec.State{Seq: 7, TNs: 1_700_000_000_000_000_000, Sensors: []codec.Sensor{}}
	payload := codec.AppendState(nil, &st)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	fed := make(chan struct{})
	var sum *Summary
	done := make(chan error, 1)
	go func() {
		var err error
		sum, err = Run(ctx, Config{Output: out, ZenohKeys: []string{"vrtest/feed/answer"}, Session: sess, ProbeInterval: -1,
			FlushInterval: 50 * time.Millisecond, OnStart: func() { close(started) },
			OnStatus: func(s Status) {
				for _, c := range s.Channels {
					if c.Name == "vrtest/feed/answer" && c.Msgs > 0 {
						cancel() // received; the feed's records were sent before it ended
					}
				}
			},
			Feed: func(ctx context.Context, add func(Fed) bool) {
				defer close(fed)
				for i := range 3 {
					if !add(Fed{Name: "vr/r1/state", Topic: "vr/r1/state", Transport: logfmt.TransportZenoh, Schema: codec.SchemaState,
						Meta:   map[string]string{logfmt.MetaTrigger: "1"},
						Record: logfmt.Record{RecvWallNs: int64(1000 + i), RecvMonoNs: int64(2000 + i), Payload: payload}}) {
						return
					}
				}
			}})
		done <- err
	}()
	<-started
	pub, err := sess.Publisher("vrtest/feed/answer", zenoh.PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if err := pub.Put([]byte("ok"), nil); err != nil { // a local subscriber: delivered in the session
		t.Fatal(err)
	}
	<-fed
	go func() { time.Sleep(10 * time.Second); cancel() }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r, err := logfmt.Open(out, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	names := map[uint16]logfmt.Channel{}
	for _, c := range r.Channels() {
		names[c.ID] = c
	}
	it := r.Records(logfmt.Filter{})
	trig, answers := 0, 0
	for it.Next() {
		rec := it.Record()
		c := names[rec.Channel]
		switch c.Name {
		case "vr/r1/state":
			if c.Meta[logfmt.MetaTrigger] != "1" || c.Schema != codec.SchemaState || !rec.HasStamp || rec.Seq != 7 ||
				rec.RecvMonoNs != int64(2000+trig) || rec.RecvWallNs != int64(1000+trig) {
				t.Fatalf("fed record %d: %+v in %+v", trig, rec, c)
			}
			trig++
		case "vrtest/feed/answer":
			answers++
		}
	}
	if trig != 3 || answers != 1 {
		t.Fatalf("%d fed records, %d received (summary %+v)", trig, answers, sum.Channels)
	}
	if _, err := sess.Connected(); err != nil {
		t.Fatalf("the recorder closed the session it was given: %v", err)
	}
}
