package analyzer

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/livecheck"
	"github.com/vrlog/vrlog/sampler"
	"github.com/vrlog/vrlog/textfit"
)

// WriteText prints the report as aligned tables for a person. Event times
// are printed in tf (elapsed seconds since the session epoch by default).
func (r *Report) WriteText(w io.Writer, tf codec.TimeFormat) error {
	return r.WriteTextWidth(w, tf, 0)
}

// WriteTextWidth is WriteText fitted to width columns (a terminal's):
// lines wrapped under their own text, the tables split into groups of
// columns that fit, each led by the channel. 0 is WriteText's layout.
func (r *Report) WriteTextWidth(out io.Writer, tf codec.TimeFormat, width int) error {
	w := textfit.NewWriter(out, width)
	defer w.Flush()
	at := func(ns int64) string {
		if tf == codec.TimeElapsed {
			return fmt.Sprintf("%.3f s", codec.Elapsed(ns, r.EpochNs))
		}
		return tf.Format(ns, r.EpochNs)
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	for _, f := range r.Files {
		how := "index"
		if !f.Indexed {
			how = "linear scan: no footer (unfinished or crashed recording; `vrlog recover` writes an indexed copy)"
		}
		p("file     %s: %s via %s\n", f.Path, f.read(), how)
		if f.TornTail >= 0 {
			p("         torn tail at byte %d: the recording stopped mid-chunk; everything before it is analyzed\n", f.TornTail)
		}
		if !f.PayloadsChecked {
			p("         checked record metadata and its CRCs only: payload CRCs not checked (vrlog verify, or a full decode)\n")
		}
		for _, s := range f.SkippedChunks {
			p("         SKIPPED CORRUPT CHUNK: %s\n", s)
		}
		for _, s := range f.Warnings {
			p("         warning: damaged, read around it (no record lost): %s\n", s)
		}
	}
	if r.EpochSource != "" {
		p("epoch    %s  (%s)\n", codec.FormatRFC3339(r.EpochNs), r.EpochSource)
		p("span     %.3f s (capture time, %s .. %s)\n", r.DurationS, at(r.StartNs), at(r.EndNs))
	}
	for _, n := range r.Notes {
		p("note     %s\n", n)
	}
	atElapsed := func(e float64) string { return at(r.EpochNs + int64(math.Round(e*1e9))) }
	for _, s := range r.Snapshots {
		p("snapshot %s: triggered by %s at %s; window %gs before, %gs after: %s .. %s\n",
			s.File, s.Cause, atElapsed(s.TriggerElapsed), s.BeforeS, s.AfterS, atElapsed(s.FromElapsed), atElapsed(s.ToElapsed))
		for _, t := range s.Triggers[1:] {
			p("         extended by %s at %s\n", t.Cause, atElapsed(t.Elapsed))
		}
		if n := s.TriggerCount - len(s.Triggers); n > 0 {
			p("         extended by %d more triggers\n", n)
		}
		if s.Short != "" {
			p("         short: %s\n", s.Short)
		}
	}
	p("\n")
	tb := &textfit.Table{Indent: "  ", Keep: 1, Right: true}
	tb.Row("channel", "kind", "count", "rate Hz", "nominal Hz", "dt p50", "dt p99", "dt max ms", "skipped", "restarts", "outages", "dups", "reorders", "rec drops", "undecodable", "latency p50", "p99 ms")
	d := func(v any) string { return fmt.Sprint(v) }
	f := func(format string, v float64) string { return fmt.Sprintf(format, v) }
	for _, c := range r.Channels {
		lat := []string{"-", "-"}
		if c.LatencyMs != nil {
			lat = []string{f("%.3f", c.LatencyMs.P50), f("%.3f", c.LatencyMs.P99)}
		}
		if c.Kind == KindProbe {
			tb.Row(append([]string{c.Name, string(c.Kind), d(c.Count), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", d(c.RecorderDrops), d(c.Undecodable)}, "-", "-")...)
			continue
		}
		tb.Row(append([]string{c.Name, string(c.Kind), d(c.Count), f("%.2f", c.RateHz), f("%.2f", c.NominalRateHz),
			f("%.3f", c.DtMs.P50), f("%.3f", c.DtMs.P99), f("%.3f", c.DtMs.Max), d(c.Skipped), d(c.RestartCount), d(len(c.Outages)), d(c.Duplicates), d(c.Reorders),
			d(c.RecorderDrops), d(c.Undecodable)}, lat...)...)
	}
	w.Flush()
	tb.Write(out, width)
	for _, c := range r.Channels {
		if c.Error != "" {
			p("ERROR    channel %s%s was NOT RECORDED: %s\n", c.Name, on(c), c.Error)
		}
		if c.Warning != "" {
			p("warning  channel %s%s: %s\n", c.Name, on(c), c.Warning)
		}
		if u := c.FirstUndecodable; u != nil {
			p("undecodable  channel %s: %d records without a stamp; the first, received at %s, at byte %d: %s\n",
				c.Name, c.Undecodable, codec.FormatRFC3339(u.RecvWallNs), u.Offset, u.Reason)
		}
	}
	any := false
	for _, c := range r.Channels {
		if c.Kind == KindProbe || !sourceWorthSaying(c) {
			continue
		}
		if !any {
			section := "\ntiming sources (where stamps and counters came from; docs/schemas.md says how to declare a payload's):\n"
			p("%s", section)
			any = true
		}
		p("  %s  stamp: %s; seq: %s%s\n", c.Name, c.StampSource, c.SeqSource, sourceAdvice(c))
	}

	section := func(title string) { p("\n%s\n", title) }
	any = false
	for _, c := range r.Channels {
		for i, s := range c.Skips {
			if !any {
				section("skips (samples that never arrived, by seq):")
				any = true
			}
			if i == 20 {
				p("  %s  … %d more gaps\n", c.Name, len(c.Skips)-20)
				break
			}
			p("  %s%s  seq %d → %d: %d skipped, at %s\n", c.Name, on(c), s.LastSeq, s.Seq, s.Skipped, at(s.TNs))
		}
	}
	any = false
	for _, c := range r.Channels {
		for _, s := range c.Restarts {
			if !any {
				section("restarts (seq went back: the publisher restarted):")
				any = true
			}
			p("  %s%s  seq %d → %d: elapsed froze at %.2f s, resumed at %.2f s (%.2f s later)\n",
				c.Name, on(c), s.LastSeq, s.Seq, s.ElapsedBefore, s.ElapsedAfter, s.GapS)
		}
	}
	any = false
	for _, c := range r.Channels {
		for _, o := range c.Outages {
			if !any {
				section(fmt.Sprintf("outages (capture gap above %g × the nominal period):", r.OutageFactor))
				any = true
			}
			tag := ""
			if o.Restart {
				tag = ", ended by a restart"
			}
			if o.Ended {
				tag = ", then silent until the recording ended (the stream stopped)"
			}
			p("  %s%s  %.3f s gap from %s to %s (nominal %.3f ms)%s\n", c.Name, on(c), o.GapS, at(o.FromNs), at(o.ToNs), c.NominalPeriodMs, tag)
		}
	}
	if len(r.Lag) > 0 {
		section("frame-to-state lag (frame t_ns minus state t_ns, capture clock):")
		for _, l := range r.Lag {
			p("  %s vs %s: %d frames; latest state: p50 %.3f p99 %.3f max %.3f ms; nearest: p50 %.3f min %.3f max %.3f ms;\n"+
				"    delay against the state timeline (receive clock): p50 %.3f p99 %.3f max %.3f ms; rejected above %.3f ms: %d (%.2f %%)",
				l.Frames, l.States, l.Count, l.LatestMs.P50, l.LatestMs.P99, l.LatestMs.Max,
				l.NearestMs.P50, l.NearestMs.Min, l.NearestMs.Max, l.InterpolatedMs.P50, l.InterpolatedMs.P99, l.InterpolatedMs.Max,
				l.ToleranceMs, l.Rejected, 100*l.RejectedFraction)
			if l.Unpaired > 0 {
				p("; %d captured before the first state", l.Unpaired)
			}
			p("\n")
			if l.AcrossOutage > 0 {
				p("    %d paired across an outage of the states (no lag measurement: left out of the figures above and of the max-lag check):\n", l.AcrossOutage)
				for _, o := range l.AcrossOutages {
					p("      %s\n", o.describe())
				}
				var listed uint64
				for _, o := range l.AcrossOutages {
					listed += o.Frames
				}
				if listed < l.AcrossOutage {
					p("      and %d more frames across gaps not listed\n", l.AcrossOutage-listed)
				}
			}
		}
	}
	r.writeReaction(w, out, width)
	if c := r.Clock; c != nil {
		section("clock (simulator minus recorder, from clock-sync probes):")
		drift := "n/a (fewer than 3 probes used)"
		switch {
		case c.DriftValid:
			drift = fmt.Sprintf("%.3f ± %.3f ppm (95 %%)", c.DriftPPM, *c.DriftCIPPM)
		case c.DriftCIPPM != nil:
			drift = fmt.Sprintf("not valid: %.3f ± %.3f ppm (95 %%), wider than ± %g ppm", c.DriftPPM, *c.DriftCIPPM, sampler.MaxDriftCIPPM)
		}
		p("  offset %+.3f ms from the %d lowest-RTT of %d probes; rtt %.3f ms (min %.3f); drift %s\n",
			c.OffsetMs, c.Used, c.Probes, c.RTTMs, c.MinRTTMs, drift)
	}
	if len(r.Hosts) > 0 {
		section(fmt.Sprintf("receive clock: the simulator's (time service %s), each host's stamps converted by its offset; latency is each host's transport latency:", r.Hosts[0].TimeService))
		for _, h := range r.Hosts {
			drift := ""
			if h.DriftValid {
				drift = fmt.Sprintf("; drift %+.3f ppm", h.DriftPPM)
			}
			label := h.File
			if h.Name != "" {
				label = h.Name
			}
			p("  %s: offset %+.3f ms ± %.3f ms (simulator minus host) from the %d lowest-RTT of %d probes on %s; rtt %.3f ms%s\n",
				label, h.OffsetMs, h.UncertaintyMs, h.Used, h.Probes, h.ProbeChannel, h.RTTMs, drift)
			switch fs := h.Files; {
			case len(fs) > 4:
				p("    %d files: %s … %s\n", len(fs), fs[0], fs[len(fs)-1])
			case len(fs) > 0:
				p("    files: %s\n", strings.Join(fs, ", "))
			case h.Name != "":
				p("    file: %s\n", h.File)
			}
			if len(h.Channels) > 0 {
				p("    streams: %s\n", strings.Join(h.Channels, ", "))
			}
			if h.RecoveredFrom != "" {
				p("    RECOVERED: its recorder never finished %s (crash, kill -9, power loss); what it still held then is not in this log\n", h.RecoveredFrom)
			}
		}
	}
	if len(r.Checks) > 0 {
		section("checks:")
		for _, c := range r.Checks {
			mark := "PASS"
			if !c.Pass {
				mark = "FAIL"
			}
			p("  %s  %s\n", mark, c.Message)
		}
		verdict := "PASS"
		if !r.Pass {
			verdict = fmt.Sprintf("FAIL (%d of %d checks failed)", len(r.Failed()), len(r.Checks))
		}
		p("\nresult: %s\n", verdict)
	}
	return nil
}

// read says how much of the file was read: "3.2 MiB, read 31.7 KiB (1.0 %)".
func (f FileReport) read() string {
	pct := 0.0
	if f.SizeBytes > 0 {
		pct = 100 * float64(f.BytesRead) / float64(f.SizeBytes)
	}
	return fmt.Sprintf("%s, read %s (%.1f %%)", ui.Bytes(f.SizeBytes), ui.Bytes(f.BytesRead), pct)
}

// on names the hosts of a merged log that recorded c: " (on HOST)", or "".
func on(c ChannelReport) string {
	if len(c.Hosts) == 0 {
		return ""
	}
	return " (on " + strings.Join(c.Hosts, ", ") + ")"
}

// sourceWorthSaying: a channel timed from anything but a built-in
// schema's payload (a declared schema, zenoh's stamps, receive stamps).
// A declared C struct whose stamp field is named t_ns is said too: its
// schema, not its field's name, makes a channel built in.
func sourceWorthSaying(c ChannelReport) bool {
	k := livecheck.KindOf(c.Schema)
	return k != livecheck.KindState && k != livecheck.KindFrame
}

// sourceAdvice says what a channel's sources cannot show.
func sourceAdvice(c ChannelReport) string {
	var miss []string
	if c.StampSource == livecheck.FromReceive {
		miss = append(miss, "no capture stamp: no latency, intervals as received")
	}
	if c.SeqSource == livecheck.FromCount {
		miss = append(miss, "no counter: no skip or restart can be seen")
	}
	if len(miss) == 0 {
		return ""
	}
	return " (" + strings.Join(miss, "; ") + ": declare the payload's, docs/schemas.md)"
}
