package recorder

import (
	"testing"
	"time"
)

func TestScratchRealStall(t *testing.T) {
	ms := time.Millisecond.Nanoseconds()
	res, newest := lateRunWith(t, func(c int64) int64 {
		if c >= 10500*ms && c < 12500*ms {
			return 12500*ms - c + (c-10500*ms)/100 + 5*ms
		}
		return 5 * ms
	}, nil)
	t.Logf("newest %.3f after %v short %q held %q", float64(newest)/1e9, res.After, res.Snapshot.Short, res.Snapshot.HeldOpen)
}
