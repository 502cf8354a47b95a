package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/livecheck"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recctl"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/recorder/snapshot"
)

// snapshotFlags are record's snapshot mode (--snapshot and the flags that
// need it).
func snapshotFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "snapshot", Usage: "snapshot mode: keep the last `DURATION` in memory and write it only when triggered (SIGUSR1, a zenoh query, --snapshot-on)"},
		&cli.StringFlag{Name: "snapshot-bytes", Value: "512M", Usage: "with --snapshot: most `SIZE` of compressed chunks held in memory (e.g. 256M, 2G): the part before a trigger, and what the window's journal has not written yet"},
		&cli.DurationFlag{Name: "after", Usage: "with --snapshot: also record this `DURATION` after the trigger (written to disk as it comes: held in full whatever --snapshot-bytes while the disk keeps up; else the part before the trigger gives way first, then the after part is cut short, and the snapshot says so)"},
		&cli.StringSliceFlag{Name: "snapshot-on", Usage: "with --snapshot: take a snapshot when a sample fails analyze's check: `CHECK=[CHANNEL=]VALUE`, CHECK " + livecheck.LiveChecks + " (repeatable; it was --trigger)"},
		&cli.StringSliceFlag{Name: "trigger", Hidden: true, Usage: "deprecated: --snapshot-on"},
	}
}

// minSnapshotBytes is the smallest --snapshot-bytes: a few chunks (4 MiB,
// or one 1080p frame each).
const minSnapshotBytes = 16 << 20

// snapshotConfig reads the snapshot flags into cfg; nil without --snapshot.
func snapshotConfig(c *cli.Context, cfg *recorder.Config) error {
	if c.Duration("snapshot") <= 0 {
		for _, f := range []string{"after", "snapshot-on", "trigger", "snapshot-bytes"} {
			if c.IsSet(f) {
				return cliutil.Usage("--%s needs --snapshot DURATION", f)
			}
		}
		return nil
	}
	if cfg.SplitSize > 0 || cfg.SplitDuration > 0 || cfg.MaxFiles > 0 {
		return cliutil.Usage("--snapshot writes one log per trigger: it does not split (--split-size, --split-duration, --max-files)")
	}
	if c.Bool("idle") {
		return cliutil.Usage("--idle: a snapshot recorder keeps the last moments from its start; it cannot start idle")
	}
	sc := &snapshot.Config{Before: c.Duration("snapshot"), After: c.Duration("after")}
	if sc.After < 0 {
		return cliutil.Usage("--after %s: want a duration of 0 or more", sc.After)
	}
	var err error
	if sc.MaxBytes, err = parseSize(c.String("snapshot-bytes")); err != nil {
		return cliutil.Usage("--snapshot-bytes: %v", err)
	}
	if sc.MaxBytes < minSnapshotBytes {
		return cliutil.Usage("--snapshot-bytes %s: want at least 16M (a few chunks)", c.String("snapshot-bytes"))
	}
	if c.IsSet("trigger") {
		cliutil.Warn(c, "--trigger is deprecated: it is --snapshot-on now (a trigger is what fires a snapshot: SIGUSR1, a query, a failed live check); --trigger goes in a later release")
	}
	for _, s := range append(c.StringSlice("snapshot-on"), c.StringSlice("trigger")...) {
		t, err := livecheck.ParseTrigger(s)
		if err != nil {
			return cliutil.Usage("--snapshot-on %v", err)
		}
		cfg.Triggers = append(cfg.Triggers, t)
	}
	cfg.Snapshot = sc
	return nil
}

// snapshotReports wires the reports of a snapshot recording: each
// snapshot written is printed, and what a person should know.
func snapshotReports(c *cli.Context, cfg *recorder.Config, name string, errw io.Writer) {
	// The buffer's notices speak of the window before a trigger, the part
	// after it and the memory bound: the flags that set them are said here.
	cfg.Snapshot.OnNotice = func(msg string) {
		fmt.Fprintf(errw, "record: WARNING: %s (the window before a trigger is --snapshot, the part after it --after, the memory bound --snapshot-bytes)\n", msg)
	}
	cfg.OnNotice = func(msg string) { fmt.Fprintf(errw, "record: WARNING: %s\n", withCheckFlag(msg)) }
	if !c.Bool("quiet") {
		cfg.Snapshot.OnOpen = func(t logfmt.SnapshotTrigger, journal string) {
			fmt.Fprintf(errw, "record: snapshot: triggered by %s; writing it as it comes to %s (what a kill -9 would leave, for vrlog recover)\n", t.Cause, journal)
		}
	}
	cfg.Snapshot.OnSnapshot = func(r snapshot.Result) {
		if r.Err != nil {
			fmt.Fprintf(errw, "record: ERROR: snapshot (%s) not written: %v\n", r.Snapshot.Triggers[0].Cause, r.Err)
			return
		}
		s := r.Snapshot
		before, after := "before", "after the trigger"
		if s.TriggerCount > 1 {
			before, after = "before the first trigger", "after the last"
		}
		line := fmt.Sprintf("record: snapshot: wrote %s: %d records, %.3f s (%.3f s %s, %.3f s %s; %s and %s asked), triggered by %s",
			r.Path, r.Records, float64(s.ToMonoNs-s.FromMonoNs)/1e9, r.Before.Seconds(), before, r.After.Seconds(), after, s.Before, s.After, s.Triggers[0].Cause)
		if s.TriggerCount > 1 {
			line += fmt.Sprintf(" and extended by %d more", s.TriggerCount-1)
		}
		if s.HeldOpen != "" {
			line += "; held open " + s.HeldOpen
		}
		if s.Short != "" {
			line += "; short: " + s.Short
		}
		fmt.Fprintln(errw, line) // one write: errw serializes lines
	}
	if c.Bool("quiet") {
		return
	}
	fmt.Fprintf(errw, "record: snapshot mode: keeping the last %s in memory (at most %s); a snapshot on SIGUSR1 (kill -USR1 %d), a zenoh query on %s",
		cfg.Snapshot.Before, c.String("snapshot-bytes"), os.Getpid(), recctl.Key(name, recctl.Snapshot))
	for _, t := range cfg.Triggers {
		fmt.Fprintf(errw, ", --snapshot-on %s", t)
	}
	fmt.Fprintln(errw)
}

// onSIGUSR1 takes a snapshot on every SIGUSR1 until the recording ends.
func onSIGUSR1(r *recorder.Recorder) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1)
	go func() {
		defer signal.Stop(sigs)
		for {
			select {
			case <-r.Done():
				return
			case <-sigs:
				go r.Snapshot(context.Background(), snapshot.TriggerNow("signal SIGUSR1"), "signal-sigusr1") // printed by OnSnapshot
			}
		}
	}()
}

// withCheckFlag names the flag of a notice about a live check
// (livecheck.Watch.Unwatched, "max-lag=45ms watched nothing: ..."): the
// library names the check, the verb its flag.
func withCheckFlag(msg string) string {
	for _, check := range strings.Split(livecheck.LiveChecks, ", ") {
		if strings.HasPrefix(msg, check+"=") {
			return "--snapshot-on " + msg
		}
	}
	return msg
}

// snapshotCheck reports a snapshot recording's end: a --snapshot-on check
// that watched nothing fails it (exit 1), as a threshold that checks
// nothing fails analyze.
func snapshotCheck(sum *recorder.Summary, errw io.Writer) error {
	if sum.Snapshot != nil && sum.Snapshot.Written == 0 {
		fmt.Fprintf(errw, "record: no snapshot was triggered: nothing written\n")
	}
	if len(sum.Unwatched) > 0 {
		lines := make([]string, len(sum.Unwatched))
		for i, u := range sum.Unwatched {
			lines[i] = withCheckFlag(u)
		}
		return cliutil.CheckFailed(errors.New(strings.Join(lines, "; ")))
	}
	return nil
}
