//go:build cgo

package zenoh

import (
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
)

func loopbackSession(t testing.TB) *Session {
	t.Helper()
	s, err := Open(Config{Mode: ModePeer, Listen: []string{"tcp/127.0.0.1:0"}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCloseReleasesEverything opens and closes 1,000 sessions (each
// listening on loopback, with a subscriber, a publisher, a queryable and a
// liveliness token) and 1,000 subscribers on one session, and checks that
// threads, fds and goroutines do not grow. (An open+close with all of that
// costs ~0.6 ms here, so the full 1,000 fit in the time budget.)
func TestCloseReleasesEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	// Warm up: zenoh starts its runtime threads on first use and keeps them.
	for i := 0; i < 5; i++ {
		s := loopbackSession(t)
		sub, _ := s.Subscribe("warm/**", SubscriberOptions{})
		sub.Close()
		s.Close()
	}
	base := peertest.Snapshot()
	t0 := time.Now()
	const sessions = 1000
	for i := 0; i < sessions; i++ {
		s := loopbackSession(t)
		sub, err := s.Subscribe("leak/**", SubscriberOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pub, err := s.Publisher("leak/a", PublisherOptions{Liveliness: true})
		if err != nil {
			t.Fatal(err)
		}
		q, err := s.DeclareQueryable("leak/q", func(Query) []Reply { return nil })
		if err != nil {
			t.Fatal(err)
		}
		pub.Put([]byte("x"), nil)
		q.Close()
		pub.Close()
		sub.Close()
		s.Close()
	}
	perSession := time.Since(t0) / sessions
	s := loopbackSession(t)
	t1 := time.Now()
	for i := 0; i < 1000; i++ {
		sub, err := s.Subscribe("leak/**", SubscriberOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sub.Close()
	}
	perSub := time.Since(t1) / 1000
	s.Close()
	t.Logf("open+close: %v per session (with sub, pub, queryable, token), %v per subscriber", perSession, perSub)
	// Slack 2: the Go runtime keeps the OS threads it started for blocking
	// cgo calls; tokio's blocking-pool threads idle out within 10 s.
	peertest.CheckNoGrowth(t, base, 2, 15*time.Second)
}
