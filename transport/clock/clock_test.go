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
