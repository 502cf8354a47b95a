package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vrlog/vrlog/replayer"
)

func writeJSON(w io.Writer, r *replayer.Report) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}

func us(ns int64) string { return time.Duration(ns).Round(100 * time.Nanosecond).String() }

func writeText(w io.Writer, r *replayer.Report) error {
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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANNEL\tTRANSPORT\tTOPIC\tSENT\tDROPPED\tOUTAGE\tERR p50\tp99\tmax\t")
	rows := append(append([]replayer.ChannelReport{}, r.Channels...), r.Total)
	for _, c := range rows {
		p50, p99, mx := "-", "-", "-"
		if c.TimingError.Count > 0 {
			p50, p99, mx = us(c.TimingError.P50), us(c.TimingError.P99), us(c.TimingError.Max)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t\n", c.Name, c.Transport, c.Topic, c.Sent, c.Dropped, c.OutageSkipped, p50, p99, mx)
	}
	return tw.Flush()
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
