package sampler

import (
	"slices"
	"sort"
)

// LagStream pairs frames with states as they arrive, with the figures Lag
// gives on the whole log, in memory bounded by a window of capture time
// instead of every state of the log.
//
// The window's bound: the figures are Lag's while states arrive out of
// capture order among themselves by less than WindowNs, and frames among
// themselves too; either stream may trail the other by any amount while
// the states in between fit MaxStates (two recorders' logs, one after
// the other). A frame is paired once the state captured after it is
// older than the newest state by WindowNs, so no state still to come can
// change its pair (lagBatch of them at a time); frames are paired in
// arrival order, as Lag pairs them, so even the histograms' rounding is the same. States are kept
// from WindowNs before the older of the newest frame and the newest
// state (dropped lazily: up to twice that), and at most MaxStates of
// them (halved when reached).
//
// Beyond the bound the figures can differ from Lag's, and never silently:
// a state that arrives after a frame it could pair with was paired, or a
// frame whose states were dropped, is counted in Late.
type LagStream struct {
	cfg      LagConfig
	states   []Stamped // sorted by TNs, equal stamps in arrival order (as SortStamped)
	pending  []Stamped // frames not yet paired, in arrival order
	next     int64     // the first state captured after pending[0], if hasNext
	hasNext  bool
	maxState int64
	maxFrame int64
	nStates  uint64
	nFrames  uint64
	final    int64 // the latest state a paired frame depended on
	paired   bool  // final is set
	dropped  bool  // states before states[0] were dropped
	evictAt  int   // len(states) at which old states are next dropped
	sum      LagSummary
	late     uint64

	// A later part of a log (LagConfig.Part): its head, the samples it
	// leaves to the part before to pair, and what Merge checks.
	head       []headSample // in arrival order, while inHead
	inHead     bool         // states go to the head
	framesHead bool         // frames go to the head
	headEnd    int64        // states do until the first captured at or after it (once a state is known)
	frameEnd   int64        // frames until the first captured at or after it
	headOver   bool         // the head outgrew maxHead
	minFrame   int64        // the smallest capture stamp of a frame after the head, if hasFrame
	hasFrame   bool
	minState   int64 // and of a state after the head, if hasState
	hasState   bool
}

// headSample is a sample of a Part's head.
type headSample struct {
	s     Stamped
	frame bool
}

// maxHead bounds a Part's head: three windows of 10 kHz states fit;
// a part whose head is longer (no state for long) is not merged (Merge
// false).
const maxHead = 1 << 17

// Default window bounds of a LagStream.
const (
	DefaultLagWindowNs  = 2e9     // 2 s of capture time: 32-64 KB of 1 kHz states, in cache
	DefaultLagMaxStates = 1 << 20 // 16 MiB of states: 17 min at 1 kHz before the first frame
)

// NewLagStream returns an empty LagStream. cfg.WindowNs 0 is
// DefaultLagWindowNs; negative keeps every state (Lag's memory).
func NewLagStream(cfg LagConfig) *LagStream {
	if cfg.WindowNs == 0 {
		cfg.WindowNs = DefaultLagWindowNs
	}
	if cfg.MaxStates <= 0 {
		cfg.MaxStates = DefaultLagMaxStates
	}
	part := cfg.Part && cfg.WindowNs >= 0
	return &LagStream{cfg: cfg, evictAt: min(1024, cfg.MaxStates), inHead: part, framesHead: part}
}

// State accounts for the next state to arrive.
func (l *LagStream) State(s Stamped) {
	if l.cfg.Part && (l.inHead || !l.hasState || s.TNs < l.minState) { // partState would change something
		l.partState(s)
	}
	if n := len(l.states); n > 0 && s.TNs > l.states[n-1].TNs {
		// The newest so far, as most are: after every paired frame's
		// states and every state kept, so not late.
		l.states = append(l.states, s)
		l.maxState = s.TNs
		l.nStates++
		if !l.hasNext && len(l.pending) > 0 && s.TNs > l.pending[0].TNs {
			l.next, l.hasNext = s.TNs, true
		}
		if l.hasNext && len(l.pending) >= lagBatch && l.next < s.TNs-l.cfg.WindowNs {
			l.settle()
		}
		if len(l.states) >= l.evictAt {
			l.evict()
		}
		return
	}
	l.stateAnywhere(s)
}

// stateAnywhere is State for a state captured before one that arrived
// already (or the first).
func (l *LagStream) stateAnywhere(s Stamped) {
	if (l.paired && s.TNs <= l.final) || (l.dropped && s.TNs < l.states[0].TNs) {
		l.late++ // a paired frame, or a dropped state, could have paired with it
	}
	i := len(l.states) // insert in order: states arrive nearly sorted
	for i > 0 && l.states[i-1].TNs > s.TNs {
		i--
	}
	l.states = append(l.states, Stamped{})
	copy(l.states[i+1:], l.states[i:])
	l.states[i] = s
	if len(l.pending) > 0 && s.TNs > l.pending[0].TNs && (!l.hasNext || s.TNs < l.next) {
		l.next, l.hasNext = s.TNs, true
	}
	if l.nStates == 0 || s.TNs > l.maxState {
		l.maxState = s.TNs
	}
	l.nStates++
	l.settle()
	if len(l.states) >= l.evictAt {
		l.evict()
	}
}

// partState notes state s of a Part: in its head, or after it.
func (l *LagStream) partState(s Stamped) {
	if !l.inHead {
		if !l.hasState || s.TNs < l.minState {
			l.minState, l.hasState = s.TNs, true
		}
		return
	}
	if l.nStates == 0 {
		// The head's frames are those captured in its first window, and
		// its states reach two windows past them: the frames before the
		// part and the head's are then final (settleFinal).
		l.frameEnd, l.headEnd = s.TNs+l.cfg.WindowNs, s.TNs+3*l.cfg.WindowNs
	}
	l.keepHead(headSample{s: s})
	l.inHead = s.TNs < l.headEnd
	l.framesHead = l.framesHead && l.inHead
}

// keepHead keeps x in the head, up to maxHead samples.
func (l *LagStream) keepHead(x headSample) {
	if len(l.head) < maxHead {
		l.head = append(l.head, x)
	} else {
		l.headOver = true
	}
}

// Frame accounts for the next frame to arrive.
func (l *LagStream) Frame(f Stamped) {
	if l.cfg.Part {
		if l.framesHead && (l.nStates == 0 || f.TNs < l.frameEnd) {
			l.keepHead(headSample{s: f, frame: true}) // for the part before to pair
			return
		}
		l.framesHead = false // the frames after arrive after: paired in arrival order
		if !l.hasFrame || f.TNs < l.minFrame {
			l.minFrame, l.hasFrame = f.TNs, true
		}
	}
	if l.nFrames == 0 || f.TNs > l.maxFrame {
		l.maxFrame = f.TNs
	}
	l.nFrames++
	l.pending = append(l.pending, f)
	if len(l.pending) == 1 {
		l.findNext(0)
	}
	l.settle()
}

// Reserve prepares the summary's histograms for n more frames (see
// Histogram.Reserve).
func (l *LagStream) Reserve(n int) {
	l.sum.Latest.Reserve(n)
	l.sum.Nearest.Reserve(n)
	l.sum.Interpolated.Reserve(n)
}

// Late counts the samples that arrived beyond the window: with any, the
// figures may differ from Lag's on the same samples.
func (l *LagStream) Late() uint64 { return l.late }

// Summary pairs the frames still waiting (nothing more arrives) and
// returns the figures.
func (l *LagStream) Summary() *LagSummary {
	for _, f := range l.pending {
		l.pair(f)
	}
	l.pending, l.hasNext = l.pending[:0], false
	return &l.sum
}

// Valid says whether the pairings judged so far stand with the state
// stream's outage threshold outageNs (Deferred: see LagConfig): if
// not, Judge would not give the figures of judging every frame by it.
func (l *LagStream) Valid(outageNs int64) bool { return l.sum.valid(outageNs) }

// Judge pairs the frames still waiting (nothing more arrives) and
// judges the pairings held (Deferred) by outageNs, the outage
// threshold of the whole state stream; false, with nothing judged,
// when the pairings judged already do not stand with it (Valid).
func (l *LagStream) Judge(outageNs int64) bool {
	l.Summary()
	if !l.sum.valid(outageNs) {
		return false
	}
	l.sum.judgeHeld(outageNs, &l.cfg)
	return true
}

// A LagSeam is where a Part's stream joins the stream before it:
// checked (LagStream.Seam), to be joined (Join).
type LagSeam struct {
	l, next  *LagStream
	sc       LagStream // l's pairing state with next's head paired, on a summary of its own
	pairings []Pairing // what sc passed to OnPair, for l's
}

// Seam checks that next, a Part that accounted for the samples
// arriving after l's (the next part of the log, read apart), can be
// joined to l as if l had accounted for them itself: l pairs next's
// head with the samples before it, and takes next's pairings and
// samples. Both are Deferred (nothing is judged across an outage until
// Judge). It refuses (false; l and next unchanged) where that is not
// the pairing of one stream: next's head outgrew its bound, l's frames
// or the head's are not paired by the head's end, a frame after the
// head has an earlier state of its own (a frame far behind the
// states), or a sample arrived beyond the window. Pair that part again
// after l then.
func (l *LagStream) Seam(next *LagStream) (*LagSeam, bool) {
	if next.headOver || next.late > 0 || l.cfg.WindowNs < 0 {
		return nil, false
	}
	// The head, paired by a copy of l's pairing state with a summary of
	// its own: l is unchanged until Join.
	sm := &LagSeam{l: l, next: next, sc: *l}
	sc := &sm.sc
	sc.cfg.OnPair, sc.cfg.Part = nil, false
	if l.cfg.OnPair != nil {
		sc.cfg.OnPair = func(p Pairing) { sm.pairings = append(sm.pairings, p) }
	}
	sc.states, sc.pending, sc.sum = slices.Clone(l.states), slices.Clone(l.pending), LagSummary{}
	for _, x := range next.head {
		if x.frame {
			sc.Frame(x.s)
		} else {
			sc.State(x.s)
		}
	}
	sc.settleFinal()
	if len(sc.pending) > 0 || sc.late != l.late {
		return nil, false
	}
	// next paired the frames after its head with its own states: a
	// state of its head lies after every state of l and at or before
	// each of those frames, so their latest and next states are next's.
	if next.hasFrame && l.nStates > 0 {
		found := false
		for _, x := range next.head {
			found = found || (!x.frame && x.s.TNs > l.maxState && x.s.TNs <= next.minFrame)
		}
		if !found {
			return nil, false
		}
	}
	// No state after the head would have been late for l's pairings.
	if next.hasState && ((sc.paired && next.minState <= sc.final) || (sc.dropped && len(sc.states) > 0 && next.minState < sc.states[0].TNs)) {
		return nil, false
	}
	return sm, true
}

// Join joins the seam's Part to the stream before it. Do not use the
// Part after.
func (sm *LagSeam) Join() {
	l, next, sc := sm.l, sm.next, &sm.sc
	l.sum.merge(&sc.sum)
	l.sum.merge(&next.sum)
	for _, p := range sm.pairings {
		l.cfg.OnPair(p)
	}
	l.states = mergeStamped(l.states, next.states)
	l.pending, l.next, l.hasNext = next.pending, next.next, next.hasNext
	l.maxState = max(sc.maxState, next.maxState)
	if next.nFrames > 0 {
		l.maxFrame = max(sc.maxFrame, next.maxFrame)
	} else {
		l.maxFrame = sc.maxFrame
	}
	l.nStates += next.nStates
	l.nFrames = sc.nFrames + next.nFrames
	l.final, l.paired = sc.final, sc.paired
	if next.paired && (!l.paired || next.final > l.final) {
		l.final, l.paired = next.final, true
	}
	l.dropped = sc.dropped || next.dropped
	if len(l.states) > 0 {
		l.evict()
	}
}

// mergeStamped merges b, states that arrived after a's, into a, both
// sorted by TNs: equal stamps keep arrival order.
func mergeStamped(a, b []Stamped) []Stamped {
	out := make([]Stamped, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if b[j].TNs < a[i].TNs {
			out = append(out, b[j])
			j++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// settleFinal pairs the waiting frames, oldest first, while the state
// after each is final, however few wait (settle waits for lagBatch).
func (l *LagStream) settleFinal() {
	n := 0
	for n < len(l.pending) && l.hasNext && l.next < l.maxState-l.cfg.WindowNs {
		l.pair(l.pending[n])
		if !l.paired || l.next > l.final {
			l.final, l.paired = l.next, true
		}
		n++
		l.findNext(n)
	}
	l.pending = append(l.pending[:0], l.pending[n:]...)
}

// findNext finds the first state captured after waiting frame k (the
// oldest once the ones before it are paired).
func (l *LagStream) findNext(k int) {
	l.hasNext = false
	if k >= len(l.pending) {
		return
	}
	t := l.pending[k].TNs
	if i := sort.Search(len(l.states), func(i int) bool { return l.states[i].TNs > t }); i < len(l.states) {
		l.next, l.hasNext = l.states[i].TNs, true
	}
}

// lagBatch is how many frames wait before settle pairs them: together,
// the summary's histograms stay in cache (one frame at a time, each of
// its adds missed it, as much as a state's whole accounting).
const lagBatch = 64

// settle pairs the waiting frames, oldest first, while the state after
// each is final: older than the newest state by the window.
func (l *LagStream) settle() {
	if l.cfg.WindowNs < 0 || len(l.pending) < lagBatch {
		return
	}
	n := 0
	for l.hasNext && l.next < l.maxState-l.cfg.WindowNs {
		l.pair(l.pending[n])
		if !l.paired || l.next > l.final {
			l.final, l.paired = l.next, true
		}
		n++
		l.findNext(n)
	}
	if n > 0 {
		l.pending = append(l.pending[:0], l.pending[n:]...)
	}
}

// pair accounts for frame f against the states kept.
func (l *LagStream) pair(f Stamped) {
	if l.dropped && (len(l.states) == 0 || f.TNs < l.states[0].TNs) {
		l.late++ // its latest state was dropped
	}
	l.sum.pair(l.states, f, &l.cfg)
}

// evict drops the states no frame still to come can pair with: those
// before WindowNs ahead of the newest frame and state and before every
// waiting frame, keeping the last of them (a frame's latest state).
// Past MaxStates the oldest go anyway.
func (l *LagStream) evict() {
	keep := 0
	if l.cfg.WindowNs >= 0 && l.nFrames > 0 {
		cut := min(l.maxState, l.maxFrame) - l.cfg.WindowNs
		for _, f := range l.pending {
			cut = min(cut, f.TNs)
		}
		keep = max(sort.Search(len(l.states), func(i int) bool { return l.states[i].TNs >= cut })-1, 0)
	}
	if l.cfg.WindowNs >= 0 && len(l.states) >= l.cfg.MaxStates {
		keep = max(keep, len(l.states)-l.cfg.MaxStates/2) // halved: dropping is amortised
	}
	if keep > 0 {
		l.states = append(l.states[:0], l.states[keep:]...)
		l.dropped = true
	}
	l.evictAt = max(2*len(l.states), 1024)
	if l.cfg.WindowNs >= 0 {
		l.evictAt = min(l.evictAt, l.cfg.MaxStates)
	}
}

// Break says that the samples after it were captured apart from those
// before (the next of several snapshots of one recording): the frames
// waiting are paired with the states before, and no frame after pairs
// with those.
func (l *LagStream) Break() {
	for _, f := range l.pending {
		l.pair(f)
	}
	l.pending, l.hasNext = l.pending[:0], false
	l.states, l.paired, l.dropped = l.states[:0], false, false
}
