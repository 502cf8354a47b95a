package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vrlog/vrlog/replayer"
	"github.com/vrlog/vrlog/textfit"
)

func writeJSON(w io.Writer, r *replayer.Report) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}

func us(ns int64) string { return time.Duration(ns).Round(100 * time.Nanosecond).String() }

// writeText prints the summary for a person, fitted to width columns (a
// terminal's; 0: no limit): lines wrapped between words, the table split
// into groups of columns, each led by the channel (on an 80-column
// terminal it wrapped mid-number).
func writeText(out io.Writer, r *replayer.Report, width int) error {
	w := textfit.NewWriter(out, width)
	rate := fmt.Sprint(r.Rate, "×")
	if r.Rate == "max" {
		rate = "max"
	}
	fmt.Fprintf(w, "replayed %s on %s in %.3f s (%s, %s clock, %s)",
		plural(r.Total.Sent, "record"), plural(uint64(len(r.Channels)), "channel"), r.ElapsedS, rate, r.Clock, plural(uint64(r.Passes), "pass"))
	if r.Interrupted {
		fmt.Fprint(w, ", interrupted")
	}
	if r.EndedBy != "" {
		fmt.Fprint(w, ", ended early by the lockstep's bounds (below)")
	}
	fmt.Fprintln(w)
	if r.RestampDeltaNs != nil {
		fmt.Fprintf(w, "restamped: every stamp shifted by %d ns\n", *r.RestampDeltaNs)
	}
	if r.WaitedS != nil {
		fmt.Fprintf(w, "waited %.3f s for subscribers\n", *r.WaitedS)
	}
	if l := r.Lockstep; l != nil {
		fmt.Fprintf(w, "lockstep on %s: %d trigger records answered, %d missed (no answer within %g s)", l.Key, l.Answered, l.Missed, l.TimeoutS)
		if l.Late > 0 {
			fmt.Fprintf(w, ", %d late answers dropped", l.Late)
		}
		if l.Duplicates > 0 {
			fmt.Fprintf(w, ", %d duplicate answers dropped", l.Duplicates)
		}
		fmt.Fprintln(w)
		if l.UntaggedAfterMiss > 0 {
			fmt.Fprintf(w, "WARNING: %d trigger records were released by an untagged answer after a missed step: each may have been released by the answer to the one before it (tag the answers; docs/replay.md)\n", l.UntaggedAfterMiss)
		}
	}
	if c := r.Capture; c != nil {
		var parts []string
		for _, ch := range c.Channels {
			parts = append(parts, fmt.Sprintf("%s %s %d", ch.Role, ch.Name, ch.Records))
		}
		fmt.Fprintf(w, "captured into %s: %s\n", c.Output, strings.Join(parts, ", "))
		for _, m := range c.Missed {
			fmt.Fprintf(w, "capture: nothing captured on %s\n", m)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	tb := &textfit.Table{Keep: 1}
	tb.Row("CHANNEL", "TRANSPORT", "TOPIC", "SENT", "DROPPED", "OUTAGE", "ERR p50", "p99", "max")
	rows := append(append([]replayer.ChannelReport{}, r.Channels...), r.Total)
	for _, c := range rows {
		p50, p99, mx := "-", "-", "-"
		if c.TimingError.Count > 0 {
			p50, p99, mx = us(c.TimingError.P50), us(c.TimingError.P99), us(c.TimingError.Max)
		}
		tb.Row(c.Name, c.Transport, c.Topic, fmt.Sprint(c.Sent), fmt.Sprint(c.Dropped), fmt.Sprint(c.OutageSkipped), p50, p99, mx)
	}
	return tb.Write(out, width)
}

// plural is "1 record", "2 records", "1 pass", "3 passes".
func plural(n uint64, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "s"):
		return fmt.Sprint(n, " ", noun, "es")
	}
	return fmt.Sprint(n, " ", noun, "s")
}
