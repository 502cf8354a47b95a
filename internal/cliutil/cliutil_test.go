package cliutil

import (
	"bytes"
	"errors"
	"io/fs"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// app is a two-verb app that records what its actions saw.
func app(got *[]string) *cli.App {
	act := func(c *cli.Context) error {
		*got = append(append([]string{c.String("o")}, c.StringSlice("channel")...), c.Args().Slice()...)
		if c.Bool("json") {
			*got = append(*got, "json")
		}
		return nil
	}
	flags := []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}}, &cli.BoolFlag{Name: "json"},
		&cli.StringSliceFlag{Name: "channel", Aliases: []string{"c"}}}
	return &cli.App{Name: "t", Commands: []*cli.Command{{Name: "cut", Flags: flags, Action: act}}, HideHelpCommand: true}
}

func TestFlagsAnywhere(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"cut", "-o", "out", "in"}, []string{"out", "in"}},
		{[]string{"cut", "in", "-o", "out"}, []string{"out", "in"}},
		{[]string{"cut", "in", "--json", "other", "-o=out"}, []string{"out", "in", "other", "json"}},
		{[]string{"cut", "in", "-c", "vr/*", "--", "-o"}, []string{"", "vr/*", "in", "-o"}},
		{[]string{"cut", "--json", "a", "b"}, []string{"", "a", "b", "json"}},
		{[]string{"cut", "seek", "-1", "-o", "-2"}, []string{"-2", "seek", "-1"}}, // a negative number is an argument (ctl seek -1), or a flag's value
		{[]string{"cut", "rate", "-0.5"}, []string{"", "rate", "-0.5"}},
	} {
		var got []string
		var out, errb bytes.Buffer
		a := app(&got)
		a.Writer, a.ErrWriter = &out, &errb
		if code := Execute(a, append([]string{"t"}, c.args...)); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errb.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: action saw %q, want %q", c.args, got, c.want)
		}
	}
	var got []string
	var errb bytes.Buffer
	a := app(&got)
	a.ErrWriter = &errb
	if code := Execute(a, []string{"t", "cut", "in", "--nope"}); code != ExitUsage || !strings.Contains(errb.String(), "unknown flag --nope (see --help)") {
		t.Fatalf("unknown flag after the argument: exit %d %s", code, errb.String())
	}
}

// Flag errors name the flag as typed (Go's flag package said -json of
// --json), and a bad value says so without "parse error".
func TestFlagErrorsNameTheFlagAsTyped(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cut", "--json2"}, "t: unknown flag --json2 (see --help)"},
		{[]string{"cut", "-json2"}, "t: unknown flag -json2 (see --help)"},
		{[]string{"cut", "--bogus=1", "in"}, "unknown flag --bogus (see --help)"},
		{[]string{"cut", "in", "--every", "soon"}, `--every "soon": want seconds (2.5) or a duration (300ms, 1m30s)`},
		{[]string{"cut", "in", "--every"}, "--every needs a value"},
	} {
		var errb bytes.Buffer
		a := app(new([]string))
		a.Commands[0].Flags = append(a.Commands[0].Flags, &cli.DurationFlag{Name: "every"})
		a.ErrWriter = &errb
		if code := Execute(a, append([]string{"t"}, c.args...)); code != ExitUsage || !strings.Contains(errb.String(), c.want) || strings.Contains(errb.String(), "parse error") {
			t.Errorf("%v: exit %d %q, want %q", c.args, code, errb.String(), c.want)
		}
	}
}

// Every duration flag takes seconds too, as replay's --duration 10 and
// the time windows do (record --duration 1 was a parse error).
func TestDurationFlagsTakeSeconds(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"--every", "1"}, time.Second},
		{[]string{"--every=2.5"}, 2500 * time.Millisecond},
		{[]string{"--every", "300ms"}, 300 * time.Millisecond},
		{[]string{"in", "--every", "0"}, 0},
	} {
		var got time.Duration
		a := &cli.App{Name: "t", Commands: []*cli.Command{{Name: "rec", Flags: []cli.Flag{&cli.DurationFlag{Name: "every", Value: time.Hour}},
			Action: func(c *cli.Context) error { got = c.Duration("every"); return nil }}}}
		var errb bytes.Buffer
		a.ErrWriter = &errb
		if code := Execute(a, append([]string{"t", "rec"}, c.args...)); code != 0 || got != c.want {
			t.Errorf("%v: exit %d, %v, want %v %s", c.args, code, got, c.want, errb.String())
		}
	}
}

func TestSingleTakesFlagsAnywhere(t *testing.T) {
	var got []string
	a := Single(app(&got).Commands[0])
	if code := Execute(a, []string{"cut", "in", "-o", "x"}); code != 0 || !slices.Equal(got, []string{"x", "in"}) {
		t.Fatalf("exit %d, saw %q", code, got)
	}
	var out bytes.Buffer
	a = Single(app(&got).Commands[0])
	a.Writer = &out
	if code := Execute(a, []string{"cut", "in", "--version"}); code != 0 || !strings.Contains(out.String(), "cut version ") {
		t.Fatalf("--version after an argument: exit %d %q", code, out.String())
	}
}

func TestOutputErrors(t *testing.T) {
	err := Output(&fs.PathError{Op: "create", Path: "x", Err: fs.ErrExist})
	if Code(err) != ExitUsage || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("exists: %d %v", Code(err), err)
	}
	if Code(Output(errors.New("disk full"))) != ExitRuntime || Output(nil) != nil {
		t.Fatal("Output")
	}
}

func TestVersionFromBuildInfo(t *testing.T) {
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3, go1.26"},
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}},
			"devel 0123456789ab-dirty (2026-01-02T03:04:05Z), go1.26"},
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, "devel abc, go1.26"},
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "v0.0.0-20260102030405-0123456789ab+dirty"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}},
			"devel 0123456789ab-dirty (2026-01-02T03:04:05Z), go1.26"}, // the pseudo-version Go stamps in a checkout
		{debug.BuildInfo{GoVersion: "go1.26"}, "devel (the build carries no VCS information"},
	} {
		if got := describe(&c.bi); !strings.HasPrefix(got, c.want) {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

func TestSignalsTogetherAreOneRequest(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := signalCount{window: SameRequest}
	for _, c := range []struct {
		at           time.Duration
		first, again bool
	}{
		{0, true, false},
		{20 * time.Microsecond, false, false}, // GNU timeout: the child, then its process group
		{10 * time.Millisecond, false, false}, // kill -TERM; sleep 0.01; kill -TERM
		{SameRequest, false, false},
		{SameRequest + time.Millisecond, false, true}, // a later signal: stop at once
	} {
		if first, again := s.add(t0.Add(c.at)); first != c.first || again != c.again {
			t.Errorf("signal at +%v: first %v again %v, want %v %v", c.at, first, again, c.first, c.again)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	a := app(new([]string))
	a.Commands = append(a.Commands, &cli.Command{Name: "cat"}, &cli.Command{Name: "info"}, &cli.Command{Name: "merge"})
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inf", "x"}, ExitUsage, `t: unknown command "inf"; did you mean info? (see --help)`},
		{[]string{"mrege"}, ExitUsage, `unknown command "mrege"; did you mean merge?`},
		{[]string{"ca"}, ExitUsage, `unknown command "ca"; did you mean cat?`},
		{[]string{"zzzzz"}, ExitUsage, `unknown command "zzzzz" (the commands: cut, cat, info, merge)`},
		{[]string{"cut", "in"}, ExitOK, ""},
		{[]string{"help", "inf"}, ExitUsage, `unknown command "inf"; did you mean info?`},
		{[]string{"help", "cut"}, ExitOK, ""},
	} {
		var out, errb bytes.Buffer
		a.Writer, a.ErrWriter = &out, &errb
		if code := Execute(a, append([]string{"t"}, c.args...)); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}

func TestHelpWrapsAt80OffATerminal(t *testing.T) {
	a := app(new([]string))
	a.Commands[0].Usage = "cut a log"
	a.Commands[0].Flags = append(a.Commands[0].Flags, &cli.StringFlag{Name: "long", Usage: strings.Repeat("a usage that goes on and on ", 12)})
	for _, args := range [][]string{{"t", "cut", "--help"}, {"t", "--help"}} {
		var out bytes.Buffer
		a.Writer = &out
		if code := Execute(a, args); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		if !strings.HasSuffix(out.String(), "\n") {
			t.Errorf("%v: no final newline: %q", args, out.String())
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if len(l) > HelpWidth {
				t.Errorf("%v: %d columns: %q", args, len(l), l)
			}
		}
	}
}

func TestTerminalSizeWithZeroRows(t *testing.T) {
	// script(1) and CI pseudo-terminals report 0 rows with known columns.
	for _, c := range [][4]int{{50, 0, 50, 24}, {200, 0, 200, 24}, {0, 0, 80, 24}, {120, 40, 120, 40}} {
		if w, h, _ := knownSize(c[0], c[1]); w != c[2] || h != c[3] {
			t.Errorf("knownSize(%d, %d) = %d×%d, want %d×%d", c[0], c[1], w, h, c[2], c[3])
		}
	}
}

// What a verb prints carries no Go package names (logfmt:, player:), but
// the transports' (zenoh:, iceoryx2:) and the verbs' own.
func TestReadable(t *testing.T) {
	for in, want := range map[string]string{
		"run.vrlog: offset 16: chunk meta section: expected crc32c 0x1: logfmt: CRC mismatch": "run.vrlog: offset 16: chunk meta section: expected crc32c 0x1: CRC mismatch",
		"player: lockstep needs a trigger flag per channel":                                   "lockstep needs a trigger flag per channel",
		"zenoh: session closed": "zenoh: session closed",
		"replay: warning: x":    "replay: warning: x",
	} {
		if got := Readable(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
