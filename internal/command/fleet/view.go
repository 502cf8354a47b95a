package fleet

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/fleetctl"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/textfit"
)

// StatusSchema names the JSON lines `fleet --json` prints while it
// records; FleetSchema its last line.
const (
	StatusSchema = "vrlog.fleet.status/1"
	FleetSchema  = "vrlog.fleet/1"
)

// plainEvery is how often the status is printed off a terminal (and
// with --json).
const plainEvery = 5 * time.Second

// view shows a fleet recording: on a terminal one table redrawn in
// place, off one a line per recorder every plainEvery, and events (a
// recorder silent, answering again) as lines of their own; with --json,
// a JSON line of every status on stdout.
type view struct {
	w, out  io.Writer
	quiet   bool
	jsonOut bool
	tty     bool
	width   int
	height  int
	name    string

	mu        sync.Mutex
	drawn     int // lines of the table on the terminal
	lastPlain time.Time
	since     time.Time                   // the start
	base      map[string]*fleetctl.Member // each recorder as found: its counters before the recording
	silent    map[string]bool
}

func newView(c *cli.Context, name string) *view {
	width, height, tty := cliutil.Terminal(c.App.ErrWriter)
	return &view{w: c.App.ErrWriter, out: c.App.Writer, quiet: c.Bool("quiet"), jsonOut: c.Bool("json"), tty: tty,
		width: max(width, 40), height: max(height, 4), name: name, base: map[string]*fleetctl.Member{}, silent: map[string]bool{}}
}

// say prints a line on stderr, above the table (unless quiet and not
// warn).
func (v *view) say(warn bool, format string, args ...any) {
	if v.quiet && !warn {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clear()
	fmt.Fprintln(v.w, cliutil.Readable("fleet: "+fmt.Sprintf(format, args...)))
}

// clear removes the table from the terminal (the caller holds v.mu).
func (v *view) clear() {
	if v.tty && v.drawn > 0 {
		fmt.Fprintf(v.w, "\x1b[%dA\x1b[J", v.drawn)
		v.drawn = 0
	}
}

// found reports the recorders found, and each left out.
func (v *view) found(ms []fleetctl.Member) {
	for i := range ms {
		m := ms[i]
		v.base[m.Name] = &m
		if m.Role == fleetctl.LeftOut {
			v.say(true, "%s: LEFT OUT: %s%s", m.Name, m.Why, hint(m))
		}
	}
}

// hint says what to do about a recorder found unfit, in the words of
// the command line.
func hint(m fleetctl.Member) string {
	switch st := m.Status; {
	case m.Silent && st == nil && !strings.Contains(m.Why, "is on the network"):
		return fmt.Sprintf(" (started with record --name %s, and reachable?)", m.Name)
	case st != nil && st.Mode != "files":
		return " (record --snapshot)"
	case st != nil && st.State != "idle":
		return fmt.Sprintf(" (vrlog rec stop %s; record --idle arms a recorder without recording)", m.Name)
	}
	return ""
}

// started reports the start's outcome.
func (v *view) started(ms []fleetctl.Member, took time.Duration) {
	v.since = time.Now()
	var names []string
	for _, m := range ms {
		switch m.Role {
		case fleetctl.Recording:
			names = append(names, m.Name)
		case fleetctl.LeftOut, fleetctl.Unanswered:
			if v.base[m.Name].Role != fleetctl.LeftOut { // said already
				v.say(true, "%s: %s: %s", m.Name, strings.ToUpper(string(m.Role)), m.Why)
			}
		}
	}
	v.say(false, "started %s in %v", strings.Join(names, ", "), took.Round(time.Millisecond))
}

// update shows the members' status: events for recorders that went
// silent or answer again, the table or the periodic lines, the JSON line.
func (v *view) update(ms []fleetctl.Member, until string, pollStart time.Time) {
	for _, m := range ms {
		silent := m.LastAnswer.Before(pollStart) && m.Role != fleetctl.LeftOut
		switch {
		case silent && !v.silent[m.Name]:
			v.say(true, "%s: NO ANSWER to its status for %s (a partition? the others record on)%s", m.Name, sinceStr(m.LastAnswer), v.holds(m))
		case !silent && v.silent[m.Name]:
			v.say(true, "%s: answers again: %s", m.Name, v.state(m))
		}
		v.silent[m.Name] = silent
	}
	now := time.Now()
	plain := now.Sub(v.lastPlain) >= plainEvery
	if plain {
		v.lastPlain = now
	}
	if v.jsonOut && plain {
		v.printJSON(statusLine{Schema: StatusSchema, Name: v.name, ElapsedS: round3(now.Sub(v.since).Seconds()), Recorders: ms})
	}
	if v.quiet {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	elapsed := now.Sub(v.since).Round(time.Second)
	if v.tty {
		v.clear()
		lines := fit(append([]string{fmt.Sprintf("fleet %s: recording for %v; stops %s", v.name, elapsed, until)}, v.table(ms)...), v.width, v.height)
		for _, l := range lines {
			fmt.Fprintln(v.w, "\x1b[2K"+l)
		}
		v.drawn = len(lines)
		return
	}
	if plain {
		for _, m := range ms {
			fmt.Fprintf(v.w, "fleet: %v: %s\n", elapsed, v.line(m))
		}
	}
}

// line is a recorder's status in words, for a line of its own.
func (v *view) line(m fleetctl.Member) string {
	r := v.row(m)
	if m.Status == nil {
		return fmt.Sprintf("%s: %s", m.Name, r[2])
	}
	return fmt.Sprintf("%s (host %s): %s, file %s, %s written, receiving %s, %s dropped, disk %s", r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7])
}

// fit cuts lines to a terminal of width × height: each line short of
// the last column, and the rows that do not fit summed up in one line
// (redrawing in place needs every line on the screen).
func fit(lines []string, width, height int) []string {
	if len(lines) > height-1 {
		more := len(lines) - (height - 2)
		lines = append(lines[:height-2:height-2], fmt.Sprintf("… and %d more recorders (vrlog recorders lists them all)", more))
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > width-1 {
			lines[i] = string(r[:width-1])
		}
	}
	return lines
}

// done removes the table.
func (v *view) done() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clear()
}

// table is the status table's lines: a header and one row per recorder,
// columns aligned.
func (v *view) table(ms []fleetctl.Member) []string {
	t := textfit.Table{}
	t.Row("NAME", "HOST", "STATE", "FILE", "WRITTEN", "RECEIVING", "DROPS", "DISK")
	for _, m := range ms {
		t.Row(v.row(m)...)
	}
	var b strings.Builder
	t.Write(&b, 0) // a strings.Builder takes every write
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// row is a recorder's cells: what it wrote and dropped since the start
// (its counters less those it had when found), what it receives, whether
// its disk keeps up.
func (v *view) row(m fleetctl.Member) []string {
	st := m.Status
	if st == nil {
		return []string{m.Name, "-", v.state(m), "-", "-", "-", "-", "-"}
	}
	var hz, mbps float64
	for _, ch := range st.Channels {
		hz += ch.Hz
		mbps += ch.MBps
	}
	written, drops := st.BytesWritten, st.Drops
	if b := v.base[m.Name]; b != nil && b.Status != nil {
		written -= b.Status.BytesWritten
		drops -= min(drops, b.Status.Drops)
	}
	disk := "keeps up"
	if !st.DiskKeepsUp {
		disk = "behind by " + ui.Bytes(st.BacklogBytes)
	}
	file := "-"
	if st.File != "" {
		file = filepath.Base(st.File)
	}
	return []string{m.Name, st.Host, v.state(m), file, ui.Bytes(written), fmt.Sprintf("%.0f msg/s, %.1f MB/s", hz, mbps), fmt.Sprint(drops), disk}
}

// state is a recorder's state in the table: its own, what the fleet
// makes of it, and how long it has been silent.
func (v *view) state(m fleetctl.Member) string {
	s := string(m.Role)
	if m.Status != nil {
		s = m.Status.State
		if m.Role != fleetctl.Recording && m.Role != fleetctl.Stopped {
			s += " (" + string(m.Role) + ")"
		}
	}
	if v.silent[m.Name] {
		s = fmt.Sprintf("no answer for %s (last: %s)", sinceStr(m.LastAnswer), s)
	}
	return s
}

// holds says what a silent recorder held when it last answered.
func (v *view) holds(m fleetctl.Member) string {
	if m.Status == nil {
		return ""
	}
	row := v.row(m)
	return fmt.Sprintf("; it last said: %s, %s written into %s", m.Status.State, row[4], row[3])
}

// statusLine is a --json line while recording.
type statusLine struct {
	Schema    string            `json:"schema"`
	Name      string            `json:"name"`
	ElapsedS  float64           `json:"elapsed_s"`
	Recorders []fleetctl.Member `json:"recorders"`
}

// printJSON prints one JSON line on stdout.
func (v *view) printJSON(x any) error {
	b, _ := json.Marshal(x) // plain data: never fails
	_, err := fmt.Fprintf(v.out, "%s\n", b)
	return err
}

func sinceStr(t time.Time) string {
	if t.IsZero() {
		return "the start"
	}
	return time.Since(t).Round(100 * time.Millisecond).String()
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
