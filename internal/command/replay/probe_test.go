//go:build cgo

package replay

import (
	"encoding/binary"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vrlog/vrlog/transport/zenoh"
)

// pacedProbe publishes a sequence number on key every period from a zenoh
// session of its own connected to zp (as a replay is), sleeping to absolute
// ticks, until its stop function is called; stop returns the median
// deviation of the probe's inter-arrival times at zp from its ticks. That
// is the scheduling and transport noise of this machine during the test,
// measured through the same transport at the same time, against which a
// replay's pacing as received is judged (never a fixed wall-clock bound:
// on a loaded 2-core machine both grow together).
func pacedProbe(t *testing.T, zp *zenohPeer, key string, period time.Duration) (stop func() time.Duration) {
	t.Helper()
	got, stopSub := zenohCollect(t, zp, key)
	s, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{zp.ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := s.Publisher(key, zenoh.PublisherOptions{Block: true, Express: true})
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		var b [8]byte
		for i := uint64(0); ; i++ {
			time.Sleep(time.Until(start.Add(time.Duration(i) * period)))
			select {
			case <-done:
				return
			default:
			}
			binary.LittleEndian.PutUint64(b[:], i)
			if err := pub.Put(b[:], nil); err != nil {
				t.Errorf("probe: %v", err)
				return
			}
		}
	}()
	return func() time.Duration {
		close(done)
		wg.Wait()
		time.Sleep(100 * time.Millisecond) // the last samples' way through
		pub.Close()
		s.Close()
		stopSub()
		var dev []int64
		var last zenoh.Sample
		for i, x := range got.items() {
			if i > 0 && len(x.Payload) == 8 && len(last.Payload) == 8 {
				ticks := int64(binary.LittleEndian.Uint64(x.Payload) - binary.LittleEndian.Uint64(last.Payload))
				d := (x.RecvMonoNs - last.RecvMonoNs) - ticks*int64(period)
				dev = append(dev, max(d, -d))
			}
			last = x
		}
		if len(dev) < 10 {
			t.Fatalf("probe: %d arrivals", len(dev)+1)
		}
		slices.Sort(dev)
		return time.Duration(dev[len(dev)/2])
	}
}
