// Package analyze is the `analyze` command: the offline timing audit and CI
// gate over one or more .vrlog files.
package analyze

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/outfile"
)

// Command returns the analyze command.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "analyze",
		Usage:     "audit a log's timing: skips, restarts, outages, frame-to-state lag, rates, latency; a CI gate",
		ArgsUsage: "FILE.vrlog [FILE.vrlog ...]",
		Description: `Reads one or more logs (several files are one session, e.g. split files, in
order; they must share one receive clock: the logs of several hosts are
refused until 'vrlog merge --clock sim' puts them on the simulator's clock)
and reports per channel: count, rate, capture interval (dt) p50/p90/p99/max,
skipped samples (seq gaps: samples that never arrived), publisher restarts (seq
went back: elapsed froze, then resumed), outages (gaps above --outage-factor ×
the nominal period), duplicates, reorders, recorder drops (kept apart from
publisher-side skips), undecodable payloads, and transport latency (receive
minus capture). Across channels: frame-to-state lag (frame t_ns minus the
latest state at or before it, and the nearest one) with a tolerance (a
frame whose latest state is from before an outage of the states is counted
apart, across_outage, and left out of the lag and --max-lag), the
frames' delay against the state timeline (which shows a delay below the state
period, where the latest-state lag cannot), paired as they arrive in memory of
--lag-window (a note says when samples arrived beyond it), and the recorder/simulator clock
offset and drift (valid when its 95 % confidence interval is within ±5 ppm)
from clock-sync probes. A log merged from several hosts with 'vrlog merge
--clock sim' is on the simulator's clock: the report lists each host's offset
and its uncertainty (receive_clock, hosts), and latency is each host's
transport latency, not the clocks' difference. A channel the recorder could
not open is reported with its error. A response log (replay --capture) also
gets the controller's reaction per trigger channel: the first response after
each released trigger, p50/p99/max, and the triggers without a response.

Payloads are decoded with epoch 0 (absolute unix seconds); the session epoch is
the first state sample and elapsed = (t_ns - epoch) / 1e9, as the SDK reports
it. By default only record metadata is read and checked (its CRCs; no pixel
is decompressed): a corrupt payload is not noticed, and the report says
payload CRCs were not checked (files[].payloads_checked false); 'vrlog
verify' checks every CRC. --full-decode decodes every payload instead,
checking its CRC (a corrupt one is exit 2), and gives the same timing report.

Thresholds make it a CI gate. Each takes VALUE (every channel it applies
to) or CHANNEL=VALUE, CHANNEL a name or key-expression pattern matched
against channel names and topics (* one level, ** any levels: 'vr/*/state=0',
'vr/**=0'; docs/cli.md), and may repeat; the last matching one wins. A gate
never passes by checking nothing: a CHANNEL that matches no channel the
check applies to is a usage error (exit 2) listing those channels, and a
VALUE on a log with nothing to check fails its check (exit 1).

An unfinished log (what a killed recorder leaves: no footer, maybe a torn
tail) is analyzed as far as it goes and, like a corrupt chunk skipped by
--tolerant or damage read around, said on stderr whatever the output (-q
included); --require-intact fails the gate on any log that is not intact.

--dataset DIR appends the run to a Parquet dataset (tables runs, channels:
every figure of the report, events: skips, restarts, outages, checks),
with --label KEY=VALUE (commit, branch, job...), for DuckDB, Spark, pandas
and polars across runs (docs/analytics.md). Many jobs may append to one
directory at once; a failed analysis is appended as a run of status error.

--csv, --junit and --html are new files: an existing one is replaced only
with --force (else exit 2); each is written aside and renamed into place
once complete.

EXAMPLES:
   analyze testdata/sample.vrlog
   analyze --json run.vrlog > report.json
   analyze --max-skips 0 --max-restarts 0 --max-outage 200ms \
       --min-rate 'vr/r1/state=24' --max-lag 45ms \
       --junit checks.xml --html report.html run.vrlog
   analyze --baseline last-good.json run.vrlog
   analyze --max-skips 0 --dataset /mnt/timing --label commit=$SHA run.vrlog
   # response.vrlog: the controller's answers, from replay --capture
   analyze --max-reaction 50ms --junit reaction.xml response.vrlog

` + cliutil.ExitCodesHelp,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON (schema vrlog.analyze/1, docs/analyze-report.md) instead of text"},
			&cli.StringFlag{Name: "csv", Usage: "write a per-sample timeline CSV to `FILE` (- for stdout, with -q: failed checks then go to stderr)"},
			&cli.StringFlag{Name: "junit", Usage: "write one JUnit test case per check to `FILE` (- for stdout, with -q)"},
			&cli.StringFlag{Name: "html", Usage: "write a self-contained HTML report with plots to `FILE` (- for stdout, with -q)"},
			&cli.BoolFlag{Name: "force", Usage: "replace existing --csv, --junit and --html files (a device or FIFO needs no --force)"},
			&cli.StringFlag{Name: "time-format", Value: "elapsed", Usage: "times in text and CSV: unix, elapsed, uts or rfc3339"},
			&cli.Float64Flag{Name: "outage-factor", Value: 3, Usage: "an outage is a capture gap above `K` × the nominal period (K > 1)"},
			&cli.DurationFlag{Name: "lag-tolerance", Value: analyzerDefaultLag, Usage: "frames lagging the latest state by more are rejected (> 0)"},
			&cli.DurationFlag{Name: "lag-window", Value: analyzer.DefaultLagWindow, Usage: "frames and states are paired exactly while out of capture order by less (bounded memory); negative (--lag-window=-1s) keeps every state"},
			&cli.BoolFlag{Name: "full-decode", Usage: "decode every payload (epoch 0) and check its CRC, instead of reading stored stamps and metadata CRCs only"},
			&cli.BoolFlag{Name: "require-intact", Usage: "fail the gate (exit 1) on an input with a torn tail (unfinished recording), a corrupt chunk skipped by --tolerant or damage read around; without it these are analyzed and warned about on stderr"},
			&cli.BoolFlag{Name: "tolerant", Usage: "skip corrupt chunks (listed in the report) instead of failing"},
			&cli.StringSliceFlag{Name: "max-skips", Usage: "most samples per channel the publisher skipped (missing by seq, less the recorder's own drops, as record's live max-skips): `[CHANNEL=]N`"},
			&cli.StringSliceFlag{Name: "max-restarts", Usage: "most publisher restarts per channel: `[CHANNEL=]N`"},
			&cli.StringSliceFlag{Name: "max-outage", Usage: "longest allowed outage: `[CHANNEL=]DURATION`"},
			&cli.StringSliceFlag{Name: "min-rate", Usage: "lowest allowed rate: `[CHANNEL=]HZ`"},
			&cli.StringSliceFlag{Name: "max-lag", Usage: "largest frame-to-latest-state lag (the state period included; frames across a state outage left out): `[FRAME_CHANNEL=]DURATION`"},
			&cli.StringSliceFlag{Name: "max-lag-reject", Usage: "largest fraction of frames rejected by --lag-tolerance: `[FRAME_CHANNEL=]F` (0..1)"},
			&cli.StringSliceFlag{Name: "max-reaction", Usage: "a response log's largest reaction (first response after a released trigger; one without a response fails): `[TRIGGER_CHANNEL=]DURATION`"},
			&cli.BoolFlag{Name: "partial-replay", Usage: "gate a response log whose replay did not finish, did not release every trigger of its window, or missed lockstep steps, on what it holds (by default --max-reaction fails it)"},
			&cli.StringFlag{Name: "baseline", Usage: "compare with an earlier --json report `OLD.json`: each metric of each baseline channel is a check; a regression, or a baseline channel missing from the log, fails"},
			&cli.StringSliceFlag{Name: "baseline-tolerance", Usage: "relative worsening allowed against --baseline: `[METRIC=]T` (>= 0; 0.1 = 10 %, the default), T alone for the counts and rates, METRIC=T for one metric; the timing percentiles (dt_ms.p99, latency_ms.p99, lag.latest_ms.p99) vary with the machine's load and are compared only with a tolerance of their own; repeatable"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only failed checks and the verdict"},
		}, datasetFlags()...),
		Action: run,
	}
}

const analyzerDefaultLag = 50e6 // 50 ms, as a time.Duration

func run(c *cli.Context) error {
	if c.NArg() == 0 {
		return cliutil.Usage("no input: give one or more .vrlog files (see --help)")
	}
	if slices.Contains(c.Args().Slice(), "-") {
		// A log is read by its index, not from a pipe; "--json -" reads
		// as a request for JSON on stdout, which --json alone is.
		return cliutil.Usage("-: analyze reads .vrlog files, not standard input; --json takes no value and prints the report to stdout (--json > report.json)")
	}
	tf, err := codec.ParseTimeFormat(c.String("time-format"))
	if err != nil {
		return cliutil.Usage("--time-format: %v", err)
	}
	th, err := thresholds(c)
	if err != nil {
		return err
	}
	opts, baseTol, err := settings(c)
	if err != nil {
		return err
	}
	var base *analyzer.Report
	if p := c.String("baseline"); p != "" {
		if base, err = analyzer.LoadReport(p); err != nil {
			return cliutil.Usage("--baseline: %v", err)
		}
	}
	ds, err := openDataset(c)
	if err != nil {
		return err
	}
	// Report files are complete or absent (outfile: written aside,
	// committed at the end); an existing one is replaced only with
	// --force, a device or FIFO is written in place, - is stdout.
	var files []*outfile.File
	defer func() {
		for _, f := range files {
			f.Abort()
		}
	}()
	out := c.App.Writer     // the report's
	var dash, what []string // the outputs onto stdout (-, /dev/stdout), and what they are
	for _, o := range []struct{ flag, what string }{{"csv", "CSV"}, {"junit", "JUnit report"}, {"html", "HTML report"}} {
		if p := c.String(o.flag); p != "" && outfile.IsStdout(p) {
			dash, what = append(dash, "--"+o.flag+" "+p), append(what, o.what)
		}
	}
	switch {
	case len(dash) > 1:
		return cliutil.Usage("%s all write to stdout: give one of them -, the others a FILE", strings.Join(dash, " and "))
	case len(dash) == 1 && (!c.Bool("quiet") || c.Bool("json")):
		// One output per stream: only -q's failed checks may go along,
		// and they go to stderr.
		return cliutil.Usage("%s writes the %s to stdout: add -q (failed checks then go to stderr) and no --json, or give %s FILE", dash[0], what[0], strings.Fields(dash[0])[0])
	case len(dash) == 1:
		out = c.App.ErrWriter
	}
	create := func(flag string) (*outfile.File, error) {
		f, err := outfile.Create(c.String(flag), outfile.Options{Force: c.Bool("force"), Stdout: c.App.Writer})
		if err != nil {
			return nil, cliutil.Output(fmt.Errorf("--%s: %w", flag, err))
		}
		files = append(files, f)
		return f, nil
	}
	var csvOut io.Writer
	if c.String("csv") != "" {
		f, err := create("csv")
		if err != nil {
			return err
		}
		csvOut = f
	}
	var junit, html *outfile.File
	if c.String("junit") != "" {
		if junit, err = create("junit"); err != nil {
			return err
		}
	}
	if c.String("html") != "" {
		if html, err = create("html"); err != nil {
			return err
		}
		opts.PlotBins = 600
	}

	a := analyzer.New(opts)
	if err := a.Plan(c.Args().Slice()); err != nil {
		switch {
		case errors.Is(err, hostclock.ErrSeveralRecorders):
			return ds.failed(cliutil.Input(fmt.Errorf("%w; analyze each host's log on its own, or put them on the simulator's clock first: vrlog merge --clock sim %s -o merged.vrlog",
				err, strings.Join(c.Args().Slice(), " "))))
		case errors.Is(err, hostclock.ErrMixedClocks):
			return ds.failed(cliutil.Input(fmt.Errorf("%w; analyze the merged log on its own, or merge the hosts' own logs together with vrlog merge --clock sim", err)))
		}
		return ds.failed(cliutil.Input(cliutil.LogHint(err)))
	}
	for _, p := range a.Files() { // in time order
		if err := a.AddFile(p); err != nil {
			return ds.failed(cliutil.Input(cliutil.LogHint(err)))
		}
	}
	rep := a.Report()
	if err := rep.ApplyChecks(th); err != nil {
		var te *analyzer.ThresholdError
		if errors.As(err, &te) {
			return cliutil.Usage("--%s: %v", te.Check, te.Err)
		}
		return cliutil.Usage("%v", err)
	}
	if base != nil {
		rep.CompareBaseline(base, baseTol)
	}
	if c.Bool("require-intact") {
		rep.CheckIntact()
	}
	cliutil.Warn(c, append(rep.Damage(), rep.OutageLimitWarnings()...)...)

	if csvOut != nil {
		if err := a.WriteCSV(csvOut, rep, tf); err != nil {
			return cliutil.Runtime(err)
		}
	}
	switch {
	case c.Bool("json"):
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	case c.Bool("quiet"):
		for _, f := range rep.Failed() {
			if _, err = fmt.Fprintf(out, "FAIL  %s\n", f.Message); err != nil {
				break
			}
		}
	default:
		err = rep.WriteTextWidth(out, tf, cliutil.Width(c)) // fitted on a terminal
	}
	if err != nil {
		return cliutil.Runtime(err)
	}
	if junit != nil {
		if err := rep.WriteJUnit(junit); err != nil {
			return cliutil.Runtime(err)
		}
	}
	if html != nil {
		if err := a.WriteHTML(html, rep); err != nil {
			return cliutil.Runtime(err)
		}
	}
	for _, f := range files {
		if err := f.Commit(); err != nil {
			return cliutil.Runtime(err)
		}
	}
	if err := ds.append(rep, a.Files()); err != nil {
		return err
	}
	if !rep.Pass {
		failed := rep.Failed()
		msg := fmt.Sprintf("%d of %d checks failed", len(failed), len(rep.Checks))
		if len(failed) > 0 {
			msg += "; first: " + failed[0].Message
		}
		return cliutil.CheckFailed(errors.New(msg))
	}
	return nil
}

func thresholds(c *cli.Context) (analyzer.Thresholds, error) {
	var t analyzer.Thresholds
	for _, x := range []struct {
		flag string
		dst  *[]analyzer.Limit
		dur  bool
		most float64 // the largest valid value
	}{
		{"max-skips", &t.MaxSkips, false, math.MaxFloat64}, {"max-restarts", &t.MaxRestarts, false, math.MaxFloat64},
		{"max-outage", &t.MaxOutageMs, true, math.MaxFloat64}, {"min-rate", &t.MinRate, false, math.MaxFloat64},
		{"max-lag", &t.MaxLagMs, true, math.MaxFloat64}, {"max-lag-reject", &t.MaxLagReject, false, 1},
		{"max-reaction", &t.MaxReaction, true, math.MaxFloat64},
	} {
		for _, s := range c.StringSlice(x.flag) {
			l, err := analyzer.ParseLimit(s, x.dur)
			if err != nil {
				return t, cliutil.Usage("--%s: %v", x.flag, err)
			}
			if l.Value > x.most {
				return t, cliutil.Usage("--%s %q: want a fraction from 0 to 1", x.flag, s)
			}
			*x.dst = append(*x.dst, l)
		}
	}
	return t, nil
}
