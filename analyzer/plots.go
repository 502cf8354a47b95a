package analyzer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/sampler"
)

// The HTML report's plots. Every time plot maps the same session range onto
// the same x span, so the timeline, interval, rate and clock plots line up
// under each other; each carries its mapping (data-t0, data-t1, data-x0,
// data-x1) for the hover script and the tests, and sparse hover readouts
// (data-hover: [from, to, text] in elapsed seconds).

var kindColor = map[string]string{KindState: "#2ca02c", KindFrame: "#3366cc", KindRaw: "#7f7f7f", KindProbe: "#9467bd"}

// timeAxis maps capture time (unix ns) to the x of a full-width plot, in
// elapsed seconds since the session epoch.
type timeAxis struct {
	x     linear
	epoch int64
	step  float64
}

// sessionAxis spans every channel's samples and the clock probes.
func (a *Analysis) sessionAxis(r *Report) timeAxis {
	lo, hi := r.StartNs, r.EndNs
	seen := r.EndNs != 0 || r.StartNs != 0
	widen := func(t int64) {
		if !seen {
			lo, hi, seen = t, t, true
		}
		lo, hi = min(lo, t), max(hi, t)
	}
	for _, c := range r.Channels {
		if c.Kind == KindRaw && c.Count > 0 {
			widen(c.FirstNs)
			widen(c.LastNs)
		}
	}
	for _, ch := range a.order {
		for _, p := range ch.probes {
			widen(p.T2)
		}
	}
	e0, e1 := codec.Elapsed(lo, r.EpochNs), codec.Elapsed(hi, r.EpochNs)
	if e1-e0 < 1e-3 {
		e0, e1 = e0-0.5, e1+0.5
	}
	pad := (e1 - e0) * 0.01 // no mark sits on the y axis
	e0, e1 = e0-pad, e1+pad
	return timeAxis{x: linear{e0, e1, padL, fullW - padR}, epoch: r.EpochNs, step: niceStep(e1-e0, 12)}
}

func (t timeAxis) at(ns int64) float64 { return t.x.at(codec.Elapsed(ns, t.epoch)) }

func (t timeAxis) el(ns int64) float64 { return codec.Elapsed(ns, t.epoch) }

// open starts a time plot of height h.
func (t timeAxis) open(h float64, plot, channel string, hover [][3]any) *svg {
	js, _ := json.Marshal(hover)
	if hover == nil {
		js = []byte("[]")
	}
	ch := ""
	if channel != "" {
		ch = " data-channel=" + attr(channel)
	}
	s := newSVG(fullW, h, fmt.Sprintf(`class="tplot" data-plot="%s"%s data-t0="%.6f" data-t1="%.6f" data-x0="%.1f" data-x1="%.1f" data-hover=%s`,
		plot, ch, t.x.lo, t.x.hi, t.x.a, t.x.b, attr(string(js))))
	return s
}

// close draws the time ticks along y0 and the hover crosshair.
func (t timeAxis) close(s *svg, y0 float64) template.HTML {
	s.xAxis(t.x, t.step, y0, func(v float64) string { return tickLabel(v, t.step) + " s" })
	s.f(`<line class="xhair" x1="0" x2="0" y1="%.1f" y2="%.1f"/>`, padT-4, y0)
	return s.html()
}

// timelinePlot stacks one lane per channel on the session's time axis: a
// bar where samples arrived, cut by the outages (hatched), with skips
// (red ticks) and restarts (orange bars) marked; clock probes as dots.
func (a *Analysis) timelinePlot(r *Report, t timeAxis) template.HTML {
	const laneH = 46.0
	lanes := padT + laneH*float64(len(r.Channels))
	h := lanes + padB
	if len(r.NotCaptured) > 0 {
		h += 16 // a row under the lanes for the "not captured" labels, clear of every lane's text
	}
	s := t.open(h, "timeline", "", nil)
	s.f(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="6" height="6" fill="#fbe3e3"/><line x1="0" y1="0" x2="0" y2="6" stroke="#d62728" stroke-width="2"/></pattern></defs>`)
	for _, v := range ticks(t.x.lo, t.x.hi, t.step) {
		x := t.x.at(v)
		s.f(`<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x, x, padT, h-padB)
	}
	// Under the lanes: the time between snapshots, not captured (left
	// blank, labelled in a row of its own below the lanes), and the snapshot triggers, so that no lane's
	// marker (a restart at the window's edge) is hidden by them.
	for _, g := range r.NotCaptured {
		x0, x1 := t.at(g.FromNs), t.at(g.ToNs)
		s.f(`<rect class="uncaptured" x="%.1f" y="%.1f" width="%.1f" height="%.1f" data-from="%.3f" data-to="%.3f">%s</rect>`, x0, padT, max(x1-x0, 1), h-padB-padT,
			g.FromElapsed, g.ToElapsed, title(fmt.Sprintf("not captured: %s, from %.3f s to %.3f s (no skip, outage or restart counted)", g.what(), g.FromElapsed, g.ToElapsed)))
		if x1-x0 > 90 {
			s.text((x0+x1)/2, lanes+11, "middle", "uncaptured-label", "not captured")
		}
	}
	for _, sn := range r.Snapshots {
		for _, tr := range sn.Triggers {
			x := t.at(r.EpochNs + int64(tr.Elapsed*1e9))
			s.f(`<line class="trigger" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" data-at="%.3f" data-cause=%s>%s</line>`, x, x, padT, h-padB, tr.Elapsed, attr(tr.Cause),
				title(fmt.Sprintf("snapshot trigger at %.3f s: %s", tr.Elapsed, tr.Cause)))
		}
	}
	for i, c := range r.Channels {
		y := padT + laneH*float64(i)
		bar := y + 24
		const barH = 14.0
		s.f(`<g class="lane" data-channel=%s data-kind="%s" data-samples="%d" data-skipped="%d" data-restarts="%d" data-outages="%d">`,
			attr(c.Name), c.Kind, c.Count, c.Skipped, c.RestartCount, len(c.Outages))
		s.text(t.x.a, y+11, "start", "lane-name", c.Name)
		s.text(t.x.b, y+11, "end", "lane-facts", laneFacts(c))
		color := kindColor[c.Kind]
		if c.Kind == KindProbe {
			for _, p := range a.byName[c.Name].probes {
				off, rtt := float64(p.Offset())/1e6, float64(p.RTT())/1e6
				s.f(`<circle class="probe" cx="%.1f" cy="%.1f" r="3.5" fill="%s" data-at="%.3f">%s</circle>`, t.at(p.T2), bar+barH/2, color, t.el(p.T2),
					title(fmt.Sprintf("clock probe at %.3f s: offset %+.3f ms, rtt %.3f ms", t.el(p.T2), off, rtt)))
			}
			s.f(`</g>`)
			continue
		}
		if c.Count == 0 {
			s.text((t.x.a+t.x.b)/2, bar+11, "middle", "lane-facts", "no samples")
			s.f(`</g>`)
			continue
		}
		// Where samples arrived: the channel's span minus its outages.
		from := c.FirstNs
		present := func(a, b int64) {
			x0, x1 := t.at(a), t.at(b)
			s.f(`<rect class="present" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s">%s</rect>`, x0, bar, max(x1-x0, 1.5), barH, color,
				title(fmt.Sprintf("%s: samples from %.3f s to %.3f s", c.Name, t.el(a), t.el(b))))
		}
		outs := slices.Clone(c.Outages)
		slices.SortFunc(outs, func(a, b OutageItem) int { return cmp.Compare(a.FromNs, b.FromNs) })
		cuts := slices.Clone(outs)
		for _, g := range r.NotCaptured { // blank: neither samples nor an outage
			cuts = append(cuts, OutageItem{FromNs: g.FromNs, ToNs: g.ToNs})
		}
		slices.SortFunc(cuts, func(a, b OutageItem) int { return cmp.Compare(a.FromNs, b.FromNs) })
		for _, o := range cuts {
			if o.FromNs > from && from <= c.LastNs {
				present(from, min(o.FromNs, c.LastNs))
			}
			from = max(from, o.ToNs)
		}
		if c.LastNs >= from {
			present(from, c.LastNs)
		}
		for _, o := range outs {
			x0, x1 := t.at(o.FromNs), t.at(o.ToNs)
			how := ""
			if o.Restart {
				how = ", ended by a restart"
			}
			s.f(`<rect class="outage" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#hatch)" data-from="%.3f" data-to="%.3f" data-gap-s="%.3f">%s</rect>`,
				x0, bar, max(x1-x0, 2), barH, o.FromElapsed, o.ToElapsed, o.GapS,
				title(fmt.Sprintf("outage: no sample for %.3f s, from %.3f s to %.3f s%s", o.GapS, o.FromElapsed, o.ToElapsed, how)))
			if label := fmt.Sprintf("%s outage", ms(o.GapS*1000)); x1-x0 > 7*float64(len(label))+16 {
				w := 6.5*float64(len(label)) + 10
				s.f(`<rect class="label-bg" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="2"/>`, (x0+x1-w)/2, bar+1, w, barH-2)
				s.text((x0+x1)/2, bar+11, "middle", "outage-label", label)
			}
		}
		for _, k := range c.Skips {
			x := t.at(k.TNs)
			s.f(`<path class="skip" d="M%.1f %.1fl-5 -8h10z" data-at="%.3f" data-skipped="%d">%s</path>`, x, bar-1, k.Elapsed, k.Skipped,
				title(fmt.Sprintf("skip at %.3f s: seq %d → %d, %d sample(s) never arrived", k.Elapsed, k.LastSeq, k.Seq, k.Skipped)))
		}
		for _, k := range c.Restarts {
			x := t.at(k.AfterNs)
			s.f(`<rect class="restart" x="%.1f" y="%.1f" width="4" height="%.1f" data-at="%.3f" data-seq="%d→%d">%s</rect>`, x-2, bar-5, barH+10, k.ElapsedAfter, k.LastSeq, k.Seq,
				title(fmt.Sprintf("publisher restart: seq %d → %d; elapsed froze at %.3f s, resumed at %.3f s", k.LastSeq, k.Seq, k.ElapsedBefore, k.ElapsedAfter)))
		}
		s.f(`</g>`)
	}
	return t.close(s, h-padB)
}

// captured is the part of [a, b) outside the spans not captured.
func captured(a, b int64, gaps []NotCaptured) int64 {
	n := b - a
	for _, g := range gaps {
		n -= max(min(b, g.ToNs)-max(a, g.FromNs), 0)
	}
	return n
}

func laneFacts(c ChannelReport) string {
	if c.Kind == KindProbe {
		return fmt.Sprintf("%d clock probes", c.Count)
	}
	parts := []string{fmt.Sprintf("%s · %d samples · %.2f Hz", c.Kind, c.Count, c.RateHz)}
	add := func(n uint64, one, many string) {
		if n == 1 {
			parts = append(parts, "1 "+one)
		} else if n > 1 {
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(c.Skipped, "skipped", "skipped")
	add(c.RestartCount, "restart", "restarts")
	add(uint64(len(c.Outages)), "outage", "outages")
	add(c.RecorderDrops, "recorder drop", "recorder drops")
	add(c.Undecodable, "undecodable", "undecodable")
	return strings.Join(parts, " · ")
}

// intervalTop is the top of a channel's interval axis: the largest
// interval, unless outliers make it larger than what the normal intervals
// and the outage threshold need; those are then clipped and marked.
func intervalTop(c ChannelReport, factor float64) float64 {
	hi := c.DtMs.Max
	robust := max(c.DtMs.P99, c.NominalPeriodMs*factor) * 1.25
	if robust > 0 {
		hi = min(hi, robust)
	}
	return max(hi*1.05, 1e-3)
}

// intervalPlot draws a channel's capture intervals over time, per bin the
// range from the smallest to the largest interval that ended in it. No line
// joins two bins, so a gap draws no ramp; intervals above the clipped axis
// end in a marker labelled with their value; outages are shaded.
func intervalPlot(c ChannelReport, sr *series, t timeAxis, factor float64) template.HTML {
	const h = 200.0
	top := intervalTop(c, factor)
	step := niceStep(top, 5)
	top = math.Ceil(top/step-1e-9) * step
	y := linear{0, top, h - padB, padT}
	var hover [][3]any
	type over struct {
		x, v float64
		at   float64
	}
	var overs []over
	var path, high strings.Builder
	highAt := c.NominalPeriodMs * 1.5 // a skipped sample's interval, at least: circled
	for i, b := range sr.data {
		if b.n == 0 {
			continue
		}
		t0, t1 := t.el(sr.start(i)), t.el(sr.start(i+1))
		text := fmt.Sprintf("%.3f–%.3f s: %d sample(s)", t0, t1, b.n)
		if b.dts > 0 {
			lo, hi := float64(b.minDt)/1e6, float64(b.maxDt)/1e6
			x := t.x.at((t0 + t1) / 2)
			y0, y1 := y.clamp(lo), y.clamp(hi)
			if y0-y1 < 3 {
				y0, y1 = y0+1.5, y1-1.5
			}
			fmt.Fprintf(&path, "M%.1f %.1fV%.1f", x, y0, y1)
			if hi > top {
				overs = append(overs, over{x, hi, t1})
			} else if highAt > 0 && hi > highAt {
				fmt.Fprintf(&high, `<circle cx="%.1f" cy="%.1f" r="3"/>`, x, y.at(hi))
			}
			if lo == hi {
				text += ", interval " + ms(hi)
			} else {
				text += fmt.Sprintf(", intervals %s to %s", ms(lo), ms(hi))
			}
		}
		hover = append(hover, [3]any{round6(t0), round6(t1), text})
	}
	s := t.open(h, "interval", c.Name, hover)
	s.f(`<g data-clip-ms="%.3f" data-nominal-ms="%.3f" class="meta"></g>`, top, c.NominalPeriodMs)
	for _, o := range c.Outages {
		x0, x1 := t.at(o.FromNs), t.at(o.ToNs)
		s.f(`<rect class="outage-bg" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, x0, padT, max(x1-x0, 1), h-padB-padT)
	}
	s.yAxis(y, step, t.x.a, t.x.b, func(v float64) string { return tickLabel(v, step) + " ms" })
	if c.NominalPeriodMs > 0 {
		ref(s, y, t.x, c.NominalPeriodMs, "nominal", "nominal "+ms(c.NominalPeriodMs))
		if th := c.NominalPeriodMs * factor; th <= top {
			ref(s, y, t.x, th, "threshold", fmt.Sprintf("outage above %s", ms(th)))
		}
	}
	s.f(`<path class="dt" stroke="%s" d="%s"/><g class="dt-high" fill="%s">%s</g>`, kindColor[c.Kind], path.String(), kindColor[c.Kind], high.String())
	// Overflow markers; the largest are labelled, never two labels closer than 80 units.
	slices.SortFunc(overs, func(a, b over) int { return cmp.Compare(b.v, a.v) })
	var labelled []float64
	for _, o := range overs {
		s.f(`<path class="overflow" d="M%.1f %.1fl-5 8h10z" data-at="%.3f" data-value-ms="%.3f">%s</path>`, o.x, padT-2, o.at, o.v,
			title(fmt.Sprintf("interval of %s ending at %.3f s (above the axis)", ms(o.v), o.at)))
		if len(labelled) < 8 && !slices.ContainsFunc(labelled, func(x float64) bool { return math.Abs(x-o.x) < 80 }) {
			labelled = append(labelled, o.x)
			anchor := "start"
			if o.x > t.x.b-80 {
				anchor = "end"
			}
			s.text(o.x+7, padT+8, anchor, "overflow-label", "↑ "+ms(o.v))
		}
	}
	return t.close(s, h-padB)
}

// ref draws a labelled horizontal reference line at value v.
func ref(s *svg, y linear, x linear, v float64, class, label string) {
	py := y.at(v)
	s.f(`<line class="ref %s" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, class, x.a, x.b, py, py)
	s.text(x.b-4, py-4, "end", "ref-label "+class, label)
}

// ratePlot draws a channel's sample rate over time, counted in windows of
// about ten nominal periods (at least 1/150 of the session).
func ratePlot(c ChannelReport, sr *series, t timeAxis, gaps []NotCaptured) template.HTML {
	const h = 130.0
	k := 1
	if sr.width > 0 {
		want := max(int64(c.NominalPeriodMs*1e6*10), int64((t.x.hi-t.x.lo)*1e9/150))
		k = max(1, int((want+sr.width-1)/sr.width))
	}
	type win struct{ t0, t1, hz float64 }
	var wins []win
	hiHz := c.NominalRateHz
	for i := 0; i < len(sr.data); i += k {
		var n uint32
		for j := i; j < min(i+k, len(sr.data)); j++ {
			n += sr.data[j].n
		}
		// Only the part of the window inside the channel's span counts.
		a, b := max(sr.start(i), c.FirstNs), min(sr.start(i+k), c.LastNs)
		if b <= a {
			continue
		}
		got := captured(a, b, gaps) // the time between snapshots is no rate of 0
		hz := float64(n) / (float64(got) / 1e9)
		if got < sr.width*int64(k)/4 { // a sliver at the channel's ends, or between snapshots, says nothing
			continue
		}
		wins = append(wins, win{t.el(a), t.el(b), hz})
		hiHz = max(hiHz, hz)
	}
	step := niceStep(max(hiHz*1.1, 1), 4)
	top := math.Ceil(hiHz*1.1/step) * step
	y := linear{0, top, h - padB, padT}
	var hover [][3]any
	var path strings.Builder
	for i, w := range wins {
		cmd := "L"
		if i == 0 || wins[i-1].t1 < w.t0-1e-9 {
			cmd = "M"
		}
		fmt.Fprintf(&path, "%s%.1f %.1fH%.1f", cmd, t.x.at(w.t0), y.at(w.hz), t.x.at(w.t1))
		hover = append(hover, [3]any{round6(w.t0), round6(w.t1), fmt.Sprintf("%.3f–%.3f s: %.1f Hz", w.t0, w.t1, w.hz)})
	}
	s := t.open(h, "rate", c.Name, hover)
	s.yAxis(y, step, t.x.a, t.x.b, func(v float64) string { return tickLabel(v, step) + " Hz" })
	if c.NominalRateHz > 0 {
		ref(s, y, t.x, c.NominalRateHz, "nominal", fmt.Sprintf("nominal %.4g Hz", c.NominalRateHz))
	}
	s.f(`<path class="rate" stroke="%s" d="%s"/>`, kindColor[c.Kind], path.String())
	return t.close(s, h-padB)
}

// clockPlot draws each clock-sync probe's offset (simulator minus recorder)
// with its uncertainty (± rtt/2), the kept lowest-RTT half filled, and the
// estimate. The axis fits the kept probes; others beyond it are clipped to
// the edge with a marker.
func clockPlot(probes []sampler.Probe, est *ClockReport, t timeAxis) template.HTML {
	const h = 170.0
	e := sampler.EstimateClock(probes)
	kept := map[int]bool{}
	order := make([]int, 0, len(probes))
	for i, p := range probes {
		if p.RTT() >= 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(probes[a].RTT(), probes[b].RTT()) })
	for _, i := range order[:e.Used] {
		kept[i] = true
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range kept {
		p := probes[i]
		o, r := float64(p.Offset())/1e6, float64(p.RTT())/1e6
		lo, hi = min(lo, o-r/2), max(hi, o+r/2)
	}
	if len(kept) == 0 {
		lo, hi = -1, 1
	}
	pad := max((hi-lo)*0.3, 0.05)
	lo, hi = lo-pad, hi+pad
	step := niceStep(hi-lo, 4)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	y := linear{lo, hi, h - padB, padT}
	var hover [][3]any
	s := t.open(h, "clock", "", hover)
	s.yAxis(y, step, t.x.a, t.x.b, func(v float64) string { return tickLabel(v, step) + " ms" })
	if est != nil {
		ref(s, y, t.x, est.OffsetMs, "nominal", fmt.Sprintf("offset %+.3f ms (mean of the %d lowest-RTT probes)", est.OffsetMs, est.Used))
	}
	for i, p := range probes {
		o, r := float64(p.Offset())/1e6, float64(p.RTT())/1e6
		x := t.at(p.T2)
		cls, state := "probe", "kept"
		if !kept[i] {
			cls, state = "probe dropped", "not used: higher RTT"
		}
		label := fmt.Sprintf("probe at %.3f s: offset %+.3f ms, rtt %.3f ms (%s)", t.el(p.T2), o, r, state)
		if o < lo || o > hi {
			edge := padT
			if o < lo {
				edge = h - padB
			}
			s.f(`<path class="overflow" d="M%.1f %.1fl-5 8h10z" data-value-ms="%.3f">%s</path>`, x, edge, o, title(label))
			continue
		}
		s.f(`<line class="errbar" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x, x, y.clamp(o-r/2), y.clamp(o+r/2))
		s.f(`<circle class="%s" cx="%.1f" cy="%.1f" r="4" data-offset-ms="%.3f" data-rtt-ms="%.3f" data-kept="%t">%s</circle>`,
			cls, x, y.at(o), o, r, kept[i], title(label))
	}
	return t.close(s, h-padB)
}

// histOpts describes a histogram plot.
type histOpts struct {
	plot, what string // data-plot; what a count counts ("frames")
	refs       []histRef
}

type histRef struct {
	ms           float64
	class, label string
}

// histPlot draws a distribution (ns values, shown in ms) over a range set
// by its middle, not by outliers: Tukey-style fences (quartiles ∓ 2 × the
// interquartile range), widened to the 1st and 99th percentiles and to the
// reference lines. Values beyond the
// range are counted in an underflow and an overflow bar at the ends,
// labelled with their counts.
func histPlot(hg *sampler.Histogram, o histOpts) template.HTML {
	const h, bars = 190.0, 48
	q := func(p float64) float64 { return float64(hg.Quantile(p)) / 1e6 }
	mn, mx := float64(hg.Min())/1e6, float64(hg.Max())/1e6
	q1, q3 := q(0.25), q(0.75)
	iqr := q3 - q1
	lo, hi := max(mn, min(q1-2*iqr, q(0.01))), min(mx, max(q3+2*iqr, q(0.99)))
	for _, r := range o.refs {
		lo, hi = min(lo, r.ms), max(hi, r.ms)
	}
	if hi-lo < 1e-3 {
		lo, hi = lo-0.5, hi+0.5
	}
	pad := (hi - lo) * 0.04
	lo, hi = lo-pad, hi+pad
	var counts [bars]uint64
	var under, over uint64
	hg.Buckets(func(blo, bhi int64, n uint64) {
		v := (float64(blo)/2 + float64(bhi)/2) / 1e6
		switch {
		case v < lo:
			under += n
		case v > hi:
			over += n
		default:
			counts[min(int((v-lo)/(hi-lo)*bars), bars-1)] += n
		}
	})
	top := uint64(1)
	for _, c := range counts {
		top = max(top, c)
	}
	top = max(top, under, over)
	ystep := niceStep(float64(top), 4)
	ytop := math.Ceil(float64(top)/ystep) * ystep
	const x0, x1 = padL + 26, halfW - padR - 26 // room for the under/overflow bars
	x := linear{lo, hi, x0, x1}
	y := linear{0, ytop, h - padB, padT}
	s := newSVG(halfW, h, fmt.Sprintf(`class="hplot" data-plot="%s" data-lo-ms="%.3f" data-hi-ms="%.3f" data-under="%d" data-over="%d" data-count="%d"`,
		o.plot, lo, hi, under, over, hg.Count()))
	s.yAxis(y, ystep, x0, x1, func(v float64) string { return tickLabel(v, ystep) })
	bw := (x1 - x0) / bars
	for i, c := range counts {
		if c == 0 {
			continue
		}
		b0 := lo + (hi-lo)*float64(i)/bars
		s.f(`<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" data-count="%d">%s</rect>`,
			x0+float64(i)*bw, y.at(float64(c)), max(bw-1, 1), y.a-y.at(float64(c)), c,
			title(fmt.Sprintf("%s to %s: %d %s", ms(b0), ms(b0+(hi-lo)/bars), c, o.what)))
	}
	edge := func(n uint64, px float64, anchor, label, tip string) {
		if n == 0 {
			return
		}
		s.f(`<rect class="bar out" x="%.1f" y="%.1f" width="18" height="%.1f" data-count="%d">%s</rect>`, px, y.at(float64(n)), y.a-y.at(float64(n)), n, title(tip))
		lx := px
		if anchor == "end" {
			lx += 18
		}
		s.text(lx, y.at(float64(n))-4, anchor, "overflow-label", label)
	}
	edge(under, padL, "start", fmt.Sprintf("%d below %s", under, ms(lo)), fmt.Sprintf("%d %s below %s (min %s)", under, o.what, ms(lo), ms(mn)))
	edge(over, halfW-padR-18, "end", fmt.Sprintf("%d above %s", over, ms(hi)), fmt.Sprintf("%d %s above %s (max %s)", over, o.what, ms(hi), ms(mx)))
	for _, r := range o.refs {
		px := x.at(r.ms)
		s.f(`<line class="ref %s" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, r.class, px, px, y.a, y.b)
		s.text(px+4, padT+10, "start", "ref-label "+r.class, r.label)
	}
	xstep := niceStep(hi-lo, 6)
	s.xAxis(x, xstep, h-padB, func(v float64) string { return tickLabel(v, xstep) + " ms" })
	return s.html()
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
