package netem

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Relay forwards the TCP connections a listener accepts to an upstream it
// dials, holding every chunk it reads for Delay ± Jitter (uniform) before
// writing it on, in both directions and in order: a link's propagation
// delay and jitter, for a kernel without the netem qdisc. A chunk's release
// time is never earlier than the previous chunk's, so nothing is reordered
// (netem's "delay D J" with rate or in-order delivery). Each hop is its own
// TCP connection, so TCP's acknowledgements are not delayed: retransmission
// timing on a lossy hop is that of a short link. When either side closes or
// fails, the relay delivers what it holds and then closes both sides, as a
// link that went down.
type Relay struct {
	Delay, Jitter time.Duration
	// Dial opens the upstream connection for each accepted one.
	Dial func() (net.Conn, error)
	Seed uint64 // jitter's random seed

	mu     sync.Mutex
	rng    *rand.Rand
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// chunkBuf bounds one read; queueLen the chunks held per direction (so a
// relay holds at most 8 MiB per connection and direction).
const (
	chunkBuf = 32 << 10
	queueLen = 256
)

// Serve accepts connections on l until l is closed or Close is called.
func (r *Relay) Serve(l net.Listener) error {
	r.mu.Lock()
	if r.rng == nil {
		r.rng = rand.New(rand.NewPCG(r.Seed, 17))
		r.conns = map[net.Conn]bool{}
	}
	r.mu.Unlock()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		up, err := r.Dial()
		if err != nil {
			c.Close() // upstream down: the client sees the link refuse, and retries
			continue
		}
		if !r.track(c, up) {
			return nil
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.pipe(c, up)
		}()
	}
}

// Close closes every relayed connection and waits for their goroutines;
// the caller closes the listener.
func (r *Relay) Close() {
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *Relay) track(cs ...net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		r.conns[c] = true
	}
	return true
}

func (r *Relay) untrack(cs ...net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(r.conns, c)
	}
}

// delay draws one chunk's delay.
func (r *Relay) delay() time.Duration {
	if r.Jitter <= 0 {
		return r.Delay
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Delay - r.Jitter + time.Duration(r.rng.Int64N(int64(2*r.Jitter)+1))
}

// pipe relays both directions and closes both connections once either
// direction has ended.
func (r *Relay) pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	go func() { r.forward(b, a); done <- struct{}{} }()
	go func() { r.forward(a, b); done <- struct{}{} }()
	<-done
	r.untrack(a, b) // wakes the other direction
	<-done
}

type chunk struct {
	data []byte
	due  time.Time
}

// forward copies src to dst, each chunk released at its due time, until
// either fails.
func (r *Relay) forward(dst io.Writer, src io.Reader) {
	q := make(chan chunk, queueLen)
	stop := make(chan struct{})
	defer close(stop)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(q)
		var last time.Time
		for {
			buf := make([]byte, chunkBuf)
			n, err := src.Read(buf)
			if n > 0 {
				due := time.Now().Add(r.delay())
				if due.Before(last) {
					due = last // in order: never before the previous chunk
				}
				last = due
				select {
				case q <- chunk{buf[:n], due}:
				case <-stop:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.data); err != nil {
			return
		}
	}
}
