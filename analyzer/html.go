package analyzer

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/sampler"
)

// WriteHTML writes a self-contained HTML report (no scripts, no external
// files): the summary tables, and per channel an SVG plot of the capture
// interval over elapsed time with skips and restarts marked, a histogram of
// its transport latency, and per frame channel a histogram of its lag to the
// latest state. The Analysis must have been made with PlotBins > 0.
func (a *Analysis) WriteHTML(w io.Writer, r *Report) error {
	var text strings.Builder
	r.WriteText(&text, codec.TimeElapsed)
	type plot struct {
		Title string
		SVG   template.HTML
	}
	var plots []plot
	for _, ch := range a.order {
		if ch.series == nil || ch.kind == KindProbe || len(ch.series.maxDt) == 0 {
			continue
		}
		plots = append(plots, plot{"capture interval (max per bin) — " + ch.rep.Name, dtPlot(ch.series, r.EpochNs, r.TriggerMarks())})
		if ch.stream.Latency.Count() > 0 {
			plots = append(plots, plot{"latency: receive wall minus capture — " + ch.rep.Name, histPlot(&ch.stream.Latency, "ms")})
		}
	}
	for _, l := range a.lags {
		plots = append(plots, plot{"lag to latest state — " + l.name, histPlot(&l.sum.Latest, "ms")})
	}
	return htmlPage.Execute(w, map[string]any{"Text": text.String(), "Plots": plots, "Pass": r.Pass, "Checks": len(r.Checks)})
}

var htmlPage = template.Must(template.New("report").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>vrlog analyze</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}
.pass{color:#080}.fail{color:#b00}
figure{margin:1.5em 0}figcaption{font-weight:600;margin-bottom:.3em}
svg text{font-size:11px;fill:#444}
</style></head><body>
<h1>vrlog analyze {{if .Checks}}{{if .Pass}}<span class="pass">PASS</span>{{else}}<span class="fail">FAIL</span>{{end}}{{end}}</h1>
<pre>{{.Text}}</pre>
{{range .Plots}}<figure><figcaption>{{.Title}}</figcaption>{{.SVG}}</figure>
{{end}}
<p>Legend: red ticks mark seq skips, orange lines publisher restarts, purple lines snapshot triggers. Times are elapsed seconds since the session epoch.</p>
</body></html>
`))

const plotW, plotH, padL, padB = 900.0, 220.0, 60.0, 30.0

// dtPlot draws the per-bin maximum interval as a step line, with the
// snapshot triggers at capture times triggers.
func dtPlot(s *series, epoch int64, triggers []int64) template.HTML {
	var maxV int64 = 1
	for _, v := range s.maxDt {
		maxV = max(maxV, v)
	}
	n := float64(len(s.maxDt))
	x := func(i float64) float64 { return padL + i/n*(plotW-padL-10) }
	y := func(v int64) float64 { return plotH - padB - float64(v)/float64(maxV)*(plotH-padB-10) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f">`, plotW, plotH)
	axes(&b, fmt.Sprintf("%.1f ms", float64(maxV)/1e6), "0",
		fmt.Sprintf("%.2f s", codec.Elapsed(s.origin, epoch)), fmt.Sprintf("%.2f s", codec.Elapsed(s.origin+int64(n)*s.width, epoch)))
	b.WriteString(`<polyline fill="none" stroke="#2a6fdb" stroke-width="1" points="`)
	for i, v := range s.maxDt {
		if v >= 0 {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(float64(i)+0.5), y(v))
		}
	}
	b.WriteString(`"/>`)
	mark := func(ts []int64, color string, full bool) {
		for _, t := range ts {
			xi := x(float64(t-s.origin) / float64(s.width))
			top := plotH - padB - 12
			if full {
				top = 10
			}
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`, xi, xi, top, plotH-padB, color)
		}
	}
	mark(s.skips, "#d22", false)
	mark(s.restarts, "#f90", true)
	mark(triggers, "#90c", true)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// histPlot draws a histogram's buckets regrouped into 60 equal-width bars.
func histPlot(h *sampler.Histogram, unit string) template.HTML {
	lo, hi := float64(h.Min()), float64(h.Quantile(0.999))
	if hi <= lo {
		hi = lo + 1
	}
	const bars = 60
	var counts [bars]uint64
	h.Buckets(func(blo, bhi int64, c uint64) {
		mid := float64(blo)/2 + float64(bhi)/2
		i := int(math.Floor((mid - lo) / (hi - lo) * bars))
		counts[min(max(i, 0), bars-1)] += c
	})
	var top uint64 = 1
	for _, c := range counts {
		top = max(top, c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f">`, plotW, plotH)
	axes(&b, fmt.Sprint(top), "0", fmt.Sprintf("%.3f %s", lo/1e6, unit), fmt.Sprintf("%.3f %s (p99.9)", hi/1e6, unit))
	bw := (plotW - padL - 10) / bars
	for i, c := range counts {
		hgt := float64(c) / float64(top) * (plotH - padB - 10)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#2a6fdb"/>`, padL+float64(i)*bw, plotH-padB-hgt, bw-1, hgt)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func axes(b *strings.Builder, yTop, yBottom, xLeft, xRight string) {
	fmt.Fprintf(b, `<line x1="%.0f" y1="10" x2="%.0f" y2="%.0f" stroke="#999"/>`, padL, padL, plotH-padB)
	fmt.Fprintf(b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>`, padL, plotH-padB, plotW-10, plotH-padB)
	fmt.Fprintf(b, `<text x="4" y="18">%s</text><text x="4" y="%.0f">%s</text>`, template.HTMLEscapeString(yTop), plotH-padB, template.HTMLEscapeString(yBottom))
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f">%s</text>`, padL, plotH-8, template.HTMLEscapeString(xLeft))
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="end">%s</text>`, plotW-10, plotH-8, template.HTMLEscapeString(xRight))
}
