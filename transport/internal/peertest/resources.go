package peertest

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// Resources counts what a leak would grow.
type Resources struct {
	Threads, FDs, Goroutines, Shm int
}

func countDir(path string) int {
	es, err := os.ReadDir(path)
	if err != nil {
		return 0
	}
	return len(es)
}

// countTree counts the entries below path (iceoryx2 keeps its static
// service and node files in /tmp/iceoryx2).
func countTree(path string) int {
	n := 0
	es, err := os.ReadDir(path)
	if err != nil {
		return 0
	}
	for _, e := range es {
		n++
		if e.IsDir() {
			n += countTree(path + "/" + e.Name())
		}
	}
	return n
}

// Snapshot reads the current counts. Shm counts /dev/shm entries plus the
// files under /tmp/iceoryx2.
func Snapshot() Resources {
	return Resources{
		Threads:    countDir("/proc/self/task"),
		FDs:        countDir("/proc/self/fd"),
		Goroutines: runtime.NumGoroutine(),
		Shm:        countDir("/dev/shm") + countTree("/tmp/iceoryx2"),
	}
}

func (r Resources) String() string {
	return fmt.Sprintf("threads %d, fds %d, goroutines %d, shm+iox2 files %d", r.Threads, r.FDs, r.Goroutines, r.Shm)
}

// CheckNoGrowth fails unless the counts come back to base (plus slack for
// threads of pools that linger, such as tokio's blocking pool, which idles
// out after 10 s) within settle.
func CheckNoGrowth(t testing.TB, base Resources, threadSlack int, settle time.Duration) {
	t.Helper()
	deadline := time.Now().Add(settle)
	for {
		now := Snapshot()
		ok := now.Threads <= base.Threads+threadSlack && now.FDs <= base.FDs && now.Goroutines <= base.Goroutines && now.Shm <= base.Shm
		if ok {
			t.Logf("before %v; after %v", base, now)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("resources grew: before %v; after %v", base, now)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
