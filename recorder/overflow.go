package recorder

import "github.com/vrlog/vrlog/livecheck"

// overflow counts the samples iceoryx2's safe overflow replaced in the
// recorder's subscriber buffer before the recorder took them: they never
// reach it and iceoryx2 0.10 counts them nowhere, yet they are the
// recorder's loss (it did not keep up), so they are booked as its drops.
//
// A replaced sample leaves a seq gap before the next sample of its
// publisher, and when it was replaced the buffer held that publisher's
// buffer-size newest samples, all taken later in one drain of the
// subscriber (iceoryx2.Sample.Drain). So a gap is such a loss only if the
// drain that took the sample after it took at least the buffer size of
// that publisher's samples from that sample on; a gap anywhere else never
// sat in the buffer: the publisher skipped those seqs. A drain's length is
// known when the publisher's next drain starts (Sample.PrevDrainLen counts
// the samples the subscriber dropped at its end too), so its gaps are
// decided then, or at the end of the recording (Subscriber.DrainLen).
// Samples the subscriber took and dropped for want of memory are counted
// where they were dropped (Sample.DroppedBefore) and are left out of the
// gap here.
//
// A gap across a hold (Sample.AfterHold: the subscriber left samples in
// the service's buffer for want of a slot) is such a loss whatever the
// drain's length: the buffer was filling while the subscriber waited, and
// a recording that stops while holding takes only what the writer frees
// room for before its end.
//
// What is not told apart: a publisher that skips seqs just before its
// samples fill the buffer (both at once) has that skip counted as a
// recorder drop; a lost sample is never missed.
//
// The live checks (record --snapshot-on) judge such a gap once it is decided:
// its skip and outage are held (livecheck.Held) on the gap, released when
// the gap turns out to be the publisher's, forgotten when it was a loss.
type overflow struct {
	buffer   uint32
	pubs     map[string]*pubDrain
	released []*livecheck.Held // the held checks of gaps decided as the publisher's, for the caller to take
	lostAt   int64             // the receive stamp of the sample after the latest gap decided as lost (takeLostAt)
}

// pubDrain is one publisher's state in the current drain.
type pubDrain struct {
	last  uint64
	have  bool
	drain uint64
	top   uint32 // the highest position seen in the drain
	gaps  []*gap // the drain's gaps, undecided
}

type gap struct {
	at   uint32 // position of the sample after the gap
	mono int64  // its receive stamp: where the loss lies
	n    uint64
	held *livecheck.Held // the live checks of the gap, or nil
}

func newOverflow(buffer int) *overflow {
	return &overflow{buffer: uint32(max(buffer, 1)), pubs: map[string]*pubDrain{}}
}

// add notes a sample of publisher pub received at mono (prevDrainLen:
// Sample.PrevDrainLen; afterHold: Sample.AfterHold); it returns the
// samples it now knows were replaced (in drains that have ended, and a
// gap across a hold at once; takeLostAt says where), and the sample's own
// gap if it is left undecided.
func (o *overflow) add(pub string, seq, drain uint64, index, droppedBefore, prevDrainLen uint32, afterHold bool, mono int64) (uint64, *gap) {
	p := o.pubs[pub]
	if p == nil {
		p = &pubDrain{drain: drain}
		o.pubs[pub] = p
	}
	var lost uint64
	var open *gap
	if p.drain != drain {
		p.top = max(p.top, prevDrainLen)
		lost = o.settle(p)
		p.drain = drain
	}
	if p.have && seq > p.last+1 {
		if n := seq - p.last - 1; n > uint64(droppedBefore) {
			if afterHold {
				// The samples waited in the service's buffer while the
				// subscriber held: safe overflow replaced the gap there,
				// however long the drain that takes the rest turns out.
				lost += n - uint64(droppedBefore)
				o.lostAt = max(o.lostAt, mono)
			} else {
				open = &gap{at: index, mono: mono, n: n - uint64(droppedBefore)}
				p.gaps = append(p.gaps, open)
			}
		}
	}
	p.last, p.have, p.top = seq, true, index
	return lost, open
}

// settle decides the current drain's gaps of p.
func (o *overflow) settle(p *pubDrain) (lost uint64) {
	for _, g := range p.gaps {
		switch {
		case p.top >= g.at && p.top-g.at+1 >= o.buffer:
			lost += g.n
			o.lostAt = max(o.lostAt, g.mono)
		case g.held != nil:
			o.released = append(o.released, g.held)
		}
	}
	clear(p.gaps)
	p.gaps = p.gaps[:0]
	return lost
}

// undecided is the receive stamp of the sample after the earliest gap
// still undecided, 0 if none.
func (o *overflow) undecided() int64 {
	var at int64
	for _, p := range o.pubs {
		for _, g := range p.gaps {
			if at == 0 || g.mono < at {
				at = g.mono
			}
		}
	}
	return at
}

// takeLostAt returns the receive stamp of the sample after the latest gap
// decided as lost since the last call (0: none), for the loss to be
// booked there, not where it was decided (a drain later).
func (o *overflow) takeLostAt() int64 {
	at := o.lostAt
	o.lostAt = 0
	return at
}

// takeReleased returns the held checks of the gaps decided as the
// publisher's since the last call.
func (o *overflow) takeReleased() []*livecheck.Held {
	r := o.released
	o.released = nil
	return r
}

// end decides every open drain (the recording is over); final, if set,
// says how long a publisher's last drain was (Subscriber.DrainLen).
func (o *overflow) end(final func(pub string) (drain uint64, n uint32)) (lost uint64) {
	for pub, p := range o.pubs {
		if final != nil {
			if d, n := final(pub); d == p.drain {
				p.top = max(p.top, n)
			}
		}
		lost += o.settle(p)
	}
	return lost
}
