package record

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/recorder"
)

// The live table fits an 80-column terminal whatever the names and
// counts, and never has more rows than the terminal (a wrapped or
// scrolled row makes each redraw stack another copy).
func TestStatusFitsTheTerminal(t *testing.T) {
	st := recorder.Status{Elapsed: 3723 * time.Second, BytesWritten: 5 << 30}
	for i := range 40 {
		st.Channels = append(st.Channels, recorder.ChannelStatus{Name: fmt.Sprintf("vr/robot-with-a-long-name-%d/camera/front_left_wide", i),
			Msgs: 123456789012, Hz: 1000.5, MBps: 187.25, Skipped: 99999999, Restarts: 12345, Drops: 7654321, Undecodable: 123456, Bytes: 1 << 40})
	}
	for _, size := range [][2]int{{80, 24}, {60, 10}, {200, 50}} {
		rows := table(st, size[0]-1, size[1]-1)
		if len(rows) > size[1]-1 {
			t.Errorf("%v: %d rows", size, len(rows))
		}
		for _, r := range rows {
			if n := len([]rune(r)); n > size[0]-1 {
				t.Errorf("%v: row of %d columns: %q", size, n, r)
			}
		}
		if len(st.Channels)+2 > size[1]-1 && !strings.HasPrefix(rows[len(rows)-2], "(+") {
			t.Errorf("%v: the channels that do not fit are not summed up: %q", size, rows[len(rows)-2])
		}
	}
	rows := table(recorder.Status{Channels: []recorder.ChannelStatus{{Name: "vr/r1/state", Msgs: 250, Hz: 25}}}, 79, 23)
	if len(rows) != 3 || !strings.HasPrefix(rows[1], "vr/r1/state") || !strings.Contains(rows[1], "   250    25.0") {
		t.Fatalf("%q", rows)
	}
	if count(123456789012, 8) != "123457M" || count(999, 4) != "999" || count(12345, 4) != "12k" || count(123456, 5) != "123k" {
		t.Fatal("count")
	}
}

// The final line fits an 80-column terminal between words; off a
// terminal it is one line.
func TestFinalLineFitsTheTerminal(t *testing.T) {
	st := recorder.Status{Elapsed: 12 * time.Second, BytesWritten: 123 << 20,
		Channels: []recorder.ChannelStatus{{Name: "vr/r1/state", Msgs: 300, Skipped: 2, Drops: 1}, {Name: "vr/r1/camera/front", Msgs: 360}}}
	lines := finalLines(st, 79)
	if len(lines) < 2 {
		t.Fatalf("%q", lines)
	}
	for _, l := range lines {
		if len([]rune(l)) > 79 || strings.HasSuffix(l, "mi") || strings.HasPrefix(strings.TrimSpace(l), "ssing") {
			t.Errorf("%q", l)
		}
	}
	if got := strings.Join(strings.Fields(strings.Join(lines, " ")), " "); got != "record: "+plainLine(st) {
		t.Errorf("words lost: %q", got)
	}
	if one := finalLines(st, 0); len(one) != 1 {
		t.Errorf("off a terminal: %q", one)
	}
}
