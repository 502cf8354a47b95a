package analyzer

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// lagPlot draws a frame channel's delay against the state timeline
// (interpolated_ms) over capture time, per bin the range from the smallest
// to the largest delay of the frames captured in it, on the session's time
// axis under the state channel's lane. Rejected frames (latest state older
// than the tolerance) are marked along the bottom, frames paired across a
// state outage along the top, with the gap they span shaded: neither is
// in the delay. The axis is set by the delays, not by outliers (clipped,
// marked ▲).
func lagPlot(l LagReport, ls *lagSeries, t timeAxis) template.HTML {
	const h = 190.0
	d := l.InterpolatedMs
	lo := math.Min(0, d.Min)
	hi := d.Max
	if robust := math.Max(d.P99*1.5, d.P50*2); robust > 0 && robust < hi {
		hi = robust
	}
	hi = math.Max(hi*1.1, lo+1)
	step := niceStep(hi-lo, 5)
	lo, hi = math.Floor(lo/step+1e-9)*step, math.Ceil(hi/step-1e-9)*step
	const top, bottom = padT + 14, h - padB - 12 // rows for the across and rejected marks
	y := linear{lo, hi, bottom, top}
	var hover [][3]any
	var path, rejected, across, over strings.Builder
	for i, b := range ls.data {
		if b.n == 0 && b.rejected == 0 && b.across == 0 {
			continue
		}
		t0, t1 := t.el(ls.start(i)), t.el(ls.start(i+1))
		x := t.x.at((t0 + t1) / 2)
		var parts []string
		if b.n > 0 {
			dlo, dhi := float64(b.minDelay)/1e6, float64(b.maxDelay)/1e6
			y0, y1 := y.clamp(dlo), y.clamp(dhi)
			if y0-y1 < 3 {
				y0, y1 = y0+1.5, y1-1.5
			}
			fmt.Fprintf(&path, "M%.1f %.1fV%.1f", x, y0, y1)
			if dhi > hi {
				fmt.Fprintf(&over, `<path class="overflow" d="M%.1f %.1fl-5 8h10z" data-value-ms="%.3f">%s</path>`, x, top-12, dhi,
					title(fmt.Sprintf("delay of %s at %.3f s (above the axis)", ms(dhi), t0)))
			}
			if dlo == dhi {
				parts = append(parts, fmt.Sprintf("%d frame(s), delay %s", b.n, ms(dhi)))
			} else {
				parts = append(parts, fmt.Sprintf("%d frames, delay %s to %s", b.n, ms(dlo), ms(dhi)))
			}
		}
		if b.rejected > 0 {
			fmt.Fprintf(&rejected, `<path class="rejected" d="M%.1f %.1fl-5 8h10z" data-at="%.3f" data-frames="%d">%s</path>`, x, bottom+2, t0, b.rejected,
				title(fmt.Sprintf("%d frame(s) rejected at %.3f s: latest state older than %s", b.rejected, t0, ms(l.ToleranceMs))))
			parts = append(parts, fmt.Sprintf("%d rejected (latest state older than %s)", b.rejected, ms(l.ToleranceMs)))
		}
		if b.across > 0 {
			fmt.Fprintf(&across, `<path class="across" d="M%.1f %.1fl5 6l-5 6l-5 -6z" data-at="%.3f" data-frames="%d">%s</path>`, x, padT, t0, b.across,
				title(fmt.Sprintf("%d frame(s) at %.3f s paired with a state from before an outage of %s: no lag measurement", b.across, t0, l.States)))
			parts = append(parts, fmt.Sprintf("%d paired across a state outage (no delay)", b.across))
		}
		hover = append(hover, [3]any{round6(t0), round6(t1), strings.Join(parts, "; ")})
	}
	s := t.open(h, "lag", l.Frames, hover)
	s.f(`<g class="meta" data-lo-ms="%.6f" data-hi-ms="%.6f" data-y-lo="%.3f" data-y-hi="%.3f" data-p50-ms="%.3f" data-rejected="%d" data-across="%d"></g>`,
		lo, hi, y.a, y.b, d.P50, ls.rej, ls.across)
	for _, o := range l.AcrossOutages {
		to := o.ToNs
		if o.Ended {
			to = o.FromNs + int64(o.MaxLagMs*1e6)
		}
		x0, x1 := t.at(o.FromNs), t.at(to)
		s.f(`<rect class="across-bg" x="%.1f" y="%.1f" width="%.1f" height="%.1f" data-from="%.3f" data-frames="%d">%s</rect>`, x0, padT, max(x1-x0, 1), h-padB-padT, o.FromElapsed, o.Frames,
			title("state outage: "+o.describe()))
	}
	s.yAxis(y, step, t.x.a, t.x.b, func(v float64) string { return tickLabel(v, step) + " ms" })
	if d.P50 >= lo && d.P50 <= hi && ls.delays > 0 {
		// Labelled at the top left, clear of the delays around the line.
		py := y.at(d.P50)
		s.f(`<line class="ref p50" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, t.x.a, t.x.b, py, py)
		s.text(t.x.a+6, y.b+10, "start", "ref-label p50", "- - delay p50 "+ms(d.P50))
	}
	s.f(`<path class="delay" d="%s"/>%s<g class="rejected">%s</g><g class="across">%s</g>`, path.String(), over.String(), rejected.String(), across.String())
	return t.close(s, h-padB)
}
