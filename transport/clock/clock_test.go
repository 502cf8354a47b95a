package clock

import (
	"testing"
	"time"
)

func TestClocks(t *testing.T) {
	m0 := MonoNow()
	time.Sleep(2 * time.Millisecond)
	m1 := MonoNow()
	if d := m1 - m0; d < int64(2*time.Millisecond) || d > int64(time.Second) {
		t.Fatalf("monotonic advanced %d ns over a 2 ms sleep", d)
	}
	if d := WallNow() - time.Now().UnixNano(); d < -int64(time.Second) || d > int64(time.Second) {
		t.Fatalf("wall clock differs from time.Now by %d ns", d)
	}
}

// Monotonic reads the same clock as MonoNow: a reading taken between two
// MonoNow readings lies between them (within the offset's measurement).
func TestMonotonicIsClockMonotonic(t *testing.T) {
	now := Monotonic()
	for range 100 {
		a := MonoNow()
		m := now()
		b := MonoNow()
		if m < a-int64(50*time.Microsecond) || m > b+int64(50*time.Microsecond) {
			t.Fatalf("Monotonic read %d, outside [%d, %d]", m, a, b)
		}
	}
}
