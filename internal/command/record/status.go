package record

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/textfit"
)

// status prints the recorder's status: a table redrawn in place on a
// terminal, fitted to its width and height (a wrapped or scrolled row
// would make every redraw stack another copy); a plain line every 10 s
// otherwise.
type status struct {
	w           io.Writer
	tty         bool
	lines       int // drawn last time, to move up over
	lastPlain   time.Time
	lastSession recorder.SessionStatus
}

func newStatus(w io.Writer) *status {
	return &status{w: w, tty: cliutil.IsTerminal(w)}
}

// size is the terminal's (it may change between redraws).
func (s *status) size() (width, height int) {
	width, height, _ = cliutil.Terminal(s.w)
	return width, height
}

func (s *status) show(st recorder.Status) {
	if s.tty {
		w, h := s.size()
		s.draw(table(st, w-1, h-1))
		return
	}
	if st.Zenoh != nil {
		if ev := st.Zenoh.Change(s.lastSession); ev != "" {
			fmt.Fprintln(s.w, "record: "+ev)
		}
		s.lastSession = *st.Zenoh
	}
	if time.Since(s.lastPlain) >= 10*time.Second {
		s.lastPlain = time.Now()
		fmt.Fprintln(s.w, "record: "+plainLine(st))
	}
}

// final prints the summary line (after the last table on a terminal,
// wrapped between words to its width).
func (s *status) final(st recorder.Status) {
	width := 0
	if s.tty {
		w, h := s.size()
		s.draw(table(st, w-1, h-1))
		width = w - 1
	}
	for _, l := range finalLines(st, width) {
		fmt.Fprintln(s.w, l)
	}
}

// finalLines is the summary line in lines of at most width columns (0:
// one line), continued under its text (it wrapped mid-word on 80 columns).
func finalLines(st recorder.Status, width int) []string {
	return textfit.WrapIndent("record: "+plainLine(st), width, len("record: "))
}

func (s *status) draw(rows []string) {
	var b strings.Builder
	if s.lines > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", s.lines)
	}
	for _, r := range rows {
		b.WriteString("\r\x1b[2K" + r + "\n")
	}
	for i := len(rows); i < s.lines; i++ { // fewer rows than last time
		b.WriteString("\r\x1b[2K\n")
	}
	s.lines = max(len(rows), s.lines)
	io.WriteString(s.w, b.String())
}

// table is the status table in at most width columns and height rows:
// the channels (a channel that could not be opened says so in its row),
// the totals, the zenoh session, and one row per channel warning.
func table(s recorder.Status, width, height int) []string {
	const cols = " %8s %7s %6s %6s %4s %6s %5s"
	nameW := max(width-(8+7+6+6+4+6+5+7), 8)
	row := func(name string, f ...string) string {
		args := []any{nameW, trim(name, nameW)}
		for _, v := range f {
			args = append(args, v)
		}
		return fit(fmt.Sprintf("%-*s"+cols, args...), width)
	}
	chans := append([]recorder.ChannelStatus(nil), s.Channels...)
	sort.Slice(chans, func(i, j int) bool { return chans[i].Name < chans[j].Name })
	var notes []string // below the totals
	if s.Zenoh != nil {
		notes = append(notes, fit(s.Zenoh.String(), width))
	}
	if s.Snapshot != nil {
		notes = append(notes, fit(s.Snapshot.String(), width))
	}
	for _, c := range chans {
		if c.Warning != "" {
			notes = append(notes, fit("! "+c.Name+": "+c.Warning, width))
		}
	}
	room := max(height-2-len(notes), 1) // header, totals, notes
	if len(chans) > room {
		rest := chans[room-1:]
		var msgs uint64
		for _, c := range rest {
			msgs += c.Msgs
		}
		chans = append(chans[:room-1:room-1], recorder.ChannelStatus{Name: fmt.Sprintf("(+%d more)", len(rest)), Msgs: msgs})
	}
	out := []string{row("channel", "msgs", "Hz", "MB/s", "skip", "rst", "drops", "undec")}
	for _, c := range chans {
		if c.Error != "" {
			out = append(out, fit(fmt.Sprintf("%-*s NOT RECORDED: %s", nameW, trim(c.Name, nameW), c.Error), width))
			continue
		}
		out = append(out, row(c.Name, count(c.Msgs, 8), strconv.FormatFloat(c.Hz, 'f', 1, 64), strconv.FormatFloat(c.MBps, 'f', 2, 64),
			count(c.Skipped, 6), count(c.Restarts, 4), count(c.Drops, 6), count(c.Undecodable, 5)))
	}
	ratio := ""
	if s.BytesWritten > 0 {
		var raw uint64
		for _, c := range s.Channels {
			raw += c.Bytes
		}
		ratio = fmt.Sprintf(", compression %.2fx", float64(raw)/float64(s.BytesWritten))
	}
	out = append(out, fit(fmt.Sprintf("%s elapsed, %s written%s", s.Elapsed.Round(time.Second), ui.Bytes(s.BytesWritten), ratio), width))
	return append(out, notes[:min(len(notes), max(height-len(out), 0))]...)
}

// count prints n in at most w characters (12345 in 4 → 12k).
func count(n uint64, w int) string {
	s := strconv.FormatUint(n, 10)
	if len(s) <= w {
		return s
	}
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}} {
		for _, prec := range []int{1, 0} {
			if s = strconv.FormatFloat(float64(n)/u.div, 'f', prec, 64) + u.unit; len(s) <= w {
				return s
			}
		}
	}
	return s
}

// fit cuts s to width columns.
func fit(s string, width int) string {
	if r := []rune(s); len(r) > width {
		return string(r[:max(width, 0)])
	}
	return s
}

// trim shortens a name to n columns, keeping its end (the distinctive part).
func trim(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

func plainLine(s recorder.Status) string {
	var msgs, drops, skipped uint64
	for _, c := range s.Channels {
		msgs, drops, skipped = msgs+c.Msgs, drops+c.Drops, skipped+c.Skipped
	}
	line := fmt.Sprintf("%s: %d channels, %d messages, %s written, %d missing by seq, %d dropped by the recorder",
		s.Elapsed.Round(time.Second), len(s.Channels), msgs, ui.Bytes(s.BytesWritten), skipped, drops)
	if s.Zenoh != nil {
		line += "; " + s.Zenoh.String()
	}
	if s.Snapshot != nil {
		line += "; " + s.Snapshot.String()
	}
	if n := len(s.Failed()); n > 0 {
		line += fmt.Sprintf(", %d NOT RECORDED (could not be opened)", n)
	}
	warned := 0
	for _, c := range s.Channels {
		if c.Warning != "" {
			warned++
		}
	}
	if warned > 0 {
		line += fmt.Sprintf(", %d recorded with a limit (see the warnings)", warned)
	}
	return line
}
