package recorder

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vrlog/vrlog/transport/zenoh"
)

// SessionStatus is the recorder's zenoh connectivity: the routers and peers
// its session is connected to, and how often it lost and regained them.
// zenoh reconnects by itself (a client retries its router, a peer its
// connect endpoints); the recorder only watches and reports.
type SessionStatus struct {
	Routers, Peers []string // zenoh ids connected now
	// Connected: at least one router or peer. Before the first connection
	// (a listening recorder waiting for the simulator) it is false without
	// counting as a loss.
	Connected  bool
	Losses     int           // times the last router or peer went away
	Reconnects int           // times the session came back after a loss
	DownSince  time.Time     // start of the current loss; zero while connected
	Down       time.Duration // total time lost so far, the current loss included
	LastLoss   time.Duration // length of the latest loss that ended
}

// sessionWatchInterval is how often the watcher asks the session: a lost
// router shows in the status within it (zenoh itself notices a closed TCP
// link at once and a silent one within its lease, 10 s by default).
const sessionWatchInterval = 100 * time.Millisecond

// sessionWatch polls a session's connections; status is safe from any
// goroutine.
type sessionWatch struct {
	mu       sync.Mutex
	st       SessionStatus
	ever     bool          // connected at least once
	downPast time.Duration // finished losses
}

// run polls until ctx ends.
func (w *sessionWatch) run(ctx context.Context, sess *zenoh.Session) {
	t := time.NewTicker(sessionWatchInterval)
	defer t.Stop()
	for {
		if c, err := sess.Connected(); err == nil {
			w.update(c, time.Now())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// update books one observation.
func (w *sessionWatch) update(c zenoh.Connections, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	up := len(c.Routers)+len(c.Peers) > 0
	switch {
	case up && !w.st.Connected:
		if w.ever {
			w.st.Reconnects++
			w.st.LastLoss = now.Sub(w.st.DownSince)
			w.downPast += w.st.LastLoss
			w.st.DownSince = time.Time{}
		}
		w.ever = true
	case !up && w.st.Connected:
		w.st.Losses++
		w.st.DownSince = now
	}
	w.st.Connected = up
	w.st.Routers, w.st.Peers = c.Routers, c.Peers
}

func (w *sessionWatch) status() SessionStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.snapshot(time.Now())
}

func (w *sessionWatch) snapshot(now time.Time) SessionStatus {
	st := w.st
	st.Routers, st.Peers = slices.Clone(st.Routers), slices.Clone(st.Peers)
	st.Down = w.downPast
	if !st.DownSince.IsZero() {
		st.Down += now.Sub(st.DownSince)
	}
	return st
}

// String says what the session is connected to, and how often it lost and
// regained its connection, for a status line.
func (z SessionStatus) String() string {
	switch {
	case !z.Connected && z.Losses == 0:
		return "zenoh: not connected yet"
	case !z.Connected:
		return fmt.Sprintf("zenoh: connection lost %s ago, reconnecting", time.Since(z.DownSince).Round(100*time.Millisecond))
	}
	s := "zenoh: connected to " + z.neighbours()
	if z.Reconnects > 0 {
		s += fmt.Sprintf(" (reconnected %d×, %s without a connection in all)", z.Reconnects, z.Down.Round(100*time.Millisecond))
	}
	return s
}

// Change announces a loss or a reconnection since prev, or returns "".
func (z SessionStatus) Change(prev SessionStatus) string {
	switch {
	case z.Losses > prev.Losses && !z.Connected:
		return fmt.Sprintf("zenoh: lost the connection to %s; recording goes on, zenoh reconnects by itself", prev.neighbours())
	case z.Reconnects > prev.Reconnects:
		return fmt.Sprintf("zenoh: reconnected to %s after %s without a connection", z.neighbours(), z.LastLoss.Round(100*time.Millisecond))
	}
	return ""
}

// neighbours names what the session is connected to: "router ID", "2 peers".
func (z SessionStatus) neighbours() string {
	var parts []string
	for _, g := range []struct {
		kind string
		ids  []string
	}{{"router", z.Routers}, {"peer", z.Peers}} {
		switch len(g.ids) {
		case 0:
		case 1:
			parts = append(parts, g.kind+" "+g.ids[0])
		default:
			parts = append(parts, fmt.Sprintf("%d %ss", len(g.ids), g.kind))
		}
	}
	if len(parts) == 0 {
		return "no router or peer"
	}
	return strings.Join(parts, " and ")
}
