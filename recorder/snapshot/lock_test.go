package snapshot

import (
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder/output"
)

// The status line's byte count (bytes) while the buffer's writer seals
// chunks on its timer and the records keep coming: it once took the
// snapshotter's lock and then the memory writer's, whose timer seal
// waited, holding it, for the stage that waited for the snapshotter's
// lock (a recorder deadlocked 1 s in, 1 start in 9 at 1080p30).
func TestSnapshotStatusWhileSealing(t *testing.T) {
	sc := Config{Before: time.Second, After: time.Second, MaxBytes: 64 << 20}
	s, err := New(Options{Config: sc, Base: filepath.Join(t.TempDir(), "snap.vrlog"), FlushInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Define(&logfmt.Channel{Name: "cam", Transport: logfmt.TransportIceoryx2, Topic: "cam"}); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			s.Progress()
		}
	}()
	wrote := make(chan error, 1)
	go func() {
		payload := make([]byte, 64<<10)
		deadline := time.Now().Add(2 * time.Second)
		for i := int64(1); time.Now().Before(deadline); i++ {
			r := logfmt.Record{Channel: 1, RecvMonoNs: i * 1e5, RecvWallNs: 1e18 + i*1e5, Payload: payload}
			if err := s.Write(output.Entry{Record: &r}); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the writes stalled for 30 s with the status line reading the byte count: deadlocked")
	}
	stop.Store(true)
	<-done
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
