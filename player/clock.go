package player

import "time"

// LogTime is the replay's position on the log's clock, for a controller
// that runs on log time (replay --clock-key).
type LogTime struct {
	// Key is the log time at the position, in the pacing clock's units
	// (Rec.Key: the receive monotonic stamp or the capture t_ns), the pass
	// offset removed: every loop pass repeats the log's times.
	Key      int64
	Position time.Duration // Key from Origin
	Pass     int
	// Running: the log time advances at Rate (playing); false while
	// paused, before the first record, while a lockstep record waits for
	// its answer, at rate max, and once Run returned.
	Running bool
	Rate    float64
	RateMax bool
}

// clockState is what a log-time reading needs, copied from the publishing
// goroutine at every schedule change (under the status lock).
type clockState struct {
	running               bool
	anchorKey, anchorMono int64 // effective log time (key + pass offset) ↔ monotonic
	frozen                int64 // effective log time when not running
	rate                  float64
	passOffset            int64
	origin                int64
	pass                  int
}

// clock is the reading's state now; called with the status lock held.
func (r *run) clock() clockState {
	c := clockState{running: r.anchored && !r.paused && !r.waiting && !r.o.RateMax && !r.st.Finished,
		anchorKey: r.anchorKey, anchorMono: r.anchorMono, rate: r.rate, passOffset: r.pubOffset, pass: r.pubPass,
		origin: r.o.Origin, frozen: r.o.Origin}
	if r.haveOrigin {
		c.origin, c.frozen = r.origin, r.origin
	}
	if r.havePos {
		c.frozen = r.lastPubE
	}
	return c
}

// LogTime reads the position on the log's clock at monotonic time now (on
// Options.Now's clock): while playing, what the schedule maps now to;
// otherwise the last published record's time (or where a seek moved it, or
// the window's start).
func (p *Player) LogTime(now int64) LogTime {
	p.status.Lock()
	c := p.clk
	rateMax := p.st.RateMax
	p.status.Unlock()
	e := c.frozen
	if c.running {
		e = c.anchorKey + int64(float64(max(now-c.anchorMono, 0))*c.rate)
	}
	key := e - c.passOffset
	return LogTime{Key: key, Position: time.Duration(key - c.origin), Pass: c.pass, Running: c.running, Rate: c.rate, RateMax: rateMax}
}

// Now reads the player's monotonic clock (Options.Now).
func (p *Player) Now() int64 { return p.o.Now() }
