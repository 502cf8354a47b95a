package hostclock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
)

// Logs read as one session must share one receive clock: two logs of one
// host pass; a host whose wall clock runs 50 ms apart (on one machine,
// one monotonic clock) is ErrSeveralRecorders naming both files, and its
// offset is then each host's own, through Align, as merge --clock sim
// converts it.
func TestOneReceiveClock(t *testing.T) {
	const base = 1_700_000_000_000_000_000
	a1, p1 := host{latency: time.Millisecond, channel: "s", services: []string{"t"}, monoBase: base}.write(t)
	a2, p2 := host{latency: time.Millisecond, channel: "f", services: []string{"t"}, monoBase: base}.write(t)
	// Its wall clock 50 ms ahead, its monotonic clock the machine's.
	b, pb := host{offset: -50 * time.Millisecond, latency: time.Millisecond, channel: "f", services: []string{"t"}, monoBase: base + 50e6}.write(t)
	if err := OneReceiveClock([]*logfmt.Reader{a1, a2}, []string{p1, p2}); err != nil {
		t.Fatalf("one host's logs: %v", err)
	}
	err := OneReceiveClock([]*logfmt.Reader{a1, b}, []string{p1, pb})
	if !errors.Is(err, ErrSeveralRecorders) || !strings.Contains(err.Error(), p1) || !strings.Contains(err.Error(), pb) || !strings.Contains(err.Error(), "50ms") {
		t.Fatalf("two hosts 50 ms apart: %v", err)
	}
	al, err := Align([]*logfmt.Reader{a1, b}, []string{p1, pb}, AlignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if off := time.Duration(al.Model(1).OffsetNs() - al.Model(0).OffsetNs()); off < -51*time.Millisecond || off > -49*time.Millisecond {
		t.Fatalf("the hosts' offsets differ by %v, want -50 ms", off)
	}
}
