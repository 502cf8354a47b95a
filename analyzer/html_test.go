package analyzer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

const sampleLog = "../testdata/sample.vrlog"

// sampleHTML is the HTML report of the bundled sample, as analyze --html
// writes it.
func sampleHTML(t *testing.T) []byte {
	t.Helper()
	a := New(Options{PlotBins: 600})
	if err := a.AddFile(sampleLog); err != nil {
		t.Fatal(err)
	}
	rep := a.Report()
	var b bytes.Buffer
	if err := a.WriteHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The page needs nothing from outside: no external script, style, image or
// font, no network address but the SVG namespace.
func TestHTMLSelfContained(t *testing.T) {
	page := string(sampleHTML(t))
	if !strings.Contains(page, "<title>vrlog analyze: sample.vrlog</title>") {
		t.Fatal("the title does not name the file")
	}
	for _, bad := range []string{" src=", " href=", "@import", "<link", "<img", "<iframe"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, m := range regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^"' )]*`).FindAllString(page, -1) {
		if m != "http://www.w3.org/2000/svg" {
			t.Errorf("page refers to %s", m)
		}
	}
	if n := strings.Count(page, "url("); n != strings.Count(page, "url(#hatch)") {
		t.Errorf("a url() that is not the inline hatch pattern")
	}
}

// chromium finds a headless browser, or skips the test (fails it in CI,
// where .ci/run installs Debian's chromium).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium in CI: .ci/run installs it (apt-get install -y chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install chromium): the HTML report is not rendered")
	return ""
}

// headless runs chromium on page with a 1280 px wide window and extra args.
func headless(t *testing.T, page string, height int, args ...string) []byte {
	t.Helper()
	return headlessAt(t, page, 1280, height, args...)
}

// headlessAt is headless with a window width px wide.
func headlessAt(t *testing.T, page string, width, height int, args ...string) []byte {
	t.Helper()
	bin := chromium(t)
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--window-size=" + strconv.Itoa(width) + "," + strconv.Itoa(height)}
	cmd := exec.Command(bin, append(append(base, args...), "file://"+page)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("chromium did not finish in 90 s:\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return out
}

// probeResult is what testdata/probe.js reads from the rendered page.
type probeResult struct {
	Title        string
	ScrollWidth  float64
	ScrollHeight int
	InnerWidth   float64
	MaxRight     float64
	Lanes        []struct {
		Channel, Kind string
		Samples       int
		Present       int
		Outages       [][2]float64
		Restarts      []float64
		Skips         []float64
		Probes        int
		LabelsOverlap bool
	}
	Intervals []struct {
		Channel                   string
		ClipMs, NominalMs         float64
		OverflowMs                []float64
		OverflowLabels, RefLabels []string
		Yticks                    []string
		Hover                     int
	}
	Lags []struct {
		Channel                      string
		LoMs, HiMs, P50Ms            float64
		MidsMs                       []float64
		Rejected, Across, AcrossGaps int
		RefLabels                    []string
		Hover                        int
	}
	Rates []struct {
		Channel string
		Hover   int
	}
	Hists []struct {
		Plot                       string
		LoMs, HiMs                 float64
		Under, Over, Count, BarSum int
	}
	ClockProbes int
	Tip         string
	Crosshairs  int
	TimePlots   int
}

// TestHTMLInBrowser renders the sample's report in headless Chromium at
// 1280 px and checks what a reader sees: no sideways scrolling, the title,
// the timeline's lanes with the sample's outages, restarts and skips where
// the report puts them, interval axes not set by the outage (which is
// marked instead), the lag panel's plotted frame delay (8 ms) with its
// rejected and across-outage marks, a lag histogram whose range the
// outliers do not set, the clock probes, and values on hover. With -update it also writes
// the screenshot docs/analyze-report.png.
func TestHTMLInBrowser(t *testing.T) {
	chromium(t)
	dir := t.TempDir()
	page := sampleHTML(t)
	probe, err := os.ReadFile("testdata/probe.js")
	if err != nil {
		t.Fatal(err)
	}
	probed := bytes.Replace(page, []byte("</body>"), []byte("<script>"+string(probe)+"</script></body>"), 1)
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, probed, 0o644); err != nil {
		t.Fatal(err)
	}
	dom := headless(t, path, 900, "--dump-dom")
	m := regexp.MustCompile(`<pre id="probe">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe left no result (did the page's script fail?)\n%.2000s", dom)
	}
	var r probeResult
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &r); err != nil {
		t.Fatal(err)
	}

	if r.Title != "vrlog analyze: sample.vrlog" {
		t.Errorf("title %q", r.Title)
	}
	if r.ScrollWidth > 1280 || r.MaxRight > r.InnerWidth {
		t.Errorf("scrolls sideways at 1280 px: scrollWidth %.0f, rightmost element at %.0f of %.0f", r.ScrollWidth, r.MaxRight, r.InnerWidth)
	}
	near := func(got, want float64) bool { return got > want-0.002 && got < want+0.002 }
	lanes := map[string]int{}
	for i, l := range r.Lanes {
		lanes[l.Channel] = i
		if l.LabelsOverlap {
			t.Errorf("lane %s: name and facts overlap", l.Channel)
		}
	}
	if len(r.Lanes) != 3 {
		t.Fatalf("%d timeline lanes, want 3", len(r.Lanes))
	}
	cam, st, clk := r.Lanes[lanes["vr/r1/camera/front"]], r.Lanes[lanes["vr/r1/state"]], r.Lanes[lanes["vrlog/clock/vr/r1/time"]]
	if len(cam.Outages) != 2 || !near(cam.Outages[0][0], 5.825) || !near(cam.Outages[0][1], 21.764) || !near(cam.Outages[1][0], 24.997) {
		t.Errorf("camera outages %v", cam.Outages)
	}
	if len(st.Outages) != 2 || !near(st.Outages[0][0], 5.840) || !near(st.Outages[0][1], 21.772) {
		t.Errorf("state outages %v", st.Outages)
	}
	if len(cam.Restarts) != 1 || !near(cam.Restarts[0], 21.764) || len(st.Restarts) != 1 || !near(st.Restarts[0], 21.772) {
		t.Errorf("restarts: camera %v, state %v", cam.Restarts, st.Restarts)
	}
	if len(cam.Skips) != 5 || len(st.Skips) != 3 || !near(st.Skips[0], 23.932) {
		t.Errorf("skips: camera %v, state %v", cam.Skips, st.Skips)
	}
	if cam.Present != 3 || st.Present != 3 || cam.Samples != 358 || st.Samples != 300 {
		t.Errorf("presence bars: camera %d (%d samples), state %d (%d samples), want 3 each (cut by 2 outages)", cam.Present, cam.Samples, st.Present, st.Samples)
	}
	if clk.Probes != 13 || r.ClockProbes != 13 {
		t.Errorf("clock probes: %d in the timeline, %d in the clock plot, want 13", clk.Probes, r.ClockProbes)
	}

	if len(r.Intervals) != 2 || len(r.Rates) != 2 {
		t.Fatalf("%d interval and %d rate plots, want 2 each", len(r.Intervals), len(r.Rates))
	}
	for _, p := range r.Intervals {
		if p.ClipMs > 4*p.NominalMs*3 || p.ClipMs < 2*p.NominalMs {
			t.Errorf("%s: interval axis to %.1f ms for a nominal %.1f ms: set by outliers, or hiding the normal intervals", p.Channel, p.ClipMs, p.NominalMs)
		}
		big, pause := false, false
		for _, v := range p.OverflowMs {
			big = big || v > 15000
			pause = pause || (v > 500 && v < 600)
		}
		if !big || !pause || len(p.OverflowLabels) < 2 {
			t.Errorf("%s: the outage and the pause are not marked above the axis: %v %v", p.Channel, p.OverflowMs, p.OverflowLabels)
		}
		if !strings.Contains(strings.Join(p.RefLabels, "|"), "nominal") || len(p.Yticks) < 4 || p.Hover < 100 {
			t.Errorf("%s: reference labels %v, y ticks %v, %d hover readouts", p.Channel, p.RefLabels, p.Yticks, p.Hover)
		}
	}
	// The lag panel shows the sample's 8 ms frame delay (interpolated_ms,
	// p50 7.84 ms) at a glance: every plotted bin near it on a 0..10 ms
	// axis, its 3 rejected frames marked below and the 2 frames paired
	// across the restart's and the pause's state outages above, with the
	// gaps shaded.
	if len(r.Lags) != 1 {
		t.Fatalf("%d lag plots, want 1", len(r.Lags))
	}
	lp := r.Lags[0]
	mids := slices.Clone(lp.MidsMs)
	slices.Sort(mids)
	if len(mids) < 100 || math.Abs(mids[len(mids)/2]-7.84) > 0.3 || mids[0] < 6 || mids[len(mids)-1] > 10 || lp.HiMs > 20 || lp.LoMs > 0 {
		t.Errorf("lag plot of %s: %d bins plotted at %.3f..%.3f ms (median %.3f) on a %.1f..%.1f ms axis, want about 7.84 ms on an axis the delay sets",
			lp.Channel, len(mids), mids[0], mids[len(mids)-1], mids[len(mids)/2], lp.LoMs, lp.HiMs)
	}
	if lp.Rejected != 3 || lp.Across != 2 || lp.AcrossGaps != 2 || math.Abs(lp.P50Ms-7.836) > 0.01 || !strings.Contains(strings.Join(lp.RefLabels, "|"), "delay p50 7.84 ms") || lp.Hover < 100 {
		t.Errorf("lag plot marks: %d rejected, %d across %d shaded gaps, p50 %.3f (%v), %d hover readouts; want 3, 2 across 2, 7.836",
			lp.Rejected, lp.Across, lp.AcrossGaps, lp.P50Ms, lp.RefLabels, lp.Hover)
	}
	var lag, lat, delay int
	for _, h := range r.Hists {
		if h.BarSum+h.Under+h.Over != h.Count {
			t.Errorf("%s: bars hold %d + %d under + %d over of %d values", h.Plot, h.BarSum, h.Under, h.Over, h.Count)
		}
		switch h.Plot {
		case "lag-hist":
			lag++
			if h.HiMs > 200 || h.HiMs < 50 || h.Over < 1 {
				t.Errorf("lag histogram range %.1f..%.1f ms with %d over: set by the outlier, or missing the tolerance", h.LoMs, h.HiMs, h.Over)
			}
		case "latency-hist":
			lat++
		case "delay-hist":
			delay++
		}
	}
	if lag != 1 || lat != 2 || delay != 1 {
		t.Errorf("%d lag, %d latency and %d delay histograms, want 1, 2 and 1", lag, lat, delay)
	}
	at, _, _ := strings.Cut(r.Tip, " s")
	if v, err := strconv.ParseFloat(at, 64); err != nil || v < 1.95 || v > 2.05 || !strings.Contains(r.Tip, "interval") || r.Crosshairs != r.TimePlots {
		t.Errorf("hover at 2 s: tip %q, %d of %d crosshairs shown", r.Tip, r.Crosshairs, r.TimePlots)
	}

	if *update {
		clean := filepath.Join(dir, "clean.html")
		os.WriteFile(clean, page, 0o644)
		png := filepath.Join(dir, "shot.png")
		headless(t, clean, r.ScrollHeight, "--screenshot="+png)
		b, err := os.ReadFile(png)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../docs/analyze-report.png", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Logs with little in them still make a page: no channel at all, one raw
// channel, a single state, probes only.
func TestHTMLSmallLogs(t *testing.T) {
	dir := t.TempDir()
	for name, recs := range map[string][]struct {
		schema string
		stamp  bool
		n      int
	}{
		"empty":  nil,
		"raw":    {{"", false, 50}},
		"single": {{codec.SchemaState, true, 1}},
		"probes": {{codec.SchemaClockProbe, false, 3}},
	} {
		p := filepath.Join(dir, name+".vrlog")
		w, err := logfmt.Create(p, logfmt.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			id, _ := w.AddChannel(logfmt.Channel{Name: fmt.Sprintf("ch%d", i), Transport: logfmt.TransportZenoh, Topic: "t", Schema: r.schema})
			for k := range r.n {
				rec := &logfmt.Record{Channel: id, RecvMonoNs: int64(k) * 1e7, RecvWallNs: 1e18 + int64(k)*1e7}
				switch r.schema {
				case codec.SchemaState:
					st := codec.State{Seq: uint64(k), TNs: rec.RecvWallNs - 1e6}
					rec.Payload, rec.HasStamp, rec.Seq, rec.CaptureNs = codec.AppendState(nil, &st), true, st.Seq, st.TNs
				case codec.SchemaClockProbe:
					rec.Payload = codec.AppendClockProbe(nil, codec.ClockProbe{T1Ns: rec.RecvWallNs, T2Ns: rec.RecvWallNs + 5, T3Ns: rec.RecvWallNs + 6, T4Ns: rec.RecvWallNs + 9})
				default:
					rec.Payload = []byte("x")
				}
				if err := w.Write(rec); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		a := New(Options{PlotBins: 600})
		if err := a.AddFile(p); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := a.WriteHTML(&b, a.Report()); err != nil || !strings.Contains(b.String(), "<title>vrlog analyze: "+name+".vrlog</title>") {
			t.Errorf("%s: %v", name, err)
		}
		if strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "Inf") {
			t.Errorf("%s: a NaN or Inf in the page", name)
		}
	}
}

// In a window 800 px wide nothing of the Channels table is cut off: the
// page does not overflow, and the table (wider than the window at any
// legible size: 16 columns) scrolls inside its own box, whose scroll
// width holds all of it (it was clipped at 800 px).
func TestHTMLChannelsAt800px(t *testing.T) {
	chromium(t)
	js := `<script>(function(){const t=document.querySelector('table.summary'),b=t.parentElement,p=document.createElement('pre');` +
		`p.id='m';p.textContent=JSON.stringify({page:document.documentElement.scrollWidth,inner:innerWidth,table:t.getBoundingClientRect().width,` +
		`box:b.getBoundingClientRect().right,boxScroll:b.scrollWidth,overflow:getComputedStyle(b).overflowX});document.body.appendChild(p);})()</script></body>`
	page := bytes.Replace(sampleHTML(t), []byte("</body>"), []byte(js), 1)
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<pre id="m">(.*?)</pre>`).FindSubmatch(headlessAt(t, path, 800, 900, "--dump-dom"))
	if m == nil {
		t.Fatal("the measure left no result")
	}
	var r struct {
		Page, Inner, Table, Box, BoxScroll float64
		Overflow                           string
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &r); err != nil {
		t.Fatal(err)
	}
	if r.Page > r.Inner || r.Box > r.Inner {
		t.Errorf("the page overflows 800 px: scroll width %.0f, the table's box ends at %.0f", r.Page, r.Box)
	}
	if r.BoxScroll < r.Table-1 || (r.Table > r.Box && r.Overflow != "auto") {
		t.Errorf("the table (%.0f px) is cut: its box scrolls %.0f px, overflow-x %s", r.Table, r.BoxScroll, r.Overflow)
	}
}
