package fleet

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/fleetctl"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/recctl"
)

func status(state string, written int64, drops uint64, keepsUp bool) *recctl.StatusReport {
	return &recctl.StatusReport{Name: "x", Host: "gpu1", State: state, Mode: "files", File: "/data/run.vrlog", BytesWritten: written, Drops: drops,
		DiskKeepsUp: keepsUp, BacklogBytes: 300 << 20, Channels: []recctl.ChannelReport{{Hz: 100, MBps: 0.02}, {Hz: 30, MBps: 2.5}}}
}

// The table says per recorder what it wrote and dropped since the start
// (its counters less those it was found with), what it receives, its
// disk, and a recorder that went silent with how long and its last state;
// the plain line says the same in words; the table fits the terminal.
func TestViewRows(t *testing.T) {
	var w bytes.Buffer
	v := &view{w: &w, name: "run1", base: map[string]*fleetctl.Member{}, silent: map[string]bool{}, width: 200, height: 40}
	v.found([]fleetctl.Member{
		{Name: "gpu-box", Role: fleetctl.Ready, Status: status("idle", 1000, 5, true)},
		{Name: "robot-pc", Role: fleetctl.Ready, Status: status("idle", 0, 0, true)},
		{Name: "gone", Role: fleetctl.LeftOut, Silent: true, Why: "no recorder answered"},
	})
	if !strings.Contains(w.String(), "fleet: gone: LEFT OUT: no recorder answered") {
		t.Fatalf("the recorder left out was not said:\n%s", w.String())
	}
	start := time.Now()
	ms := []fleetctl.Member{
		{Name: "gpu-box", Role: fleetctl.Recording, Status: status("recording", 1000+2_500_000, 7, true), LastAnswer: start.Add(time.Millisecond)},
		{Name: "robot-pc", Role: fleetctl.Recording, Status: status("recording", 400_000, 0, false), LastAnswer: start.Add(-3 * time.Second)},
		{Name: "gone", Role: fleetctl.LeftOut, Silent: true},
	}
	v.update(ms, "on Ctrl-C", start)
	out := w.String()
	if !strings.Contains(out, "fleet: robot-pc: NO ANSWER to its status for 3s") || !strings.Contains(out, "it last said: recording, 390.6 KiB written into run.vrlog") {
		t.Fatalf("the silent recorder:\n%s", out)
	}
	if got := v.line(ms[0]); got != "gpu-box (host gpu1): recording, file run.vrlog, 2.4 MiB written, receiving 130 msg/s, 2.5 MB/s, 2 dropped, disk keeps up" {
		t.Fatalf("line %q", got)
	}
	if got := v.row(ms[1]); got[2] != "no answer for 3s (last: recording)" || got[7] != "behind by 300 MiB" {
		t.Fatalf("row %q", got)
	}
	lines := v.table(ms)
	if len(lines) != 4 || strings.Index(lines[0], "STATE") != strings.Index(lines[1], "recording") {
		t.Fatalf("table not aligned:\n%s", strings.Join(lines, "\n"))
	}
	fitted := fit(append([]string{"title"}, lines...), 30, 4)
	if len(fitted) != 3 || !strings.HasPrefix(fitted[2], "… and 3 more recorders") || len([]rune(fitted[1])) != 29 {
		t.Fatalf("fitted to 30×4:\n%s", strings.Join(fitted, "\n"))
	}
}

// The exit code of the recorders not recorded: 3 when one did not answer
// or did not stop, else 2 when one named refused; with --all a recorder
// busy with another recording is no error.
func TestLeftOutCodes(t *testing.T) {
	busy := fleetctl.Member{Name: "busy", Role: fleetctl.LeftOut}
	silent := fleetctl.Member{Name: "cut", Role: fleetctl.LeftOut, Silent: true}
	stuck := fleetctl.Member{Name: "stuck", Role: fleetctl.NotStopped}
	ok := fleetctl.Member{Name: "ok", Role: fleetctl.Stopped, File: "/d/r.vrlog"}
	for _, tc := range []struct {
		ms    []fleetctl.Member
		named bool
		code  int
	}{
		{[]fleetctl.Member{ok}, true, 0},
		{[]fleetctl.Member{ok, busy}, true, cliutil.ExitUsage},
		{[]fleetctl.Member{ok, busy}, false, 0},
		{[]fleetctl.Member{ok, busy, silent}, false, cliutil.ExitRuntime},
		{[]fleetctl.Member{ok, stuck}, true, cliutil.ExitRuntime},
		{[]fleetctl.Member{busy, silent}, true, cliutil.ExitRuntime},
	} {
		err := leftOut(tc.ms, tc.named, "then")
		if cliutil.Code(err) != tc.code {
			t.Errorf("%+v named=%v: %v (exit %d), want exit %d", tc.ms, tc.named, err, cliutil.Code(err), tc.code)
		}
	}
	if got := worst(cliutil.Usage("a"), cliutil.Runtime(nil)); cliutil.Code(got) != cliutil.ExitUsage {
		t.Errorf("worst of a usage error and none: %v", got)
	}
	if got := worst(nil, cliutil.Usage("b")); cliutil.Code(got) != cliutil.ExitUsage {
		t.Errorf("worst of none and a usage error: %v", got)
	}
}

// The summary of the recorders left out says each with its own reason:
// a busy one answered (it is not said to be silent), a name without a
// token is not found; under --all a busy one alone is no error.
func TestLeftOutSaysEachReason(t *testing.T) {
	busy := fleetctl.Member{Name: "s44a", Role: fleetctl.LeftOut, Left: "busy: recording", Status: status("recording", 0, 0, true)}
	ok := fleetctl.Member{Name: "s44b", Role: fleetctl.Stopped, File: "/data/run.vrlog"}
	absent := fleetctl.Member{Name: "nosuch", Role: fleetctl.LeftOut, Silent: true, Left: "not found"}
	err := leftOut([]fleetctl.Member{busy, ok, absent}, true, "the others were recorded")
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if cliutil.Code(err) != 3 || !strings.Contains(msg, "s44a (busy: recording), nosuch (not found)") || strings.Contains(msg, "did not answer") {
		t.Errorf("busy and absent: exit %d: %q", cliutil.Code(err), msg)
	}
	err = leftOut([]fleetctl.Member{busy, ok}, true, "the others were recorded")
	if cliutil.Code(err) != 2 || err.Error() != "fleet: left out: s44a (busy: recording) (said above); the others were recorded" {
		t.Errorf("busy: exit %d: %v", cliutil.Code(err), err)
	}
	if err := leftOut([]fleetctl.Member{busy, ok}, false, "the others were recorded"); err != nil {
		t.Errorf("--all, busy: %v", err)
	}
}
