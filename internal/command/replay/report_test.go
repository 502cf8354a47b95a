package replay

import "testing"

func TestSummaryPlurals(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		noun string
		want string
	}{{1, "record", "1 record"}, {0, "record", "0 records"}, {2, "channel", "2 channels"}, {1, "pass", "1 pass"}, {3, "pass", "3 passes"}} {
		if got := plural(c.n, c.noun); got != c.want {
			t.Errorf("plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
