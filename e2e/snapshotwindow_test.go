package e2e

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
)

// Snapshots at a rate a test can afford (320×240 noise frames at 30 Hz,
// 200 Hz states: about 7 MB/s) with a 64M bound, which holds about 9 s:
// a window of 30 s before and 3 s after needs more than the bound.

// startFileSession is startSnapSession with the recorder's output in a
// file, which the test may read while the recorder runs.
func startFileSession(t *testing.T, recArgs, simArgs []string) (s *snapSession, errPath string) {
	t.Helper()
	s = &snapSession{dir: t.TempDir(), port: strconv.Itoa(freePort(t)), robot: robot(t)}
	errPath = filepath.Join(s.dir, "rec.err")
	f, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd := exec.Command(vrlogBin, append([]string{"record", "--listen", "tcp/127.0.0.1:" + s.port, "--no-multicast",
		"-o", filepath.Join(s.dir, "rec.vrlog"), "-k", "vr/" + s.robot + "/**", "-s", "vr/" + s.robot + "/camera/front",
		"--time-service", "vr/" + s.robot + "/time"}, recArgs...)...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.rec = &proc{cmd: cmd, stderr: nil, done: make(chan error, 1)}
	go func() { s.rec.done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	s.sim = start(t, vrlogBin, append([]string{"sim", "--connect", "tcp/127.0.0.1:" + s.port, "--no-multicast", "-q", "--robot", s.robot,
		"--width", "320", "--height", "240", "--state-hz", "200", "--start-delay", "1500ms", "--log", filepath.Join(s.dir, "truth.jsonl")}, simArgs...)...)
	return s, errPath
}

func readErr(t *testing.T, path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// finishOne waits for a snapshot, for the simulator to end and then for
// the recorder to stop (both exit 0), and returns the snapshots, one.
func (s *snapSession) finishOne(t *testing.T, errPath string) []string {
	t.Helper()
	s.waitSnapshots(t, 1)
	if code := s.sim.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sim exit %d", code)
	}
	if code := s.stopRec(t); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, readErr(t, errPath))
	}
	files := s.snapshots(t)
	if len(files) != 1 {
		t.Fatalf("snapshots %v:\n%s", files, readErr(t, errPath))
	}
	return files
}

// stopRec stops the recorder with SIGINT and returns its exit code.
func (s *snapSession) stopRec(t *testing.T) int {
	t.Helper()
	s.rec.signal(syscall.SIGINT)
	select {
	case err := <-s.rec.done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 0
	case <-time.After(60 * time.Second):
		s.rec.cmd.Process.Kill()
		t.Fatal("record did not stop within 60 s")
	}
	return -1
}

// The part after the trigger is guaranteed (issue 25, 1), and two
// triggers 1 s apart extend one window into one file, whatever the memory
// (3): the window holds the 3 s after the second trigger, with nothing
// missing, and before the first what the bound held, said in the log; the
// first fill said what the bound holds, with the numbers, and each open
// window its journal, removed once the snapshot is in place.
func TestSnapshotAfterGuaranteed(t *testing.T) {
	s, errPath := startFileSession(t, []string{"--snapshot", "30s", "--after", "3s", "--snapshot-bytes", "64M"}, []string{"--duration", "24s"})
	s.waitTruth(t, 200*14) // 14 s of states: the bound has filled
	s.rec.signal(syscall.SIGUSR1)
	time.Sleep(time.Second)
	s.rec.signal(syscall.SIGUSR1)
	files := s.waitSnapshots(t, 1)
	if code := s.sim.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sim exit %d", code)
	}
	if code := s.stopRec(t); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, readErr(t, errPath))
	}
	errs := readErr(t, errPath)
	files = s.snapshots(t)
	if len(files) != 1 {
		t.Fatalf("snapshots %v, want 1 (the second trigger extends the first's window):\n%s", files, errs)
	}
	recs, snap := readSnapshot(t, files[0])
	published := readTruth(t, filepath.Join(s.dir, "truth.jsonl"))
	t1 := snap.Triggers[len(snap.Triggers)-1].MonoNs
	if snap.TriggerCount != 2 || !endsAt(snap, t1+3e9) || !strings.Contains(snap.Short, "the memory bound (64 MiB) held only ") || !strings.Contains(snap.Short, "s before the trigger, 30s asked") {
		t.Fatalf("snapshot %+v: want both triggers, 3 s after the second, the bound's cut said", snap)
	}
	checkCovers(t, files[0], recs, snap, published, "vr/"+s.robot+"/state", 5*time.Millisecond)
	checkCovers(t, files[0], recs, snap, published, "vr/"+s.robot+"/camera/front", 33*time.Millisecond)
	if !strings.Contains(errs, "record: WARNING: snapshot buffer: 64 MiB holds about ") || !strings.Contains(errs, "a window of 30s before the trigger needs about ") ||
		!strings.Contains(errs, "writing it as it comes to "+files[0]+".partial") {
		t.Fatalf("record's stderr:\n%s", errs)
	}
	if m, _ := filepath.Glob(filepath.Join(s.dir, "*.partial")); len(m) != 0 {
		t.Fatalf("journals left: %v", m)
	}
	t.Logf("%s: %.3f s before the first trigger, %.3f s after the second: %s", filepath.Base(files[0]),
		float64(snap.Triggers[0].MonoNs-snap.FromMonoNs)/1e9, float64(snap.ToMonoNs-t1)/1e9, snap.Short)
}

// A --snapshot-on that matches no channel is said as soon as the channels are
// known, while the recording goes on, without vrlog's own vrlog/recorder
// among the channels listed (7); and max-outage fires when a stream stops
// for good (4).
func TestSnapshotTriggerWarnsEarlyAndStoppedStream(t *testing.T) {
	s, errPath := startFileSession(t, []string{"--snapshot", "4s", "--after", "1s", "--snapshot-bytes", "64M",
		"--snapshot-on", "max-skips=vr/nomatch/**=0", "--snapshot-on", "max-outage=vr/*/state=200ms"}, []string{"--duration", "8s"})
	waitFor(t, 30*time.Second, "the warning on the unmatched --snapshot-on", func() bool {
		return strings.Contains(readErr(t, errPath), `--snapshot-on max-skips=vr/nomatch/**=0: "vr/nomatch/**" matches no channel with seq stamps`)
	})
	select {
	case <-s.sim.done:
		t.Fatalf("the warning came after the simulator ended:\n%s", readErr(t, errPath))
	default:
	}
	if e := readErr(t, errPath); strings.Contains(e, "vrlog/recorder") {
		t.Fatalf("vrlog/recorder listed:\n%s", e)
	}
	if code := s.sim.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sim exit %d", code)
	}
	files := s.waitSnapshots(t, 1) // the states stopped: an outage that never ends
	if code := s.stopRec(t); code != 1 {
		t.Fatalf("record exit %d, want 1 (a --snapshot-on matched nothing):\n%s", code, readErr(t, errPath))
	}
	_, snap := readSnapshot(t, files[0])
	if !strings.HasPrefix(snap.Triggers[0].Cause, "max-outage vr/"+s.robot+"/state: ") || !strings.HasSuffix(snap.Triggers[0].Cause, ": its samples stopped") ||
		!strings.HasSuffix(files[0], "_max-outage_vr-"+s.robot+"-state.vrlog") {
		t.Fatalf("%s: triggered by %v", files[0], causes(snap))
	}
}

// kill -9 while a window is open keeps what was known at the trigger
// (5): the journal holds the part before the trigger, and vrlog recover
// restores it.
func TestSnapshotKill9OpenWindow(t *testing.T) {
	s, errPath := startFileSession(t, []string{"--snapshot", "4s", "--after", "30s", "--snapshot-bytes", "64M"}, []string{"--duration", "40s"})
	s.waitTruth(t, 200*6)
	s.rec.signal(syscall.SIGUSR1)
	var journal string
	waitFor(t, 30*time.Second, "the journal", func() bool {
		m, _ := filepath.Glob(filepath.Join(s.dir, "rec_*.vrlog.partial"))
		if len(m) == 1 {
			journal = m[0]
		}
		return journal != "" && strings.Contains(readErr(t, errPath), "writing it as it comes to "+journal)
	})
	time.Sleep(2 * time.Second) // part of the after window too
	s.rec.signal(syscall.SIGKILL)
	<-s.rec.done
	if m, _ := filepath.Glob(filepath.Join(s.dir, ".rec_*.tmp-*")); len(m) != 0 {
		t.Fatalf("kill -9 during an open window left %v: only its journal should be there", m)
	}
	fixed := filepath.Join(s.dir, "recovered.vrlog")
	if out, err := exec.Command(vrlogBin, "recover", journal, "-o", fixed).CombinedOutput(); err != nil {
		t.Fatalf("recover %s: %v\n%s", journal, err, out)
	}
	recs, snap := readSnapshot(t, fixed)
	t0 := snap.Triggers[0].MonoNs
	st := recs["vr/"+s.robot+"/state"]
	if len(st) == 0 || st[0].mono > t0-3e9 || st[len(st)-1].mono < t0+1e9 || !strings.Contains(snap.Short, "the recorder stopped before this snapshot was written") {
		t.Fatalf("recovered %d states from %d to %d, trigger at %d (%+v): want the seconds before the trigger and some after", len(st), st[0].mono, st[len(st)-1].mono, t0, snap)
	}
	for i := 1; i < len(st); i++ {
		if st[i].Seq != st[i-1].Seq+1 {
			t.Fatalf("recovered states: seq %d → %d", st[i-1].Seq, st[i].Seq)
		}
	}
	s.sim.signal(syscall.SIGINT)
	s.sim.wait(t, 30*time.Second)
	t.Logf("recovered %d states, %.3f s before the trigger, %.3f s after", len(st), float64(t0-st[0].mono)/1e9, float64(st[len(st)-1].mono-t0)/1e9)
}

// Several snapshots of one recording analyzed together report exactly
// the faults inside their windows (8): a stall inside the first, a
// publisher restart between the two, none inside the second;
// the time between is not captured; and every verb counts elapsed from
// the recording's epoch, its first state sample (9).
func TestSnapshotsAnalyzedTogether(t *testing.T) {
	s, errPath := startFileSession(t, []string{"--snapshot", "2s", "--after", "1s", "--snapshot-bytes", "64M"},
		[]string{"--duration", "20s", "--pause", "3s:600ms", "--restart-after", "9s", "--outage", "1s"})
	s.waitTruth(t, 230*36/10)     // 4.2 s in (230 samples a second, none in the stall)
	s.rec.signal(syscall.SIGUSR1) // a window around the stall
	s.waitSnapshots(t, 1)
	s.waitTruth(t, 230*124/10)    // 14 s in, after the restart
	s.rec.signal(syscall.SIGUSR1) // a window after the restart, with no fault in it
	files := s.waitSnapshots(t, 2)
	if code := s.sim.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sim exit %d", code)
	}
	if code := s.stopRec(t); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, readErr(t, errPath))
	}
	published := readTruth(t, filepath.Join(s.dir, "truth.jsonl"))
	var epoch int64
	for _, p := range published {
		if p.Channel == "vr/"+s.robot+"/state" {
			epoch = p.TNs
			break
		}
	}
	out, err := exec.Command(vrlogBin, "analyze", files[0], files[1], "--json", "--max-restarts", "0", "--max-skips", "0").Output()
	if err != nil {
		t.Fatalf("analyze of the snapshots fails its gates: %v\n%s", err, out)
	}
	var rep struct {
		EpochNs  int64 `json:"epoch_ns"`
		Channels []struct {
			Name         string            `json:"name"`
			Skipped      uint64            `json:"skipped"`
			RestartCount uint64            `json:"restart_count"`
			Outages      []json.RawMessage `json:"outages"`
		} `json:"channels"`
		NotCaptured []struct {
			GapS float64 `json:"gap_s"`
		} `json:"not_captured"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Channels {
		want := 0
		if c.Name == "vr/"+s.robot+"/state" || c.Name == "vr/"+s.robot+"/camera/front" {
			want = 1 // the stall, inside the first window
		}
		if strings.HasPrefix(c.Name, "vr/") && (c.Skipped != 0 || c.RestartCount != 0 || len(c.Outages) != want) {
			t.Fatalf("%s: %d skipped, %d restarts, %d outages: want the stall only\n%s", c.Name, c.Skipped, c.RestartCount, len(c.Outages), out)
		}
	}
	if len(rep.NotCaptured) != 1 || rep.EpochNs != epoch {
		t.Fatalf("not captured %+v, epoch %d (the recording's: %d)", rep.NotCaptured, rep.EpochNs, epoch)
	}
	info, _ := exec.Command(vrlogBin, "info", files[1], "--json").Output()
	var in struct {
		EpochNs int64 `json:"epoch_ns"`
	}
	if json.Unmarshal(info, &in); in.EpochNs != epoch {
		t.Fatalf("info of the second snapshot: epoch %d, want the recording's %d", in.EpochNs, epoch)
	}
	r, err := logfmt.Open(files[1], logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if ns, ok, _ := logfmt.SnapshotEpoch(r.Header().Metadata); !ok || ns != epoch {
		t.Fatalf("the second snapshot stores epoch %d (%v), want %d", ns, ok, epoch)
	}
}

// --after at the data rate needs ten times --snapshot-bytes: it is held
// in full all the same, the journal taking each chunk as it comes (1):
// the window ends 5 s after the trigger with nothing missing, its part
// before the trigger is what the bound held, said, and the buffer never
// held more than the bound; the first fill said what the bound holds.
func TestSnapshotAfterHeldPastBound(t *testing.T) {
	s, errPath := startFileSession(t, []string{"--snapshot", "2s", "--after", "5s", "--snapshot-bytes", "16M"},
		[]string{"--frame-hz", "150", "--duration", "14s"}) // 35 MB/s: 16M holds about 0.5 s, --after 5s is 173 MB
	s.waitTruth(t, 200*5)
	s.rec.signal(syscall.SIGUSR1)
	files := s.finishOne(t, errPath)
	errs := readErr(t, errPath)
	recs, snap := readSnapshot(t, files[0])
	first, last := int64(math.MaxInt64), int64(0)
	for _, rs := range recs {
		for _, r := range rs {
			first, last = min(first, r.mono), max(last, r.mono)
		}
	}
	t0 := snap.Triggers[0].MonoNs
	if first < snap.FromMonoNs || last > snap.ToMonoNs || !endsAt(snap, t0+5e9) {
		t.Fatalf("window %d..%d, records %d..%d (%.3f s after the trigger): want all 5 s after it", snap.FromMonoNs, snap.ToMonoNs, first, last, float64(last-t0)/1e9)
	}
	published := readTruth(t, filepath.Join(s.dir, "truth.jsonl"))
	checkCovers(t, files[0], recs, snap, published, "vr/"+s.robot+"/state", 5*time.Millisecond)
	checkCovers(t, files[0], recs, snap, published, "vr/"+s.robot+"/camera/front", 7*time.Millisecond)
	if !strings.Contains(snap.Short, "the memory bound (16 MiB) held only ") || strings.Contains(snap.Short, "after the trigger") || strings.Contains(snap.Short, "dropped") {
		t.Fatalf("short %q: want the bound's part before the trigger said, nothing of the after part", snap.Short)
	}
	if !strings.Contains(errs, "record: WARNING: snapshot buffer: 16 MiB holds about ") || !strings.Contains(errs, "a window of 2s before the trigger needs about ") ||
		!strings.Contains(errs, "and all of the 5s after it, written to disk as it comes") {
		t.Fatalf("record's stderr:\n%s", errs)
	}
	ms := regexp.MustCompile(`snapshot buffer: .* of 16 MiB \(peak ([0-9.]+) MiB\)`).FindAllStringSubmatch(errs, -1)
	if ms == nil {
		t.Fatalf("no buffer status in the recorder's output:\n%s", errs)
	}
	if peak, _ := strconv.ParseFloat(ms[len(ms)-1][1], 64); peak > 16 {
		t.Fatalf("buffer peak %.1f MiB, the bound is 16 MiB", peak)
	}
	t.Logf("%.3f s before, %.3f s after the trigger; %s; %s", float64(t0-first)/1e9, float64(last-t0)/1e9, snap.Short, ms[len(ms)-1][0])
}

// A recorder stopped (SIGSTOP) 1.5 s into a window's 3 s after its
// trigger and continued 2 s later, past the window's end: what the
// simulator sent meanwhile arrives at once, stamped then. The window waits
// for it: every state captured in the 3 s after the trigger is in the
// snapshot, and the frames iceoryx2 replaced in the recorder's buffer
// meanwhile are counted as recorder drops in it, as many as its frames'
// seq gaps.
func TestSnapshotRecorderStopped(t *testing.T) {
	s, errPath := startFileSession(t, []string{"--snapshot", "5s", "--after", "3s", "--snapshot-bytes", "64M"}, []string{"--duration", "16s", "--frame-ring", "8"})
	s.waitTruth(t, 200*6)
	s.rec.signal(syscall.SIGUSR1)
	time.Sleep(1500 * time.Millisecond)
	s.rec.signal(syscall.SIGSTOP)
	time.Sleep(2 * time.Second)
	s.rec.signal(syscall.SIGCONT)
	files := s.finishOne(t, errPath)
	recs, snap := readSnapshot(t, files[0])
	published := readTruth(t, filepath.Join(s.dir, "truth.jsonl"))
	state, cam := "vr/"+s.robot+"/state", "vr/"+s.robot+"/camera/front"
	from, to := snap.Triggers[0].WallNs, snap.Triggers[0].WallNs+3e9-int64(10*time.Millisecond) // capture and receive clocks: one host
	count := func(ch string, tns []int64) (n int) {
		for _, v := range tns {
			if v >= from && v < to {
				n++
			}
		}
		return n
	}
	var pubStates, gotStates []int64
	for _, p := range published {
		if p.Channel == state {
			pubStates = append(pubStates, p.TNs)
		}
	}
	for _, r := range recs[state] {
		gotStates = append(gotStates, r.TNs)
	}
	var gaps uint64
	for i := 1; i < len(recs[cam]); i++ {
		gaps += recs[cam][i].Seq - recs[cam][i-1].Seq - 1
	}
	lr, err := logfmt.Open(files[0], logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	var drops uint64
	for _, c := range lr.Channels() {
		if c.Name == cam {
			drops = lr.StatsOf(c.ID).Drops
		}
	}
	t.Logf("states in the 3 s after the trigger: %d of %d; frames' seq gaps %d, recorder drops %d; held open %q; short %q",
		count(state, gotStates), count(state, pubStates), gaps, drops, snap.HeldOpen, snap.Short)
	if count(state, gotStates) != count(state, pubStates) || snap.HeldOpen == "" {
		t.Fatalf("states captured in the 3 s after the trigger: %d of %d in the snapshot, held open %q: want all, held open",
			count(state, gotStates), count(state, pubStates), snap.HeldOpen)
	}
	if gaps == 0 || drops != gaps {
		t.Fatalf("frames: %d missing by seq in the snapshot, %d counted as recorder drops: want the stop's losses, all counted", gaps, drops)
	}
}
