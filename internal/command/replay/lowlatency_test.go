package replay

import (
	"encoding/binary"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/cliutil"
)

// pmQoS is the kernel's PM QoS CPU latency device; a read gives the
// system-wide target in µs.
const pmQoS = "/dev/cpu_dma_latency"

// --low-latency holds a PM QoS request of 0 µs exactly while the replay
// runs, or, where the process may not write the request (not root, no
// device), fails with exit 3 naming the device: never a silent no-op.
func TestLowLatency(t *testing.T) {
	f := writeLog(t, 500*time.Millisecond)
	args := []string{"--json", "--quiet", "--no-multicast-scouting", "--low-latency", "--delay", "300ms", "--linger", "0s", "--channel", f.stateKey, f.path}
	w, err := os.OpenFile(pmQoS, os.O_WRONLY, 0)
	if err != nil {
		r := runReplay(t, args...)
		if r.code != cliutil.ExitRuntime || !strings.Contains(r.stderr, pmQoS) {
			t.Fatalf("without write access to %s (%v): exit %d, want 3 naming it\n%s", pmQoS, err, r.code, r.stderr)
		}
		return
	}
	w.Close()
	var zeroSeen atomic.Bool
	done, exited := make(chan struct{}, 1), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ; ; <-tick.C {
			if target(t) == 0 {
				zeroSeen.Store(true)
			}
			if len(done) > 0 {
				return
			}
		}
	}()
	r := runReplay(t, args...)
	done <- struct{}{}
	<-exited
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !r.rep.LowLatency {
		t.Error("the summary says low_latency false")
	}
	if !zeroSeen.Load() {
		t.Errorf("%s never read 0 µs while the replay ran", pmQoS)
	}
	t.Logf("after the replay: target %d µs (the default unless another process holds a request)", target(t))
}

func target(t *testing.T) int32 {
	b, err := os.ReadFile(pmQoS)
	if err != nil || len(b) < 4 {
		t.Errorf("read %s: %v (%d bytes)", pmQoS, err, len(b))
		return -1
	}
	return int32(binary.LittleEndian.Uint32(b))
}
