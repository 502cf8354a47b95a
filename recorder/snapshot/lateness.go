package snapshot

import "time"

// Streams received late. A window is a range of receive time, but a
// stream the recorder receives late (camera frames queued behind a backlog
// at 1080p30 arrive up to 1.25 s after capture under load) would hold, in
// the part after the trigger, only what was captured well before the
// window's end. So each stream's delay is tracked from its capture stamps,
// and a window closes only once every live stream has received what was
// captured up to its end, lateWait at most past it; the window's end then
// moves to the last record received, and what is still missing is said.

// lateWait bounds how long a window waits past its end (and settle) for
// the records of a stream received late.
const lateWait = 3 * time.Second

// rebase is how far above the least receive-minus-capture difference a
// record may be before it counts as a clock that moved (a publisher that
// restarted on another clock), not as a record received late.
const rebase = int64(10 * time.Second)

// liveFor is how recently a stream must have received to be waited for:
// a stream that fell silent is not late.
const liveFor = int64(time.Second)

// arrival is one stream's delay, in the recorder's receive clock.
type arrival struct {
	name      string
	base      int64 // least receive − capture seen: its delay on time, plus the clocks' offset
	newestCap int64 // its newest capture stamp
	newest    int64 // its newest receive stamp
	worst     int64 // the most receive − capture seen since the open window's trigger
	seen      bool
	first     int64 // its first receive stamp, and the records since: its mean period
	n         int64
}

// add books a stamped record.
func (a *arrival) add(recv, capture int64) {
	if capture < -1<<62 || capture > 1<<62 || recv < 0 { // no unix ns: nothing to learn
		return
	}
	d := recv - capture
	if !a.seen || d < a.base || d-a.base > rebase {
		a.base, a.newestCap, a.worst, a.seen = d, capture, d, true
	}
	if a.n == 0 {
		a.first = recv
	}
	a.n++
	a.newest = max(a.newest, recv)
	a.newestCap = max(a.newestCap, capture)
	a.worst = max(a.worst, d)
}

// arrived books a stamped record of channel ch (mu held).
func (s *Output) arrived(ch uint16, recv, capture int64) {
	if int(ch) >= len(s.arrivals) {
		s.arrivals = append(s.arrivals, make([]*arrival, int(ch)+1-len(s.arrivals))...)
	}
	a := s.arrivals[ch]
	if a == nil {
		a = &arrival{}
		if int(ch) <= len(s.defs) && ch > 0 {
			a.name = s.defs[ch-1].Name
		}
		s.arrivals[ch] = a
	}
	a.add(recv, capture)
}

// onTime is the base the streams are judged by: the least of their own
// (the quickest stream on the same clock: a camera whose frames are
// stamped a second before they are sent is a second late, not on time);
// a stream whose own base is further from it than a window waits is on
// another clock, and judged by its own (mu held).
func (s *Output) onTime(a *arrival) int64 {
	ref := a.base
	for _, o := range s.arrivals {
		if o != nil && o.seen && o.base < ref && a.base-o.base <= (settle+lateWait).Nanoseconds() {
			ref = o.base
		}
	}
	return ref
}

// complete is the receive time a stream is complete to: when its newest
// capture would have been received on time (mu held).
func (s *Output) complete(a *arrival) int64 { return a.newestCap + s.onTime(a) }

// lateBy is the most a stream's records arrived after their time on time,
// since the open window's trigger (mu held).
func (s *Output) lateBy(a *arrival) int64 { return max(0, a.worst-s.onTime(a)) }

// behind is the live stream furthest from being complete to `to`, nil
// when every live stream is (mu held). Live is judged against the latest
// record written, not the clock: a recorder that stalled (stopped, or
// behind a backlog) has streams that are live though their newest record
// is old by the clock.
func (s *Output) behind(to int64) *arrival {
	var worst *arrival
	var worstTo int64
	for _, a := range s.arrivals {
		if a == nil || !a.seen || s.silentFor(a) > liveFor {
			continue
		}
		if c := s.complete(a); c < to && (worst == nil || c < worstTo) {
			worst, worstTo = a, c
		}
	}
	return worst
}

// silentFor is how long a stream has received nothing, against the
// latest record written (the recorder's clock probes and heartbeats
// included: a stream silent while they go on fell silent), less the
// latest span the recorder itself received nothing in (stopped, a VM
// paused: what the streams sent meanwhile comes once it goes on) (mu
// held).
func (s *Output) silentFor(a *arrival) int64 {
	d := s.lastRecv - a.newest
	if a.newest <= s.stallFrom {
		d -= s.stallTo - s.stallFrom
	}
	return d
}

// lateFor books a stamped data record received past w's end that was
// captured in it: received on time (complete), it would have been in the
// window, so the window's end moves to it when it closes (mu held).
func (s *Output) lateFor(w *window, ch uint16, recv, capture int64) {
	if int(ch) < len(s.arrivals) {
		if a := s.arrivals[ch]; a != nil && a.seen && capture+s.onTime(a) <= w.to {
			w.lateTo = max(w.lateTo, recv)
		}
	}
}

// latest is the stream received latest since the window's trigger (mu
// held).
func (s *Output) latest() *arrival {
	var worst *arrival
	for _, a := range s.arrivals {
		if a != nil && a.seen && (worst == nil || s.lateBy(a) > s.lateBy(worst)) {
			worst = a
		}
	}
	return worst
}

// silence is how long nothing received at a window's end is a shortfall
// worth saying: three mean periods of the quickest stream, 10 ms to 1 s
// (mu held). Less is the streams' own spacing.
func (s *Output) silence() int64 {
	quiet := int64(time.Second)
	for _, a := range s.arrivals {
		if a != nil && a.n > 1 {
			quiet = min(quiet, 3*(a.newest-a.first)/(a.n-1))
		}
	}
	return max(quiet, int64(10*time.Millisecond))
}

// resetLate starts counting lateness afresh (mu held).
func (s *Output) resetLate() {
	for _, a := range s.arrivals {
		if a != nil {
			a.worst = a.base
		}
	}
}
