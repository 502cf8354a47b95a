//go:build cgo

package zenoh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/transport/clock"
)

// pair opens a listening and a connecting session on loopback, multicast scouting off.
func pair(t testing.TB) (a, b *Session, ep string) {
	t.Helper()
	ep = fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	a, err := Open(Config{Mode: ModePeer, Listen: []string{ep}, DisableMulticastScouting: true, Timestamping: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err = Open(Config{Mode: ModePeer, Connect: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(); a.Close() })
	return a, b, ep
}

// receiveN collects n samples or fails after timeout.
func receiveN(t testing.TB, sub *Subscriber, n int, timeout time.Duration) []Sample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got []Sample
	for len(got) < n {
		var err error
		got, err = sub.Receive(ctx, got)
		if err != nil {
			t.Fatalf("received %d of %d: %v", len(got), n, err)
		}
	}
	return got
}

// waitMatched publishes probes until the subscriber sees one (declarations propagate asynchronously).
func waitMatched(t testing.TB, pub *Publisher, sub *Subscriber) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := pub.Put([]byte("probe"), nil); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		got, _ := sub.Receive(ctx, nil)
		cancel()
		if len(got) > 0 {
			// drain remaining probes
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				more, _ := sub.Receive(ctx, nil)
				cancel()
				if len(more) == 0 {
					return
				}
			}
		}
	}
	t.Fatal("subscriber never matched the publisher")
}

func TestPubSubLoopback(t *testing.T) {
	a, b, _ := pair(t)
	sub, err := b.Subscribe("vr/test/**", SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pub, err := a.Publisher("vr/test/state", PublisherOptions{Encoding: "application/octet-stream", Block: true, SourceInfo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	waitMatched(t, pub, sub)
	const n = 2000
	before := clock.MonoNow()
	for i := 0; i < n; i++ {
		payload := bytes.Repeat([]byte{byte(i)}, 200)
		payload[0], payload[1] = byte(i), byte(i>>8)
		if err := pub.Put(payload, []byte(fmt.Sprintf("att-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	got := receiveN(t, sub, n, 20*time.Second)
	after := clock.MonoNow()
	for i, s := range got {
		if s.Key != "vr/test/state" || s.Encoding != "application/octet-stream" {
			t.Fatalf("sample %d: key %q encoding %q", i, s.Key, s.Encoding)
		}
		if len(s.Payload) != 200 || int(s.Payload[0])|int(s.Payload[1])<<8 != i {
			t.Fatalf("sample %d out of order or corrupt: % x", i, s.Payload[:4])
		}
		if string(s.Attachment) != fmt.Sprintf("att-%d", i) {
			t.Fatalf("sample %d attachment %q", i, s.Attachment)
		}
		if !s.HasTimestamp || s.Timestamp.Time().Sub(time.Now()).Abs() > time.Minute {
			t.Fatalf("sample %d: timestamp %v %v", i, s.HasTimestamp, s.Timestamp.Time())
		}
		if !s.HasSource || len(s.SourceID) < 5 {
			t.Fatalf("sample %d: source %v %x %d", i, s.HasSource, s.SourceID, s.SourceSN)
		}
		if s.RecvMonoNs < before || s.RecvMonoNs > after {
			t.Fatalf("sample %d: mono stamp %d outside [%d,%d]", i, s.RecvMonoNs, before, after)
		}
		if d := s.RecvWallNs - time.Now().UnixNano(); d > 0 || d < -int64(time.Minute) {
			t.Fatalf("sample %d: wall stamp off by %d ns", i, d)
		}
		if i > 0 && got[i].SourceSN != got[i-1].SourceSN+1 {
			t.Fatalf("sample %d: source sn %d after %d", i, got[i].SourceSN, got[i-1].SourceSN)
		}
	}
	if sub.Dropped() != 0 {
		t.Fatalf("dropped %d", sub.Dropped())
	}
}

// PutAs republishes recorded source info: the subscriber sees the given
// publisher identity and sequence numbers, gaps and restarts included, not
// the publisher's own.
func TestPutAsKeepsRecordedSource(t *testing.T) {
	a, b, _ := pair(t)
	sub, err := b.Subscribe("vr/putas/**", SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pub, err := a.Publisher("vr/putas/diag", PublisherOptions{Block: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	waitMatched(t, pub, sub)
	first := []byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01, 7, 0, 0, 0}
	second := []byte{0x42, 0x01, 0, 0, 1} // a 2-byte zenoh id, entity 2^24
	want := []struct {
		id []byte
		sn uint64
	}{{first, 5}, {first, 6}, {first, 9}, {first, math.MaxUint32}, {second, 0}, {second, 1}}
	for i, w := range want {
		if err := pub.PutAs([]byte{byte(i)}, nil, w.id, w.sn); err != nil {
			t.Fatal(err)
		}
	}
	got := receiveN(t, sub, len(want), 20*time.Second)
	for i, s := range got {
		if !s.HasSource || !bytes.Equal(s.SourceID, want[i].id) || s.SourceSN != want[i].sn || s.Payload[0] != byte(i) {
			t.Fatalf("sample %d: source %v %x sn %d, want %x sn %d", i, s.HasSource, s.SourceID, s.SourceSN, want[i].id, want[i].sn)
		}
	}
	for _, bad := range []struct {
		id []byte
		sn uint64
	}{{first[:4], 0}, {append(append([]byte{}, first...), 0), 0}, {first, math.MaxUint32 + 1}, {[]byte{0, 0, 0, 0, 0}, 0}} {
		if err := pub.PutAs(nil, nil, bad.id, bad.sn); !errors.Is(err, ErrInvalid) {
			t.Fatalf("PutAs(id %x, sn %d): %v, want ErrInvalid", bad.id, bad.sn, err)
		}
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json5")
	os.WriteFile(bad, []byte("{ mode: 'peer', connect: { endpoints: [ "), 0o644)
	closedPort := peertest.FreePort(t)
	cases := []struct {
		name string
		cfg  Config
	}{
		{"unknown_protocol", Config{Connect: []string{"nosuch/127.0.0.1:7447"}, DisableMulticastScouting: true}},
		{"unparsable_endpoint", Config{Listen: []string{"tcp/not an address"}, DisableMulticastScouting: true}},
		{"unparsable_config", Config{ConfigFile: bad}},
		{"missing_config", Config{ConfigFile: filepath.Join(dir, "nope.json5")}},
		{"bad_mode", Config{Mode: "router-ish"}},
		{"bad_option", Config{Options: map[string]string{"no/such/key": "1"}}},
		{"unreachable_client", Config{Mode: ModeClient, Connect: []string{fmt.Sprintf("tcp/127.0.0.1:%d", closedPort)}, DisableMulticastScouting: true, ConnectTimeout: 500 * time.Millisecond}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				s, err := Open(c.cfg)
				if s != nil {
					s.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("Open succeeded")
				}
				if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrNative) {
					t.Fatalf("error %v matches no sentinel", err)
				}
				t.Logf("%v", err)
			case <-time.After(20 * time.Second):
				t.Fatal("Open hangs")
			}
		})
	}
	a, _, _ := pair(t)
	if _, err := a.Subscribe("a//b", SubscriberOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad key expression: %v", err)
	}
	if _, err := a.Publisher("a//b", PublisherOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("publisher on a bad key expression: %v", err)
	}
}

func TestQueryableGet(t *testing.T) {
	a, b, _ := pair(t)
	q, err := a.DeclareQueryable("vr/test/time", func(q Query) []Reply {
		t2 := clock.WallNow()
		return []Reply{{Payload: []byte(fmt.Sprintf("%s|%s|%d", q.Key, q.Payload, t2)), Encoding: "text/plain"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rs, err := b.Get(context.Background(), "vr/test/time", []byte("probe"), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 1 {
			r := rs[0]
			if r.Err || r.Key != "vr/test/time" || !bytes.HasPrefix(r.Payload, []byte("vr/test/time|probe|")) || r.Encoding != "text/plain" {
				t.Fatalf("reply %+v", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reply: %d", len(rs))
		}
	}
	// no queryable: no replies, no hang
	rs, err := b.Get(context.Background(), "vr/none/time", nil, 200*time.Millisecond)
	if err != nil || len(rs) != 0 {
		t.Fatalf("get without queryable: %v %v", rs, err)
	}
}

// A deferred queryable holds queries open and answers them later, from
// another goroutine: the second query arrives while the first waits, and
// each querier's Get returns once its reply is sent, not at its timeout.
func TestDeferredQueryable(t *testing.T) {
	a, b, _ := pair(t)
	held := make(chan *Pending, 2)
	q, err := a.DeclareDeferredQueryable("vr/test/later", func(q Query, p *Pending) { held <- p })
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ready, err := a.DeclareQueryable("vr/test/ready", func(Query) []Reply { return []Reply{{Payload: []byte("y")}} })
	if err != nil {
		t.Fatal(err)
	}
	defer ready.Close()
	waitUntil := time.Now().Add(10 * time.Second)
	for { // both queryables declared: once one answers, routes have reached b
		rs, _ := b.Get(context.Background(), "vr/test/ready", nil, time.Second)
		if len(rs) == 1 {
			break
		}
		if time.Now().After(waitUntil) {
			t.Fatal("the queryables never became reachable")
		}
	}
	type got struct {
		rs  []GetReply
		err error
		d   time.Duration
	}
	res := make(chan got, 2)
	for i := 0; i < 2; i++ {
		go func() {
			t0 := time.Now()
			rs, err := b.Get(context.Background(), "vr/test/later", nil, 20*time.Second)
			res <- got{rs, err, time.Since(t0)}
		}()
	}
	var ps []*Pending
	for len(ps) < 2 {
		select {
		case p := <-held:
			ps = append(ps, p)
		case <-time.After(15 * time.Second):
			t.Fatalf("%d of 2 queries reached the queryable while the first was unanswered", len(ps))
		}
	}
	go func() {
		for _, p := range ps {
			p.Reply(Reply{Payload: []byte("done"), Encoding: "text/plain"})
			p.Reply(Reply{Payload: []byte("twice")}) // ignored
		}
	}()
	for i := 0; i < 2; i++ {
		g := <-res
		if g.err != nil || len(g.rs) != 1 || string(g.rs[0].Payload) != "done" || g.d > 15*time.Second {
			t.Fatalf("get: %+v after %s, %v", g.rs, g.d, g.err)
		}
	}
}

func TestLivePublishers(t *testing.T) {
	a, b, _ := pair(t)
	p1, err := a.Publisher("vr/r1/state", PublisherOptions{Liveliness: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p1.Close()
	p2, err := a.Publisher("vr/r2/state", PublisherOptions{}) // no token: found by its traffic
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				p2.Put([]byte("x"), nil)
			}
		}
	}()
	time.Sleep(200 * time.Millisecond) // declarations propagate
	keys, err := b.LivePublishers(context.Background(), "vr/**", 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keys) != "[vr/r1/state vr/r2/state]" {
		t.Fatalf("live publishers %v", keys)
	}
}

func TestReceiveContextAndClose(t *testing.T) {
	_, b, _ := pair(t)
	sub, err := b.Subscribe("vr/quiet/**", SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	t0 := time.Now()
	if _, err := sub.Receive(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Receive after cancel: %v", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	go func() { time.Sleep(50 * time.Millisecond); sub.Close() }()
	if _, err := sub.Receive(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Receive after Close: %v", err)
	}
	sub.Close()
	b.Close()
	if _, err := b.Subscribe("x", SubscriberOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("subscribe on a closed session: %v", err)
	}
}

// TestCloseOrder: closing the session first leaves the other handles safe to use and close.
func TestCloseOrder(t *testing.T) {
	s := loopbackSession(t)
	sub, err := s.Subscribe("order/**", SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := s.Publisher("order/a", PublisherOptions{Liveliness: true})
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.DeclareQueryable("order/q", func(Query) []Reply { return nil })
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	_ = pub.Put([]byte("after close"), nil) // an error or nothing, never a crash
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := sub.Receive(ctx, nil); err == nil {
		t.Fatal("Receive on a closed session returned samples")
	}
	q.Close()
	pub.Close()
	sub.Close()
	s.Close()
}

// A publisher's matching status follows a remote subscriber's declaration
// and undeclaration (what replay --wait-for-subscribers waits on).
func TestPublisherMatching(t *testing.T) {
	a, b, _ := pair(t)
	pub, err := a.Publisher("vrtest/matching", PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if pub.Key() != "vrtest/matching" {
		t.Fatalf("key %q", pub.Key())
	}
	waitMatching := func(want bool) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			m, err := pub.Matching()
			if err != nil {
				t.Fatal(err)
			}
			if m == want {
				return
			}
			if time.Now().After(end) {
				t.Fatalf("matching stayed %v", m)
			}
		}
	}
	waitMatching(false)
	sub, err := b.Subscribe("vrtest/*", SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitMatching(true)
	sub.Close()
	waitMatching(false)
	pub.Close()
	if _, err := pub.Matching(); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed publisher: %v", err)
	}
}

// ConfigValue reads the effective configuration: overrides, a file's
// values and zenoh's defaults; a key that is not there is ErrInvalid.
func TestConfigValue(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "c.json5")
	os.WriteFile(conf, []byte(`{ transport: { auth: { usrpwd: { user: "ctl", password: "pw" } } } }`), 0o600)
	s, err := Open(Config{ConfigFile: conf, Mode: ModePeer, DisableMulticastScouting: true, Listen: []string{"tcp/127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for key, want := range map[string]string{"mode": `"peer"`, "transport/auth/usrpwd/user": `"ctl"`, "scouting/multicast/enabled": "false"} {
		if got, err := s.ConfigValue(key); err != nil || got != want {
			t.Errorf("%s: %s, %v; want %s", key, got, err, want)
		}
	}
	if _, err := s.ConfigValue("no/such/key"); !errors.Is(err, ErrInvalid) {
		t.Errorf("a missing key: %v", err)
	}
}
