//go:build cgo && linux

package zenoh

import (
	"bytes"
	"runtime"
	"testing"
)

// The native library's threads share at most one malloc arena per core
// (at least two), so their address-space reservations stay bounded under
// ulimit -v (arenas.go); glibc's default allows eight per core. Two
// sessions and a burst of samples make zenoh's threads allocate at once.
func TestMallocArenasBounded(t *testing.T) {
	if mallocArenas() < 0 {
		t.Skip("malloc_info is not available")
	}
	a, b, _ := pair(t)
	sub, err := b.Subscribe("vr/arenas/**", SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pub, err := a.Publisher("vr/arenas/state", PublisherOptions{Block: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	waitMatched(t, pub, sub)
	for i := 0; i < 2000; i++ {
		if err := pub.Put(bytes.Repeat([]byte{byte(i)}, 4096), nil); err != nil {
			t.Fatal(err)
		}
	}
	receiveN(t, sub, 2000, 30e9)
	want := max(2, runtime.NumCPU())
	if n := mallocArenas(); n > want {
		t.Fatalf("%d malloc arenas, want at most %d (one per core)", n, want)
	} else {
		t.Logf("%d malloc arenas (bound %d)", n, want)
	}
}
