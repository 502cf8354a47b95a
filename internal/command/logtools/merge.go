package logtools

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge logs into one, records in receive-time order (optionally on the simulator's clock)",
		ArgsUsage: "A.vrlog B.vrlog [...] -o OUT.vrlog",
		Description: `A k-way merge of the inputs' records by receive wall-clock time (the one
receive clock comparable across recorders and hosts; monotonic stamps are
kept as recorded). Channels are matched by name, transport, topic and schema:
the same stream recorded in two files becomes one channel; channel ids are
renumbered. Two different streams with the same name are kept apart, the
later one renamed NAME@N (N = the input's position, from 1). A sample two
inputs both recorded (two recorders of one stream: same channel, publisher,
seq and capture stamp) is kept once, the first copy, and merge says how many
copies it left out. Recorder drops of matched channels are added up.
Metadata is the first input's, plus vrlog.merged_from listing the inputs.

Use it to join the files of a split recording, or logs of one session taken
by two recorders (one per transport or host).

--clock sim puts every input on the simulator's clock: each host's receive
stamps (wall and monotonic) are converted with the clock offset its own
clock-sync probes measured (the lowest-RTT half of them, known within half
their round trip), so records of several hosts are ordered by simulator time
and the latency analyze reports is each host's transport latency, not the
clocks' difference. The files of one recording (split files: the same
recording id in their header) are one host: one model from all their
probes. Each host's probes stay a channel of their own (a later host's
renamed NAME@N), their payloads as recorded. The output's metadata
(vrlog.sim_clock) keeps every host's offset, uncertainty and probe count;
info and analyze show them. A host without usable probes, or an input with
probes of several time services and no --time-service choosing one, is an
input error.

The output is written to a temporary file next to OUT, verified by reading
it back, then renamed to OUT; an existing OUT is kept unless --force.

EXAMPLES:
   vrlog merge zenoh.vrlog iceoryx2.vrlog -o session.vrlog
   vrlog merge run.0.vrlog run.1.vrlog run.2.vrlog -o run.vrlog
   vrlog merge --clock sim states-laptop.vrlog frames-gpubox.vrlog \
       -o session.vrlog
   vrlog merge --clock sim --time-service vr/r1/time a.vrlog b.vrlog \
       -o session.vrlog

` + cliutil.ExitCodesHelp,
		Flags: append(outputFlags(),
			&cli.StringFlag{Name: "clock", Value: "recorder", Usage: "receive stamps of the output: `CLOCK` recorder (as each recorder stamped them) or sim (converted onto the simulator's clock from each input's clock-sync probes)"},
			&cli.StringFlag{Name: "time-service", Usage: "with --clock sim: the simulator's time service (a key expression matched against the probes' service and channel name) when a log probed several"},
		),
		Action: runMerge,
	}
}

func runMerge(c *cli.Context) error {
	if c.NArg() < 2 {
		return cliutil.Usage("merge: give two or more input files and -o OUT (see --help)")
	}
	sim := false
	switch c.String("clock") {
	case "recorder":
		if c.IsSet("time-service") {
			return cliutil.Usage("merge: --time-service chooses the clock of --clock sim; give both")
		}
	case "sim":
		sim = true
	default:
		return cliutil.Usage("merge: --clock %q: want recorder or sim", c.String("clock"))
	}
	var service *keyexpr.Pattern
	if s := c.String("time-service"); s != "" {
		p, err := keyexpr.Parse(s)
		if err != nil {
			return cliutil.Usage("merge: --time-service: %v", err)
		}
		service = &p
	}
	return mergeLogs(c, c.Args().Slice(), c.String("output"), c.Bool("force"), sim, hostclock.AlignOptions{Service: service})
}

// MergeOnSimClock is `merge --clock sim PATHS -o OUT`, for verbs that
// bring the hosts' logs together (collect): the same checks, output and
// report, on c's writers. hosts names each path's host (the recorder it
// was collected from): one clock model and one probe channel each.
func MergeOnSimClock(c *cli.Context, paths, hosts []string, out string, force bool) error {
	return mergeLogs(c, paths, out, force, true, hostclock.AlignOptions{Hosts: hosts})
}

// mergeLogs merges paths into out; sim puts them on the simulator's
// clock as align says.
func mergeLogs(c *cli.Context, paths []string, out string, force, sim bool, align hostclock.AlignOptions) error {
	var readers []*logfmt.Reader
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	defer func() { warnDamage(c, readers...) }()
	for _, p := range paths {
		r, err := openLog(p, logfmt.ReaderOptions{})
		if err != nil {
			return err
		}
		readers = append(readers, r)
	}
	meta := maps.Clone(readers[0].Header().Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	meta["vrlog.merged_from"] = strings.Join(paths, ",")
	keepEpoch(meta, paths, readers...)
	var opts logfmt.MergeOptions
	var al *hostclock.Alignment
	if sim {
		var err error
		if al, err = hostclock.Align(readers, paths, align); err != nil {
			return clockError(err)
		}
		opts = logfmt.MergeOptions{Apart: func(c logfmt.Channel) bool { return hostclock.IsProbe(c) || analyzer.IsPause(c) },
			Hosts: al.Hosts(), Restamp: al.Restamp}
	} else if err := hostclock.SameClock(readers, paths); err != nil {
		return cliutil.Input(fmt.Errorf("merge: %w; merge the hosts' own logs with --clock sim", err))
	} else {
		opts.Apart = analyzer.IsPause // each recorder's pauses are its own channels'
	}
	opts.Workers = mergeReadAhead(len(readers))
	plan, err := logfmt.PlanMerge(readers, opts)
	if err != nil {
		return cliutil.Input(err)
	}
	if al != nil {
		meta[hostclock.MetaKey] = al.SimClock(plan).Encode()
	}
	delete(meta, analyzer.MetaPauseScope) // the first input's own, if it was merged
	if scope := analyzer.PauseScope(readers, plan); scope != "" {
		meta[analyzer.MetaPauseScope] = scope
	}
	f, err := createOutputAt(c, out, force, paths...)
	if err != nil {
		return err
	}
	defer f.Abort()
	created := readers[0].Header().CreatedWallNs
	for _, r := range readers[1:] {
		created = min(created, r.Header().CreatedWallNs)
	}
	st, err := writeCopy(f, copyWriterOptions(meta, created), newProgress(c, "merge", readers...), plan.Copy)
	if err != nil {
		var ce *logfmt.CorruptionError
		if errors.As(err, &ce) {
			return readError(ce.File, err)
		}
		return err
	}
	for _, rn := range st.Renamed {
		if !rn.Apart {
			fmt.Fprintf(c.App.ErrWriter, "merge: warning: %s: channel %q differs from the one of that name in an earlier input (transport/topic/schema); renamed %q\n", paths[rn.Input], rn.From, rn.To)
		}
	}
	fmt.Fprintf(status(c), "wrote %s: %d records on %d channels from %d inputs (%s)\n", f.Path(), st.Records, st.Channels, len(paths), checked(f))
	for _, d := range st.Duplicates {
		fmt.Fprintf(status(c), "  %s: %d records left out: second copies of samples another input recorded too (same publisher, seq and capture stamp: two recorders of one stream)\n", d.Channel, d.Records)
	}
	if al != nil {
		sc := al.SimClock(plan)
		fmt.Fprintf(status(c), "receive stamps on the simulator's clock (time service %s), each host's converted by its probes' offset:\n", sc.Service)
		printHosts(status(c), sc.Hosts)
	}
	return nil
}

// clockError makes an alignment failure an input error (exit 2) that says
// what to do.
func clockError(err error) error {
	switch {
	case errors.Is(err, hostclock.ErrAmbiguous):
		err = fmt.Errorf("%w; choose one with --time-service", err)
	case errors.Is(err, hostclock.ErrNoProbes):
		err = fmt.Errorf("%w; without its probes its clock cannot be put on the simulator's (record with --probe-interval > 0 and the simulator's time service reachable)", err)
	}
	return cliutil.Input(fmt.Errorf("merge --clock sim: %w", err))
}

// printHosts lists each host's clock model, one line each.
func printHosts(w io.Writer, hosts []hostclock.Host) {
	for _, h := range hosts {
		drift := ""
		if h.DriftValid {
			drift = fmt.Sprintf(", drift %+.3f ppm", h.DriftPPM)
		}
		fmt.Fprintf(w, "  %s: offset %+.3f ms ± %.3f ms (simulator minus host; from %d of %d probes, rtt %.3f ms%s), probes on %s\n",
			h.Label(), ms(h.OffsetNs), ms(h.UncertaintyNs), h.Used, h.Probes, ms(h.RTTNs), drift, h.ProbeChannel)
		if h.Name != "" || len(h.Files) > 1 {
			fmt.Fprintf(w, "    %s\n", hostFiles(h))
		}
		if h.RecoveredFrom != "" {
			fmt.Fprintf(w, "    RECOVERED: its recorder never finished %s (crash, kill -9, power loss); this is the verified copy, without what the recorder still held\n", h.RecoveredFrom)
		}
	}
}

// hostFiles says which files a host's are: "files: a, b, c", or for many
// "13 files: a … m".
func hostFiles(h hostclock.Host) string {
	fs := h.Inputs()
	if len(fs) > 4 {
		return fmt.Sprintf("%d files: %s … %s", len(fs), fs[0], fs[len(fs)-1])
	}
	return "files: " + strings.Join(fs, ", ")
}

func ms(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }

// mergeReadAhead shares logfmt.ReadAhead's loaders among the inputs, at
// least one each on a machine with a core to spare: memory is Workers+1
// chunks per input.
func mergeReadAhead(inputs int) int {
	w := logfmt.ReadAhead()
	if w == 0 {
		return 0
	}
	return max(1, w/max(1, inputs))
}
