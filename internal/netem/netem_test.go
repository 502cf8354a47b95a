package netem

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// relayed starts a relay on loopback in front of an echo-less sink server
// and returns the relay's address and the server's accepted connections.
func relayed(t *testing.T, delay, jitter time.Duration) (addr string, server <-chan net.Conn, r *Relay) {
	t.Helper()
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r = &Relay{Delay: delay, Jitter: jitter, Seed: 1, Dial: func() (net.Conn, error) { return net.Dial("tcp", up.Addr().String()) }}
	go r.Serve(l)
	t.Cleanup(func() {
		l.Close()
		up.Close()
		r.Close()
	})
	return l.Addr().String(), conns, r
}

// Bytes go through exactly, in order, both ways, each chunk no earlier than
// Delay - Jitter after it was sent.
func TestRelayDelaysInOrder(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs after relayed's cleanup
	const delay, jitter = 50 * time.Millisecond, 10 * time.Millisecond
	addr, server, _ := relayed(t, delay, jitter)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-server
	defer s.Close()

	// Many small writes with pauses: each becomes its own chunk, each with
	// its own delay; order must survive the jitter.
	var parts [][]byte
	var sent []byte
	for i := 0; i < 40; i++ {
		b := make([]byte, 1+i*97)
		rand.Read(b)
		parts = append(parts, b)
		sent = append(sent, b...)
	}
	go func() {
		for _, b := range parts {
			c.Write(b)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	start := time.Now()
	got := make([]byte, len(sent))
	if _, err := io.ReadFull(s, got[:1]); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < delay-jitter {
		t.Fatalf("first byte after %v, want ≥ %v", d, delay-jitter)
	}
	if _, err := io.ReadFull(s, got[1:]); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent) {
		t.Fatal("relayed bytes differ from the sent ones (or came out of order)")
	}

	// And back: the other direction is delayed too.
	start = time.Now()
	if _, err := s.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	back := make([]byte, 4)
	if _, err := io.ReadFull(c, back); err != nil || string(back) != "pong" {
		t.Fatalf("back: %q %v", back, err)
	}
	if d := time.Since(start); d < delay-jitter {
		t.Fatalf("reply after %v, want ≥ %v", d, delay-jitter)
	}
}

// An upstream that goes away takes the relayed connection down with it
// (as a link would), and a relay that cannot reach its upstream refuses.
func TestRelayUpstreamGone(t *testing.T) {
	addr, server, r := relayed(t, time.Millisecond, 0)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-server
	s.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read succeeded after the upstream closed")
	}
	r.Dial = func() (net.Conn, error) { return nil, net.ErrClosed }
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c2.Read(make([]byte, 1)); err == nil {
		t.Fatal("a relay without upstream accepted a connection for good")
	}
}

// Namespaces: two linked hosts reach each other, a third one (linked only
// to the second, which does not forward) reaches only its neighbour, and
// DropRandom's counter sees drops.
func TestNamespaces(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	a, b, c := New(t, "a"), New(t, "b"), New(t, "c")
	Link(t, a, "ab", "198.51.100.1/30", b, "ba", "198.51.100.2/30")
	Link(t, c, "cb", "198.51.100.5/30", b, "bc", "198.51.100.6/30")
	l, err := b.Listen("198.51.100.2:7000")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			s, err := l.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(s, s); s.Close() }()
		}
	}()
	a.DropRandom("ab", 50)
	conn, err := a.Dial("198.51.100.2:7000")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Small writes a millisecond apart: hundreds of packets, so a 5 %
	// drop rate cannot miss them all.
	msg := bytes.Repeat([]byte("0123456789abcdef"), 4*400)
	go func() {
		for i := 0; i < len(msg); i += 64 {
			conn.Write(msg[i : i+64])
			time.Sleep(time.Millisecond)
		}
	}()
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(conn, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo through 5 %% loss: %v", err)
	}
	if a.Dropped() == 0 {
		t.Fatal("no packet dropped at 5 %")
	}
	if _, err := c.Dial("198.51.100.1:7000"); err == nil {
		t.Fatal("host c reached host a through b, which must not forward")
	}
	if _, err := c.Dial("198.51.100.6:7001"); err == nil {
		t.Fatal("nothing listens on b:7001")
	}
}
