//go:build cgo

package recctl

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// usage is what a process holds: open files, goroutines, live heap.
type usage struct {
	fds, goroutines int
	heap            uint64
}

func measure(t *testing.T) usage {
	t.Helper()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return usage{fds: len(fds), goroutines: runtime.NumGoroutine(), heap: ms.HeapAlloc}
}

// 200 start/stop cycles and 200 splits in a row, driven over zenoh, leak
// nothing: the files, goroutines and heap of a recorder are as they were
// (give or take what settles: a few descriptors, goroutines, MiB).
func TestCyclesLeakNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 400 files")
	}
	dir := t.TempDir()
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	sess, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	client, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := recorder.Open(ctx, recorder.Config{Output: filepath.Join(dir, "c.vrlog"), ZenohKeys: []string{"vrtest/leak/none"}, Session: sess,
		ProbeInterval: -1, FlushInterval: 100 * time.Millisecond, Sync: logfmt.SyncNone, Idle: true,
		Feed: func(ctx context.Context, add func(recorder.Fed) bool) {
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for i := int64(1); ; i++ {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				if !add(recorder.Fed{Name: "vrtest/leak/fed", Topic: "vrtest/leak/fed", Transport: logfmt.TransportZenoh,
					Record: logfmt.Record{RecvWallNs: time.Now().UnixNano(), RecvMonoNs: i * 1e6, Payload: make([]byte, 200)}}) {
					return
				}
			}
		},
		Mount: func(r *recorder.Recorder, s *zenoh.Session) (io.Closer, error) { return Serve(s, "leak", r, Options{}) }})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(v Verb) Reply {
		t.Helper()
		as, err := Ask(ctx, client, []string{"leak"}, v, Request{}, 10*time.Second)
		if err != nil || len(as) != 1 || as[0].Err != nil {
			t.Fatalf("%s: %v %+v", v, err, as)
		}
		return as[0].Reply
	}
	cycle := func() {
		if rep := ask(Start); !rep.OK {
			t.Fatalf("start: %+v", rep)
		}
		time.Sleep(2 * time.Millisecond)
		if rep := ask(Stop); !rep.OK {
			t.Fatalf("stop: %+v", rep)
		}
	}
	split := func() {
		for {
			rep := ask(Split)
			if rep.OK {
				return
			}
			if rep.Code != CodeState { // nothing written since the last split: a record comes within a millisecond
				t.Fatalf("split: %+v", rep)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for range 10 { // warm up: pools, caches, the session's routes
		cycle()
	}
	before := measure(t)
	for range 200 {
		cycle()
	}
	afterCycles := measure(t)
	if rep := ask(Start); !rep.OK {
		t.Fatal(rep)
	}
	for range 200 {
		split()
	}
	if rep := ask(Stop); !rep.OK {
		t.Fatal(rep)
	}
	after := measure(t)
	t.Logf("before %+v, after 200 start/stop %+v, after 200 splits %+v", before, afterCycles, after)
	for _, u := range []usage{afterCycles, after} {
		if u.fds > before.fds+4 || u.goroutines > before.goroutines+8 || u.heap > before.heap+16<<20 {
			t.Errorf("grew from %+v to %+v", before, u)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.vrlog"))
	if len(files) != 210+201 {
		t.Errorf("%d files, want 411 (210 starts, 200 splits and the last)", len(files))
	}
	cancel()
	if _, err := r.Wait(); err != nil {
		t.Fatal(err)
	}
}
