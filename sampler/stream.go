package sampler

import (
	"cmp"
	"slices"
	"unsafe"
)

// Sample is what the bookkeeping needs of one received sample.
type Sample struct {
	Seq        uint64
	TNs        int64  // capture stamp (simulator clock)
	RecvWallNs int64  // receive stamp, recorder wall clock (0: unknown)
	RecvMonoNs int64  // receive stamp, recorder monotonic clock (0: unknown)
	Publisher  string // publisher identity ("" unknown); a change with seq going back is a restart
}

// Kind classifies a sample against the one before it.
type Kind uint8

const (
	First     Kind = iota // the stream's first sample
	Next                  // seq = last+1
	Skip                  // seq > last+1: samples in between never arrived
	Duplicate             // seq = last
	Reorder               // seq < last and captured earlier: arrived out of order
	Restart               // seq < last and captured later (or a new publisher): publisher restart
)

func (k Kind) String() string {
	return [...]string{"first", "next", "skip", "duplicate", "reorder", "restart"}[k]
}

// Event is what Add learned from one sample.
type Event struct {
	Kind    Kind
	Skipped uint64 // samples missing before this one (Kind Skip)
	DtNs    int64  // capture-time gap to the previous in-order sample
	Outage  bool   // DtNs is above the outage threshold as known so far
}

// Config tunes a Stream. The zero value is usable.
type Config struct {
	// OutageFactor: a capture gap above OutageFactor × the nominal period is
	// an outage. Default 3.
	OutageFactor float64
	// NominalPeriodNs: the expected interval; 0 learns it as the median
	// interval of the stream.
	NominalPeriodNs int64
	// MaxEvents caps each kept event list (skips, restarts, reorders) and the
	// outage candidates; counts go on past it. Default 1000.
	MaxEvents int
	// NoLiveOutage: Add never sets Event.Outage, so no running median
	// is kept for it (a caller that reads outages from the Summary
	// alone, such as analyze, saves that work on every sample).
	NoLiveOutage bool
}

func (c Config) withDefaults() Config {
	if c.OutageFactor <= 0 {
		c.OutageFactor = 3
	}
	if c.MaxEvents <= 0 {
		c.MaxEvents = 1000
	}
	return c
}

// SkipEvent is one gap in seq.
type SkipEvent struct {
	LastSeq, Seq uint64
	Skipped      uint64
	PrevTNs, TNs int64 // capture stamps on either side of the gap
}

// RestartEvent is one publisher restart: the last sample of the old run and
// the first of the new.
type RestartEvent struct {
	LastSeq, Seq    uint64
	BeforeTNs       int64
	AfterTNs        int64
	PublisherChange bool
}

// ReorderEvent is one sample that arrived after a later one.
type ReorderEvent struct {
	LastSeq, Seq uint64
	TNs          int64
}

// Gap is a capture-time interval between consecutive in-order samples.
type Gap struct {
	FromTNs, ToTNs int64
	Restart        bool // the sample after the gap started a new publisher run
}

// Len is the gap's duration in ns.
func (g Gap) Len() int64 { return g.ToTNs - g.FromTNs }

// Stream accounts for one channel's samples, in arrival order.
type Stream struct {
	cfg     Config
	n       uint64
	last    Sample // last in-order sample
	first   Sample
	minTNs  int64
	maxTNs  int64
	skipped uint64
	nSkips  uint64
	dups    uint64
	reorder uint64

	skips     []SkipEvent
	restarts  []RestartEvent
	nRestart  uint64
	reorders  []ReorderEvent
	gaps      gapHeap // the largest gaps, for outages
	gapsFull  bool    // gaps holds MaxEvents: a gap is offered only if it beats gaps[0], the least kept,
	floor     Gap     // a copy of which is here
	median    int64   // cached median interval, refreshed as the stream grows
	refreshAt uint64  // Dt count at which median is next refreshed
	broken    bool    // Break: the next sample starts a new captured span
	spans     uint64  // captured spans after the first (Break)
	notCapt   int64   // capture time between them (ns)

	// Dt and RecvDt are the intervals between consecutive in-order samples
	// (duplicates and reordered samples left out), on the capture clock and
	// on the receive (monotonic) clock: the same pairs, so the two compare.
	Dt      Histogram // capture-time intervals (ns)
	RecvDt  Histogram // receive-time intervals (monotonic, ns)
	Latency Histogram // RecvWallNs - TNs (ns): transport latency plus clock offset
}

// NewStream returns an empty Stream.
func NewStream(cfg Config) *Stream { return &Stream{cfg: cfg.withDefaults()} }

// Reserve prepares for n more samples (see Histogram.Reserve).
func (s *Stream) Reserve(n int) {
	s.Dt.Reserve(n)
	s.RecvDt.Reserve(n)
	s.Latency.Reserve(n)
}

// Add accounts for x, the next sample to arrive.
func (s *Stream) Add(x Sample) Event { return s.next(&x, true) }

// next is Add, without x's latency unless latency.
func (s *Stream) next(x *Sample, latency bool) Event {
	if latency && x.RecvWallNs != 0 {
		s.Latency.Add(x.RecvWallNs - x.TNs)
	}
	s.n++
	if s.n == 1 {
		s.first, s.last, s.minTNs, s.maxTNs = *x, *x, x.TNs, x.TNs
		return Event{Kind: First}
	}
	s.minTNs, s.maxTNs = min(s.minTNs, x.TNs), max(s.maxTNs, x.TNs)
	if s.broken {
		s.broken = false
		s.spans++
		s.notCapt += max(x.TNs-s.last.TNs, 0)
		s.keepLast(x)
		return Event{Kind: First}
	}
	ev := Event{Kind: Next}
	last := &s.last                        // read before s.last = x below
	if x.Seq-1 != last.Seq || x.Seq == 0 { // not the next seq (most are): whatever the publisher, Next
		newPub := x.Publisher != "" && last.Publisher != "" && !sameString(x.Publisher, last.Publisher)
		switch {
		case x.Seq == last.Seq && !newPub:
			s.dups++
			return Event{Kind: Duplicate}
		case x.Seq <= last.Seq && x.TNs < last.TNs && !newPub:
			s.reorder++
			if len(s.reorders) < s.cfg.MaxEvents {
				s.reorders = append(s.reorders, ReorderEvent{LastSeq: last.Seq, Seq: x.Seq, TNs: x.TNs})
			}
			return Event{Kind: Reorder}
		case x.Seq <= last.Seq:
			ev.Kind = Restart
			s.nRestart++
			if len(s.restarts) < s.cfg.MaxEvents {
				s.restarts = append(s.restarts, RestartEvent{LastSeq: last.Seq, Seq: x.Seq, BeforeTNs: last.TNs, AfterTNs: x.TNs, PublisherChange: newPub})
			}
		default: // x.Seq > last.Seq+1
			ev.Kind, ev.Skipped = Skip, x.Seq-last.Seq-1
			s.skipped += ev.Skipped
			s.nSkips++
			if len(s.skips) < s.cfg.MaxEvents {
				s.skips = append(s.skips, SkipEvent{LastSeq: last.Seq, Seq: x.Seq, Skipped: ev.Skipped, PrevTNs: last.TNs, TNs: x.TNs})
			}
		}
	}
	ev.DtNs = x.TNs - last.TNs
	s.Dt.Add(ev.DtNs)
	if x.RecvMonoNs != 0 && last.RecvMonoNs != 0 {
		s.RecvDt.Add(x.RecvMonoNs - last.RecvMonoNs)
	}
	if !s.cfg.NoLiveOutage {
		if nominal := s.nominal(); nominal > 0 && float64(ev.DtNs) > s.cfg.OutageFactor*float64(nominal) {
			ev.Outage = true
		}
	}
	if !s.gapsFull || ev.DtNs > s.floor.Len() || (ev.DtNs == s.floor.Len() && last.TNs < s.floor.FromTNs) {
		// Most gaps are shorter than the shortest kept, or as short and
		// later (gapLess): no call.
		s.offerGap(Gap{FromTNs: last.TNs, ToTNs: x.TNs, Restart: ev.Kind == Restart})
	}
	s.keepLast(x)
	return ev
}

// keepLast sets s.last to x field by field: a struct copy while the GC
// marks would go through the runtime's bulk write barrier (wbMove, a
// few hundred instructions), a field its one-pointer barrier.
func (s *Stream) keepLast(x *Sample) {
	s.last.Seq, s.last.TNs, s.last.RecvWallNs, s.last.RecvMonoNs = x.Seq, x.TNs, x.RecvWallNs, x.RecvMonoNs
	s.last.Publisher = x.Publisher
}

// Mergeable says whether Merge would take next (it changes nothing).
func (s *Stream) Mergeable(next *Stream) bool {
	if s.n == 0 || next.n == 0 || s.broken {
		return true
	}
	x, last := &next.first, &s.last
	newPub := x.Publisher != "" && last.Publisher != "" && !sameString(x.Publisher, last.Publisher)
	return !((x.Seq == last.Seq && !newPub) || (x.Seq <= last.Seq && x.TNs < last.TNs && !newPub))
}

// Config is the stream's configuration, defaults filled in.
func (s *Stream) Config() Config { return s.cfg }

// First is the first sample to arrive (zero before any).
func (s *Stream) First() Sample { return s.first }

// PeriodNs is the nominal period as Summary gives it: the configured
// one, or the median interval (0 before 4 intervals).
func (s *Stream) PeriodNs() int64 {
	switch {
	case s.cfg.NominalPeriodNs > 0:
		return s.cfg.NominalPeriodNs
	case s.Dt.Count() >= 4:
		return s.Dt.Quantile(0.5)
	}
	return 0
}

// Merge appends next, a Stream of the same Config that accounted for
// the samples arriving after s's (a later part of a log, analysed
// apart), as if s had accounted for them itself: next took its first
// sample for a stream's first, and Merge compares it with s's last
// instead. It returns what that comparison found. It refuses (ok false,
// s unchanged) when s would not have made that sample its last in
// order: a duplicate or a reordered sample at the seam, after which s
// compares the samples that follow with another. Analyse that part
// again after s then. next is s's after Merge: do not use it.
func (s *Stream) Merge(next *Stream) (ev Event, ok bool) {
	if next.n == 0 {
		return Event{Kind: First}, true
	}
	if !s.Mergeable(next) {
		return Event{}, false
	}
	if s.n == 0 {
		*s = *next
		return Event{Kind: First}, true
	}
	// next's first sample as s would have taken it (its latency is
	// next's already), then the rest of next.
	ev = s.next(&next.first, false)
	s.n += next.n - 1
	s.minTNs, s.maxTNs = min(s.minTNs, next.minTNs), max(s.maxTNs, next.maxTNs)
	s.skipped += next.skipped
	s.nSkips += next.nSkips
	s.dups += next.dups
	s.reorder += next.reorder
	s.nRestart += next.nRestart
	s.skips = appendCapped(s.skips, next.skips, s.cfg.MaxEvents)
	s.restarts = appendCapped(s.restarts, next.restarts, s.cfg.MaxEvents)
	s.reorders = appendCapped(s.reorders, next.reorders, s.cfg.MaxEvents)
	for _, g := range next.gaps {
		s.offerGap(g)
	}
	s.spans += next.spans
	s.notCapt += next.notCapt
	s.broken = next.broken
	s.last = next.last
	s.refreshAt = 0 // the running median: refreshed when next asked
	s.Dt.absorb(&next.Dt)
	s.RecvDt.absorb(&next.RecvDt)
	s.Latency.absorb(&next.Latency)
	return ev, true
}

// offerGap offers g to the gaps kept, and keeps gapsFull and floor.
func (s *Stream) offerGap(g Gap) {
	s.gaps.offer(g, s.cfg.MaxEvents)
	if len(s.gaps) >= s.cfg.MaxEvents {
		s.gapsFull, s.floor = true, s.gaps[0]
	}
}

// appendCapped appends b to a while a holds fewer than n.
func appendCapped[T any](a, b []T, n int) []T {
	return append(a, b[:min(len(b), max(n-len(a), 0))]...)
}

// NominalNs is the configured period or the median interval so far (after
// a few intervals; 0 before): the period live outage flags are judged by.
func (s *Stream) NominalNs() int64 { return s.nominal() }

// Break says that the samples after it were captured apart from those
// before (the next of several snapshots of one recording): the time
// between was not captured, so the next sample is compared with none
// before it (no skip, restart, outage or interval across the break), and
// the rate leaves the time between out (Summary.NotCapturedNs).
func (s *Stream) Break() {
	if s.n > 0 {
		s.broken = true
	}
}

// nominal is the configured period or the median interval so far (after a
// few intervals).
func (s *Stream) nominal() int64 {
	if s.cfg.NominalPeriodNs > 0 {
		return s.cfg.NominalPeriodNs
	}
	if n := s.Dt.Count(); n >= s.refreshAt && n >= 4 {
		// A quantile walks the buckets: refresh the cache while the stream
		// is young (every interval up to 64, then at powers of two and
		// every 4096).
		s.median = s.Dt.approxQuantile(0.5)
		switch {
		case n < 64:
			s.refreshAt = n + 1
		case n < 4096:
			s.refreshAt = n * 2
		default:
			s.refreshAt = n + 4096
		}
	}
	return s.median
}

// Summary is a Stream's totals.
type Summary struct {
	Count           uint64
	FirstTNs        int64 // first sample to arrive
	LastTNs         int64 // last in-order sample
	MinTNs, MaxTNs  int64
	FirstSeq        uint64
	LastSeq         uint64
	Skipped         uint64 // samples that never arrived (publisher-side or transport loss)
	SkipEvents      uint64 // gaps in seq
	Skips           []SkipEvent
	Restarts        []RestartEvent
	RestartCount    uint64
	Duplicates      uint64
	Reorders        uint64
	ReorderEvents   []ReorderEvent
	NominalPeriodNs int64
	Outages         []Gap // gaps above OutageFactor × nominal, in time order
	// Spans counts the captured spans after the first (Break), and
	// NotCapturedNs the capture time between them.
	Spans         uint64
	NotCapturedNs int64
}

// RateHz is the intervals over the captured time: (count-1) over the
// capture span, less the spans and the time between them (Break); 0
// with fewer than 2 samples in a span.
func (s Summary) RateHz() float64 {
	span := s.MaxTNs - s.MinTNs - s.NotCapturedNs
	if s.Count < 2+s.Spans || span <= 0 {
		return 0
	}
	return float64(s.Count-1-s.Spans) / (float64(span) / 1e9)
}

// Summary returns the totals so far; the Stream can go on.
func (s *Stream) Summary() Summary {
	sum := Summary{
		NominalPeriodNs: s.PeriodNs(),
		Count:           s.n, FirstTNs: s.first.TNs, LastTNs: s.last.TNs, MinTNs: s.minTNs, MaxTNs: s.maxTNs,
		FirstSeq: s.first.Seq, LastSeq: s.last.Seq,
		Skipped: s.skipped, SkipEvents: s.nSkips, Skips: slices.Clone(s.skips),
		Restarts: slices.Clone(s.restarts), RestartCount: s.nRestart,
		Duplicates: s.dups, Reorders: s.reorder, ReorderEvents: slices.Clone(s.reorders),
		Spans: s.spans, NotCapturedNs: s.notCapt,
	}
	if sum.NominalPeriodNs > 0 {
		limit := s.cfg.OutageFactor * float64(sum.NominalPeriodNs)
		for _, g := range s.gaps {
			if float64(g.Len()) > limit {
				sum.Outages = append(sum.Outages, g)
			}
		}
		slices.SortFunc(sum.Outages, func(a, b Gap) int { return cmp.Compare(a.FromTNs, b.FromTNs) })
	}
	return sum
}

// gapHeap keeps the largest gaps seen (a min-heap by length), so outages can
// be judged against the final nominal period with bounded memory. Its
// sift-up and sift-down are container/heap's, typed: no interface call or
// boxed Gap per sample. It orders gaps fully (gapLess), so the gaps it
// keeps are the same whatever the order they were offered in: two
// parts of a log merge to the whole log's.
type gapHeap []Gap

// gapLess orders gaps by length, and gaps of one length by time, the
// later first: of equal gaps the heap keeps the earliest.
func gapLess(a, b Gap) bool {
	if a.Len() != b.Len() {
		return a.Len() < b.Len()
	}
	if a.FromTNs != b.FromTNs {
		return a.FromTNs > b.FromTNs
	}
	return !a.Restart && b.Restart
}

func (h *gapHeap) offer(g Gap, capacity int) {
	if len(*h) < capacity {
		*h = append(*h, g)
		h.up(len(*h) - 1)
	} else if gapLess((*h)[0], g) {
		(*h)[0] = g
		h.down(0)
	}
}

func (h gapHeap) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !gapLess(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

// down is container/heap's down from i0 (heap.Fix of the root: the
// root's up never moves it).
func (h gapHeap) down(i0 int) {
	n, i := len(h), i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && gapLess(h[j2], h[j1]) {
			j = j2 // = 2*i + 2  // right child
		}
		if !gapLess(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// sameString is a == b, without comparing the bytes of one string kept
// twice (a channel's publisher id, shared by its samples).
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}
