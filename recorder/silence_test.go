//go:build cgo

package recorder

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/livecheck"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder/snapshot"
	"github.com/vrlog/vrlog/transport/clock"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// A live max-outage check fires as soon as a stream's silence crosses its
// line, while the stream is still silent: not at the next tick or
// heartbeat, nor only when the stream comes back (issue 41).
func TestLiveOutageFiresWhileSilent(t *testing.T) {
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	sess, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	trig, err := livecheck.ParseTrigger("max-outage=300ms")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lastFed, opened time.Time
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = Run(ctx, Config{Output: filepath.Join(t.TempDir(), "s.vrlog"), ZenohKeys: []string{"vrtest/silence/none"}, Session: sess,
		ProbeInterval: -1, FlushInterval: 3 * time.Second, Triggers: []livecheck.Trigger{trig},
		Snapshot: &snapshot.Config{Before: time.Second, After: 100 * time.Millisecond, MaxBytes: 64 << 20,
			OnOpen: func(logfmt.SnapshotTrigger, string) {
				mu.Lock()
				defer mu.Unlock()
				if opened.IsZero() {
					opened = time.Now()
				}
			}},
		Feed: func(ctx context.Context, add func(Fed) bool) {
			defer cancel()                     // the recording ends with the feed
			for i := uint64(0); i < 100; i++ { // 10 ms apart, then silent
				now := clock.WallNow()
				st := codec.State{Seq: i, TNs: now, Sensors: []codec.Sensor{}}
				if !add(Fed{Name: "vr/s/state", Topic: "vr/s/state", Transport: logfmt.TransportZenoh, Schema: codec.SchemaState,
					Record: logfmt.Record{RecvWallNs: now, RecvMonoNs: clock.MonoNow(), Payload: codec.AppendState(nil, &st)}}) {
					return
				}
				mu.Lock()
				lastFed = time.Now()
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(2500 * time.Millisecond)
		}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if opened.IsZero() {
		t.Fatal("no snapshot: the silence never fired max-outage")
	}
	if after := opened.Sub(lastFed); after > 700*time.Millisecond {
		t.Fatalf("max-outage=300ms fired %v after the stream's last sample: want it at the line, while silent", after)
	}
}
