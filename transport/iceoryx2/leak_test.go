//go:build cgo

package iceoryx2

import (
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
)

// TestCloseReleasesEverything opens and closes 1,000 subscribers (each with
// its polling thread) and 100 nodes with a publisher and a subscriber each
// (creating and removing a service, its shared memory and files), and
// checks that threads, fds, goroutines and shared-memory entries do not grow.
func TestCloseReleasesEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	n := newNode(t)
	name := serviceName(t)
	base := peertest.Snapshot()
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if during := peertest.Snapshot(); during.Shm <= base.Shm {
		t.Fatalf("the shm count does not see the service's files: %v vs %v", during, base)
	}
	t0 := time.Now()
	for i := 0; i < 1000; i++ {
		sub, err := n.Subscribe(name, SubscriberOptions{})
		if err != nil {
			t.Fatalf("subscriber %d: %v", i, err)
		}
		sub.Close()
	}
	perSub := time.Since(t0) / 1000
	pub.Close()
	t1 := time.Now()
	for i := 0; i < 100; i++ {
		nn, err := NewNode("leak")
		if err != nil {
			t.Fatal(err)
		}
		svc := serviceName(t)
		p, err := nn.Publisher(svc, frameTypes, PublisherOptions{InitialMaxSliceLen: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		s, err := nn.Subscribe(svc, SubscriberOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Send(make([]byte, 48), make([]byte, 1000))
		s.Close()
		p.Close()
		nn.Close()
	}
	perNode := time.Since(t1) / 100
	t.Logf("open+close: %v per subscriber, %v per node+service+publisher+subscriber", perSub, perNode)
	// Slack 2: the Go runtime keeps the OS threads it started for blocking cgo calls.
	peertest.CheckNoGrowth(t, base, 2, 5*time.Second)
}
