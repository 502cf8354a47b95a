package analyzer

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/sampler"
)

//go:embed report.css
var reportCSS string

//go:embed report.js
var reportJS string

// WriteHTML writes the report as one self-contained page (inline CSS, SVG
// and a small hover script; nothing is fetched): a timeline of every
// channel's samples, skips, restarts and outages on one time axis, the
// summary table, the events in time order, per channel its capture
// intervals and rate over time and its latency and lag histograms, and the
// clock offset over time. Axes are set by the normal values, outliers are
// clipped and marked. The Analysis must have been made with PlotBins > 0.
func (a *Analysis) WriteHTML(w io.Writer, r *Report) error {
	t := a.sessionAxis(r)
	p := page{
		Title: pageTitle(r), CSS: template.CSS(reportCSS), JS: template.JS(reportJS),
		Checks: r.Checks, Notes: r.Notes, Timeline: a.timelinePlot(r, t),
	}
	if len(r.Checks) > 0 {
		p.Verdict = "PASS"
		if !r.Pass {
			p.Verdict = fmt.Sprintf("FAIL: %d of %d checks", len(r.Failed()), len(r.Checks))
		}
	}
	for _, f := range r.Files {
		p.Files = append(p.Files, fileLine(f))
	}
	if r.EpochSource != "" {
		p.Session = fmt.Sprintf("epoch %s (%s) · span %.3f s, from %.3f s to %.3f s · outage above %g × the nominal period · lag tolerance %s",
			codec.FormatRFC3339(r.EpochNs), r.EpochSource, r.DurationS, codec.Elapsed(r.StartNs, r.EpochNs), codec.Elapsed(r.EndNs, r.EpochNs),
			r.OutageFactor, ms(r.LagToleranceMs))
	}
	for _, c := range r.Channels {
		p.Rows = append(p.Rows, row{breakable(c.Name), summaryRow(c)})
	}
	p.Events, p.MoreEvents = events(r, 300)
	for _, sn := range r.Snapshots {
		p.Snapshots = append(p.Snapshots, snapshotLine(sn))
	}
	for _, c := range r.Channels {
		ch := a.byName[c.Name]
		if ch == nil || ch.kind == KindProbe || ch.series == nil || c.Count == 0 {
			continue
		}
		sec := section{Name: c.Name, Kind: c.Kind, Color: kindColor[c.Kind],
			Interval: intervalPlot(c, ch.series, t, r.OutageFactor), Rate: ratePlot(c, ch.series, t, r.NotCaptured),
			Facts: fmt.Sprintf("interval p50 %s · p99 %s · max %s", ms(c.DtMs.P50), ms(c.DtMs.P99), ms(c.DtMs.Max))}
		if c.LatencyMs != nil {
			sec.Hists = append(sec.Hists, figure{
				Caption: "latency: receive wall clock minus capture stamp (transport latency plus the clock offset)",
				Facts:   fmt.Sprintf("p50 %s · p99 %s · min %s · max %s", ms(c.LatencyMs.P50), ms(c.LatencyMs.P99), ms(c.LatencyMs.Min), ms(c.LatencyMs.Max)),
				SVG: histPlot(&ch.stream.Latency, histOpts{plot: "latency-hist", what: "samples",
					refs: []histRef{{c.LatencyMs.P50, "p50", "p50"}}}),
			})
		}
		for i, l := range r.Lag {
			if l.Frames != c.Name || i >= len(a.lags) {
				continue
			}
			sum := a.lags[i].sum
			if ch.lagSer != nil {
				facts := fmt.Sprintf("%d frames · delay p50 %s · p99 %s · max %s · %d rejected · %d across a state outage",
					l.Count, ms(l.InterpolatedMs.P50), ms(l.InterpolatedMs.P99), ms(l.InterpolatedMs.Max), l.Rejected, l.AcrossOutage)
				sec.Lags = append(sec.Lags, figure{
					Caption: "frame delay against the timeline of " + l.States + ": receive stamp minus the states' receive time at the frame's capture stamp " +
						"(interpolated_ms; red ▲ along the bottom: rejected, latest state older than " + ms(l.ToleranceMs) + "; orange ◆ along the top: paired across a state outage, shaded, no lag measurement)",
					Facts: facts,
					SVG:   lagPlot(l, ch.lagSer, t),
				})
			}
			sec.Hists = append(sec.Hists, figure{
				Caption: "frame delay against the state timeline (interpolated_ms)",
				Facts:   fmt.Sprintf("p50 %s · p99 %s · min %s · max %s", ms(l.InterpolatedMs.P50), ms(l.InterpolatedMs.P99), ms(l.InterpolatedMs.Min), ms(l.InterpolatedMs.Max)),
				SVG: histPlot(&sum.Interpolated, histOpts{plot: "delay-hist", what: "frames",
					refs: []histRef{{l.InterpolatedMs.P50, "p50", "p50"}}}),
			})
			facts := fmt.Sprintf("%d frames · p50 %s · p99 %s · max %s · %d rejected above %s (%.2f %%)",
				l.Count, ms(l.LatestMs.P50), ms(l.LatestMs.P99), ms(l.LatestMs.Max), l.Rejected, ms(l.ToleranceMs), 100*l.RejectedFraction)
			if l.Unpaired > 0 {
				facts += fmt.Sprintf(" · %d before the first state", l.Unpaired)
			}
			if l.AcrossOutage > 0 {
				facts += fmt.Sprintf(" · %d across a state outage, left out", l.AcrossOutage)
			}
			sec.Hists = append(sec.Hists, figure{
				Caption: "age of the latest state of " + l.States + " (frame t_ns minus state t_ns; includes up to one state period, " + ms(states(r, l.States)) + ")",
				Facts:   facts,
				SVG: histPlot(&sum.Latest, histOpts{plot: "lag-hist", what: "frames",
					refs: []histRef{{l.ToleranceMs, "threshold", "tolerance " + ms(l.ToleranceMs)}}}),
			})
		}
		p.Sections = append(p.Sections, sec)
	}
	var probes []sampler.Probe
	for _, ch := range a.order {
		probes = append(probes, ch.probes...)
	}
	if len(probes) > 0 && r.Clock != nil {
		c := r.Clock
		drift := "drift n/a (probes span under 10 s)"
		if c.DriftValid {
			drift = fmt.Sprintf("drift %.3f ppm", c.DriftPPM)
		}
		p.Clock = &figure{
			Caption: "clock offset over time: simulator minus recorder, per clock-sync probe (bars: ± rtt/2)",
			Facts:   fmt.Sprintf("offset %+.3f ms from the %d lowest-RTT of %d probes · rtt %.3f ms (min %.3f) · %s", c.OffsetMs, c.Used, c.Probes, c.RTTMs, c.MinRTTMs, drift),
			SVG:     clockPlot(probes, c, t),
		}
	}
	return htmlPage.Execute(w, p)
}

type page struct {
	Title, Verdict, Session string
	Files, Notes            []string
	Snapshots               []string // what each snapshot input holds (snapshotLine)
	Checks                  []Check
	Timeline                template.HTML
	Rows                    []row
	Events                  []event
	MoreEvents              int
	Sections                []section
	Clock                   *figure
	CSS                     template.CSS
	JS                      template.JS
}

type section struct {
	Name, Kind, Color, Facts string
	Interval, Rate           template.HTML
	Lags, Hists              []figure
}

// states is the nominal period (ms) of the state channel named.
func states(r *Report, name string) float64 {
	if c := r.Channel(name); c != nil {
		return c.NominalPeriodMs
	}
	return 0
}

// row is one channel's line of the summary table.
type row struct {
	Name  template.HTML
	Cells []string
}

type figure struct {
	Caption, Facts string
	SVG            template.HTML
}

type event struct {
	At                    float64
	Channel, Kind, Detail string
}

// pageTitle names the files analyzed.
func pageTitle(r *Report) string {
	var names []string
	for _, f := range r.Files {
		names = append(names, filepath.Base(f.Path))
	}
	switch {
	case len(names) == 0:
		return "vrlog analyze"
	case len(names) > 3:
		return fmt.Sprintf("vrlog analyze: %s … %s (%d files)", names[0], names[len(names)-1], len(names))
	}
	return "vrlog analyze: " + strings.Join(names, ", ")
}

func fileLine(f FileReport) string {
	how := "via the index"
	if !f.Indexed {
		how = "by linear scan: no footer (an unfinished or crashed recording)"
	}
	s := fmt.Sprintf("%s: %s %s", f.Path, f.read(), how)
	if f.TornTail >= 0 {
		s += fmt.Sprintf("; torn tail at byte %d", f.TornTail)
	}
	if n := len(f.SkippedChunks); n > 0 {
		s += fmt.Sprintf("; %d corrupt chunk(s) skipped", n)
	}
	if !f.PayloadsChecked {
		s += "; record metadata and its CRCs checked, payload CRCs not (vrlog verify, or a full decode)"
	}
	return s
}

// summaryColumns head the summary table; summaryRow fills one row.
var summaryColumns = []string{"kind", "count", "rate Hz", "nominal Hz", "interval p50 ms", "p99", "max",
	"skipped", "restarts", "outages", "dups / reorders", "recorder drops", "undecodable", "latency p50 ms", "p99"}

func summaryRow(c ChannelReport) []string {
	n := func(v uint64) string { return fmt.Sprint(v) }
	f := func(v float64) string { return fmt.Sprintf("%.3f", v) }
	lat50, lat99 := "–", "–"
	if c.LatencyMs != nil {
		lat50, lat99 = f(c.LatencyMs.P50), f(c.LatencyMs.P99)
	}
	if c.Kind == KindProbe {
		return []string{c.Kind, n(c.Count), "–", "–", "–", "–", "–", "–", "–", "–", "–", n(c.RecorderDrops), n(c.Undecodable), "–", "–"}
	}
	return []string{c.Kind, n(c.Count), fmt.Sprintf("%.2f", c.RateHz), fmt.Sprintf("%.2f", c.NominalRateHz),
		f(c.DtMs.P50), f(c.DtMs.P99), f(c.DtMs.Max), n(c.Skipped), n(c.RestartCount), fmt.Sprint(len(c.Outages)),
		fmt.Sprintf("%d / %d", c.Duplicates, c.Reorders), n(c.RecorderDrops), n(c.Undecodable), lat50, lat99}
}

// breakable lets a channel name wrap after its slashes only.
func breakable(name string) template.HTML {
	parts := strings.Split(name, "/")
	for i := range parts {
		parts[i] = esc(parts[i])
	}
	return template.HTML(strings.Join(parts, "/<wbr>"))
}

// snapshotLine says what a snapshot input holds, visibly (not only in
// the timeline's tooltips): "Snapshot bug_….vrlog: triggered by … at
// 75.120 s (and extended by 1 more); window −30 s … +5 s asked, 72.5 s …
// 80.1 s held; short: …".
func snapshotLine(sn SnapshotReport) string {
	line := fmt.Sprintf("Snapshot %s: triggered by %s at %.3f s", sn.File, sn.Cause, sn.TriggerElapsed)
	if sn.TriggerCount > 1 {
		line += fmt.Sprintf(" (and extended by %d more)", sn.TriggerCount-1)
	}
	line += fmt.Sprintf("; window −%g s … +%g s asked, %.3f s … %.3f s held", sn.BeforeS, sn.AfterS, sn.FromElapsed, sn.ToElapsed)
	if sn.Short != "" {
		line += "; short: " + sn.Short
	}
	return line
}

// events lists every channel's skips, restarts and outages, the snapshot
// triggers and the time between snapshots, in time order, at most limit
// of them (and how many more there are).
func events(r *Report, limit int) ([]event, int) {
	var ev []event
	for _, sn := range r.Snapshots {
		for i, tr := range sn.Triggers {
			how := "opened the snapshot window of " + sn.File
			if i > 0 {
				how = "extended the snapshot window of " + sn.File
			}
			ev = append(ev, event{tr.Elapsed, "", "trigger", tr.Cause + ": " + how})
		}
	}
	for _, g := range r.NotCaptured {
		ev = append(ev, event{g.FromElapsed, "", "not captured", fmt.Sprintf("%s, until %.3f s: no skip, outage or restart counted", g.what(), g.ToElapsed)})
	}
	for _, c := range r.Channels {
		for _, s := range c.Skips {
			ev = append(ev, event{s.Elapsed, c.Name, "skip", fmt.Sprintf("seq %d → %d: %d sample(s) never arrived", s.LastSeq, s.Seq, s.Skipped)})
		}
		for _, s := range c.Restarts {
			ev = append(ev, event{s.ElapsedAfter, c.Name, "restart", fmt.Sprintf("seq %d → %d: elapsed froze at %.3f s, resumed at %.3f s (%.3f s later)",
				s.LastSeq, s.Seq, s.ElapsedBefore, s.ElapsedAfter, s.GapS)})
		}
		for _, o := range c.Outages {
			d := fmt.Sprintf("no sample for %s, until %.3f s (nominal period %s)", ms(o.GapS*1000), o.ToElapsed, ms(c.NominalPeriodMs))
			if o.Restart {
				d += "; ended by a restart"
			}
			if o.Ended {
				d = fmt.Sprintf("no sample for the last %s of the recording: the stream stopped", ms(o.GapS*1000))
			}
			ev = append(ev, event{o.FromElapsed, c.Name, "outage", d})
		}
	}
	slices.SortStableFunc(ev, func(a, b event) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	if len(ev) > limit {
		return ev[:limit], len(ev) - limit
	}
	return ev, 0
}

var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{"columns": func() []string { return summaryColumns }}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head><body><main>
<header>
<h1>{{.Title}}{{if .Verdict}} <span class="verdict {{if eq .Verdict "PASS"}}pass{{else}}fail{{end}}">{{.Verdict}}</span>{{end}}</h1>
{{range .Files}}<p class="meta">{{.}}</p>
{{end}}{{if .Session}}<p class="meta">{{.Session}}</p>{{end}}
{{range .Snapshots}}<p class="snapshot">{{.}}</p>
{{end}}
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}</header>
{{if .Checks}}<section id="checks"><h2>Checks</h2><table class="checks">
{{range .Checks}}<tr class="{{if .Pass}}pass{{else}}fail{{end}}"><td>{{if .Pass}}PASS{{else}}FAIL{{end}}</td><td>{{.Message}}</td></tr>
{{end}}</table></section>{{end}}
<section id="timeline"><h2>Timeline</h2>
<p class="legend"><span class="key present"></span>samples <span class="key outage"></span>outage <span class="key skip"></span>skip (seq gap) <span class="key restart"></span>publisher restart <span class="key trigger"></span>snapshot trigger{{if .Snapshots}} <span class="key uncaptured"></span>not captured (between snapshots){{end}} <span class="key probe"></span>clock probe · time in seconds since the session epoch</p>
{{.Timeline}}</section>
<section id="summary"><h2>Channels</h2><div class="scroll"><table class="summary"><thead><tr><th>channel</th>{{range columns}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><td class="name">{{.Name}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table></div></section>
{{if .Events}}<section id="events"><h2>Events</h2><table class="events"><thead><tr><th>at (s)</th><th>channel</th><th>event</th><th>detail</th></tr></thead><tbody>
{{range .Events}}<tr class="{{.Kind}}"><td>{{printf "%.3f" .At}}</td><td class="name">{{.Channel}}</td><td>{{.Kind}}</td><td>{{.Detail}}</td></tr>
{{end}}</tbody></table>{{if .MoreEvents}}<p class="note">… and {{.MoreEvents}} more (all in the JSON report).</p>{{end}}</section>{{end}}
{{range .Sections}}<section class="channel" data-channel="{{.Name}}"><h2><span class="swatch" style="background:{{.Color}}"></span>{{.Name}} <small>{{.Kind}}</small></h2>
<figure><figcaption>capture interval over time <small>{{.Facts}}</small></figcaption>{{.Interval}}</figure>
<figure><figcaption>rate over time</figcaption>{{.Rate}}</figure>
{{range .Lags}}<figure><figcaption>{{.Caption}} <small>{{.Facts}}</small></figcaption>{{.SVG}}</figure>{{end}}
{{if .Hists}}<div class="hists">{{range .Hists}}<figure><figcaption>{{.Caption}} <small>{{.Facts}}</small></figcaption>{{.SVG}}</figure>{{end}}</div>{{end}}
</section>
{{end}}{{with .Clock}}<section id="clock"><h2>Clock</h2><figure><figcaption>{{.Caption}} <small>{{.Facts}}</small></figcaption>{{.SVG}}</figure></section>{{end}}
<footer>vrlog analyze · intervals and lags above an axis are clipped and marked ▲ with their value · hover a plot for its values</footer>
</main><div id="tip" hidden></div>
<script>{{.JS}}</script>
</body></html>
`))
