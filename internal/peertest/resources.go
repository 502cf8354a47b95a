package peertest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
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

// countPrefix counts the entries of path whose names start with prefix.
func countPrefix(path, prefix string) int {
	es, err := os.ReadDir(path)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range es {
		if strings.HasPrefix(e.Name(), prefix) {
			n++
		}
	}
	return n
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

// Snapshot reads the current counts. Shm counts iceoryx2's /dev/shm
// segments (iox2_*) plus its files under /tmp/iceoryx2; other programs'
// segments (e.g. the Python zenoh peers' *.zenoh) are not counted, since
// tests of other packages may run at the same time. Those are host-wide
// counts, so CheckNoGrowth waits for them to settle.
func Snapshot() Resources {
	return Resources{
		Threads:    countDir("/proc/self/task"),
		FDs:        countDir("/proc/self/fd"),
		Goroutines: runtime.NumGoroutine(),
		Shm:        countPrefix("/dev/shm", "iox2_") + countTree("/tmp/iceoryx2"),
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
