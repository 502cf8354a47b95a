package replayer

import (
	"sync"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// logClock publishes the replay's position on the log's clock
// (codec.ReplayClock, docs/wire-format.md) on one zenoh key: ticks at a
// rate, and (perRecord) one just before each record.
type logClock struct {
	pub       *zenoh.Publisher
	p         *player.Player
	capture   bool
	perRecord bool
	toUnix    func(key int64) int64 // a log key (the pacing clock) as unix ns

	mu  sync.Mutex // one message at a time, read and put: seq follows the readings' order
	seq uint64
	buf []byte
	err error // the first failed put

	stop chan struct{}
	done sync.WaitGroup
}

func newLogClock(sess *zenoh.Session, key string, capture, perRecord bool, toUnix func(int64) int64) (*logClock, error) {
	pub, err := sess.Publisher(key, zenoh.PublisherOptions{Encoding: "application/octet-stream", Express: true, Block: true})
	if err != nil {
		return nil, kindf(ErrTransport, "clock key %s: %w", key, err)
	}
	return &logClock{pub: pub, capture: capture, perRecord: perRecord, toUnix: toUnix, stop: make(chan struct{})}, nil
}

// start ticks at hz (0: no ticks) for player p.
func (c *logClock) start(p *player.Player, hz float64) {
	c.p = p
	if hz <= 0 {
		return
	}
	c.done.Add(1)
	go func() {
		defer c.done.Done()
		t := time.NewTicker(time.Duration(float64(time.Second) / hz))
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				c.mu.Lock()
				lt := c.p.LogTime(c.p.Now())
				c.put(lt, lt.Key, false)
				c.mu.Unlock()
			}
		}
	}()
}

// record publishes the clock at r's time, before r goes out (the Sink
// calls it from the publishing goroutine).
func (c *logClock) record(r *player.Rec) {
	if !c.perRecord {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	lt := c.p.LogTime(c.p.Now())
	lt.Pass = r.Pass
	c.put(lt, r.Key, true)
}

// put publishes one message; called with mu held.
func (c *logClock) put(lt player.LogTime, key int64, record bool) {
	st := c.p.Status()
	m := codec.ReplayClock{LogTimeNs: c.toUnix(key), PositionNs: lt.Position.Nanoseconds() + key - lt.Key, Rate: lt.Rate,
		Pass: uint32(lt.Pass), Capture: c.capture, Running: lt.Running, Record: record}
	if lt.RateMax {
		m.Rate = 0
	}
	if st.HasRestamp {
		m.LogTimeNs += st.RestampDelta
		m.Restamped = true
	}
	m.Seq = c.seq
	c.seq++
	c.buf = codec.AppendReplayClock(c.buf[:0], &m)
	if err := c.pub.Put(c.buf, nil); err != nil && c.err == nil {
		c.err = kindf(ErrTransport, "clock key: %w", err)
	}
}

// close stops the ticks and the publisher; the error is the first failed put.
func (c *logClock) close() error {
	close(c.stop)
	c.done.Wait()
	c.pub.Close()
	return c.err
}
