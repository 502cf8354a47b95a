package sampler

import "sort"

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
}

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
	return &LagStream{cfg: cfg, evictAt: min(1024, cfg.MaxStates)}
}

// State accounts for the next state to arrive.
func (l *LagStream) State(s Stamped) {
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

// Frame accounts for the next frame to arrive.
func (l *LagStream) Frame(f Stamped) {
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
