package sampler

// LiveLag pairs camera frames with robot states as they arrive, by the
// rule Lag applies to a whole log: a frame's lag is its capture stamp
// minus that of the latest state captured at or before it. Arrival order
// is not capture order, so a frame's pair is known only once a state
// captured after it has arrived; until then the frame waits. Memory is
// bounded: the last liveStates state stamps and livePending waiting
// frames are kept (the oldest waiting frame is then paired with the
// states known so far).
type LiveLag struct {
	states  []Stamped // recent states' capture stamps, sorted
	pending []int64   // frames waiting for a later state
}

// FrameLag is a frame whose pair is known.
type FrameLag struct {
	TNs   int64 // the frame's capture stamp
	LagNs int64 // minus the latest state's at or before it
}

const (
	liveStates  = 4096 // 4 s of 1 kHz states
	livePending = 256
)

// State accounts for a state captured at t and returns the frames it
// settles.
func (l *LiveLag) State(t int64) []FrameLag {
	i := len(l.states) // insert in order: states arrive nearly sorted
	for i > 0 && l.states[i-1].TNs > t {
		i--
	}
	l.states = append(l.states, Stamped{})
	copy(l.states[i+1:], l.states[i:])
	l.states[i] = Stamped{TNs: t}
	if len(l.states) > liveStates {
		l.states = append(l.states[:0], l.states[len(l.states)-liveStates:]...)
	}
	var out []FrameLag
	keep := l.pending[:0]
	for _, f := range l.pending {
		if f < t {
			out = l.settle(out, f)
		} else {
			keep = append(keep, f)
		}
	}
	l.pending = keep
	return out
}

// Frame accounts for a frame captured at t and returns the frames whose
// pairs are now known: this one, when a later state has arrived, and the
// oldest waiting one when too many wait.
func (l *LiveLag) Frame(t int64) []FrameLag {
	if n := len(l.states); n > 0 && l.states[n-1].TNs > t {
		return l.settle(nil, t)
	}
	l.pending = append(l.pending, t)
	if len(l.pending) > livePending {
		oldest := l.pending[0]
		l.pending = append(l.pending[:0], l.pending[1:]...)
		return l.settle(nil, oldest)
	}
	return nil
}

// settle appends the frame at t with its lag; a frame captured before
// every state kept has no known pair (Lag counts it unpaired) and is left
// out.
func (l *LiveLag) settle(out []FrameLag, t int64) []FrameLag {
	if lag, _, ok := latestLag(l.states, t); ok {
		out = append(out, FrameLag{TNs: t, LagNs: lag})
	}
	return out
}
