package codec

// SeqStep classifies one step of a per-topic counter.
type SeqStep uint8

const (
	// SeqNext: seq == last+1.
	SeqNext SeqStep = iota
	// SeqSkip: seq > last+1; samples in between never arrived.
	SeqSkip
	// SeqDuplicate: seq == last.
	SeqDuplicate
	// SeqBack: seq < last; the counter went back, which for a publisher is a
	// restart (typically to 0), not a drop.
	SeqBack
)

func (s SeqStep) String() string {
	return [...]string{"next", "skip", "duplicate", "back"}[s]
}

// Skipped is the number of samples between last and seq that never arrived,
// saturating at 0: seq - (last+1) when positive.
func Skipped(last, seq uint64) uint64 {
	if seq <= last {
		return 0
	}
	return seq - last - 1
}

// Step classifies the step from last to seq and returns the skipped count.
func Step(last, seq uint64) (SeqStep, uint64) {
	switch {
	case seq == last:
		return SeqDuplicate, 0
	case seq < last:
		return SeqBack, 0
	case seq == last+1:
		return SeqNext, 0
	default:
		return SeqSkip, seq - last - 1
	}
}

// Restarted reports whether the counter went back: a publisher restart.
func Restarted(last, seq uint64) bool { return seq < last }
