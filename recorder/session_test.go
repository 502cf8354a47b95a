package recorder

import (
	"testing"
	"time"

	"github.com/vrlog/vrlog/transport/zenoh"
)

// The watcher's bookkeeping: waiting for the first connection is not a
// loss; a loss opens a down interval that the reconnection closes.
func TestSessionWatchBooksLossAndReconnect(t *testing.T) {
	var w sessionWatch
	t0 := time.Unix(1000, 0)
	none, a, b := zenoh.Connections{}, zenoh.Connections{Routers: []string{"a"}}, zenoh.Connections{Routers: []string{"b"}}
	steps := []struct {
		at        time.Duration
		c         zenoh.Connections
		connected bool
		losses    int
		reconn    int
		down      time.Duration
	}{
		{0, none, false, 0, 0, 0}, // a client still connecting
		{time.Second, a, true, 0, 0, 0},
		{2 * time.Second, a, true, 0, 0, 0},
		{3 * time.Second, none, false, 1, 0, 0},
		{4 * time.Second, none, false, 1, 0, time.Second},
		{5 * time.Second, b, true, 1, 1, 2 * time.Second},
		{6 * time.Second, none, false, 2, 1, 2 * time.Second},
		{6500 * time.Millisecond, b, true, 2, 2, 2500 * time.Millisecond},
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		w.update(s.c, now)
		st := w.snapshot(now)
		if st.Connected != s.connected || st.Losses != s.losses || st.Reconnects != s.reconn || st.Down != s.down {
			t.Fatalf("step %d: %+v, want connected %v losses %d reconnects %d down %v", i, st, s.connected, s.losses, s.reconn, s.down)
		}
		if st.Connected != st.DownSince.IsZero() && i > 0 {
			t.Fatalf("step %d: DownSince %v while connected=%v", i, st.DownSince, st.Connected)
		}
	}
	if st := w.status(); len(st.Routers) != 1 || st.Routers[0] != "b" {
		t.Fatalf("routers %v", st.Routers)
	}
}

// The status text names what the session is connected to, and a change
// is announced once.
func TestSessionStatusText(t *testing.T) {
	up := SessionStatus{Connected: true, Routers: []string{"1e17a1"}}
	lost := SessionStatus{Losses: 1, DownSince: time.Now()}
	back := SessionStatus{Connected: true, Routers: []string{"1e17a2"}, Losses: 1, Reconnects: 1, LastLoss: 2500 * time.Millisecond, Down: 2500 * time.Millisecond}
	peers := SessionStatus{Connected: true, Peers: []string{"a", "b"}, Routers: []string{"r"}}
	for _, c := range []struct{ got, want string }{
		{SessionStatus{}.String(), "zenoh: not connected yet"},
		{up.String(), "zenoh: connected to router 1e17a1"},
		{back.String(), "zenoh: connected to router 1e17a2 (reconnected 1×, 2.5s without a connection in all)"},
		{peers.String(), "zenoh: connected to router r and 2 peers"},
		{lost.Change(up), "zenoh: lost the connection to router 1e17a1; recording goes on, zenoh reconnects by itself"},
		{back.Change(lost), "zenoh: reconnected to router 1e17a2 after 2.5s without a connection"},
		{back.Change(up), "zenoh: reconnected to router 1e17a2 after 2.5s without a connection"}, // lost and back within one status period
		{back.Change(back), ""},
		{up.Change(SessionStatus{}), ""}, // the first connection is no news
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if s := lost.String(); s[:len("zenoh: connection lost")] != "zenoh: connection lost" {
		t.Errorf("while lost: %q", s)
	}
}
