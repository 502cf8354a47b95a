package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
)

// snapSession starts a snapshot recorder (-o DIR/rec.vrlog, so --name
// rec) listening on a loopback port, and the simulator connecting to it,
// with --log DIR/truth.jsonl unless simArgs give another --log.
type snapSession struct {
	dir, port, robot string
	rec, sim         *proc
}

func startSnapSession(t *testing.T, recArgs, simArgs []string) *snapSession {
	t.Helper()
	s := &snapSession{dir: t.TempDir(), port: strconv.Itoa(freePort(t)), robot: robot(t)}
	s.rec = start(t, vrlogBin, append([]string{"record", "--listen", "tcp/127.0.0.1:" + s.port, "--no-multicast",
		"-o", filepath.Join(s.dir, "rec.vrlog"), "-k", "vr/" + s.robot + "/**", "-s", "vr/" + s.robot + "/camera/front",
		"--time-service", "vr/" + s.robot + "/time"}, recArgs...)...)
	args := []string{"sim", "--connect", "tcp/127.0.0.1:" + s.port, "--no-multicast", "-q", "--robot", s.robot,
		"--width", "160", "--height", "120", "--start-delay", "1500ms"}
	if !slices.Contains(simArgs, "--log") {
		args = append(args, "--log", filepath.Join(s.dir, "truth.jsonl"))
	}
	s.sim = start(t, vrlogBin, append(args, simArgs...)...)
	return s
}

// snapshots lists the snapshot logs written so far (complete ones: the
// final names).
func (s *snapSession) snapshots(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.dir, "rec_*.vrlog"))
	return files
}

// waitSnapshots waits until n snapshots are written. A recorder that
// did not write them in time is stopped with SIGQUIT (its goroutines'
// stacks), and what it said is shown with the directory.
func (s *snapSession) waitSnapshots(t *testing.T, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); len(s.snapshots(t)) < n; time.Sleep(50 * time.Millisecond) {
		if time.Now().Before(deadline) {
			continue
		}
		var ls []string
		if es, err := os.ReadDir(s.dir); err == nil {
			for _, e := range es {
				fi, _ := e.Info()
				ls = append(ls, fmt.Sprintf("%s %d", e.Name(), fi.Size()))
			}
		}
		s.rec.signal(syscall.SIGQUIT)
		select {
		case <-s.rec.done:
		case <-time.After(10 * time.Second):
		}
		said := "(in its file)"
		if s.rec.stderr != nil {
			said = s.rec.stderr.String()
		}
		t.Fatalf("timed out waiting for %d snapshot(s) in %s: %v; the recorder said:\n%s", n, s.dir, ls, said)
	}
	return s.snapshots(t)
}

// waitTruth waits until the simulator published n samples.
func (s *snapSession) waitTruth(t *testing.T, n int) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("%d published samples", n), func() bool {
		b, _ := os.ReadFile(filepath.Join(s.dir, "truth.jsonl"))
		return strings.Count(string(b), "\n") >= n
	})
}

// finish stops the recorder (SIGINT) once the simulator is done, and
// checks both ended well.
func (s *snapSession) finish(t *testing.T) {
	t.Helper()
	if code := s.sim.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sim exit %d:\n%s", code, s.sim.stderr)
	}
	s.rec.signal(syscall.SIGINT)
	if code := s.rec.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, s.rec.stderr)
	}
}

// snapRecord is one record of a snapshot.
type snapRecord struct {
	mono int64
	truth
}

// readSnapshot verifies a snapshot like any tool's output (a full verify,
// every record read back) and returns its records by channel and what it
// says of itself.
func readSnapshot(t *testing.T, path string) (map[string][]snapRecord, *logfmt.Snapshot) {
	t.Helper()
	if _, err := logfmt.ReadBack(path); err != nil {
		t.Fatalf("snapshot %s does not verify: %v", path, err)
	}
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	snap, err := logfmt.ParseSnapshot(r.Header().Metadata)
	if err != nil || snap == nil {
		t.Fatalf("%s: snapshot metadata %v, %v", path, snap, err)
	}
	names := map[uint16]string{}
	for _, c := range r.Channels() {
		names[c.ID] = c.Name
	}
	out := map[string][]snapRecord{}
	it := r.Records(logfmt.Filter{})
	for it.Next() {
		rec := it.Record()
		if !rec.HasStamp {
			continue // clock-sync probes
		}
		out[names[rec.Channel]] = append(out[names[rec.Channel]], snapRecord{rec.RecvMonoNs, truth{Seq: rec.Seq, TNs: rec.CaptureNs,
			HeaderSHA256: hexsum(rec.Header), PayloadSHA256: hexsum(rec.Payload)}})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out, snap
}

// edgeSlack bounds what the transport and a loaded machine add between a
// sample's capture stamp and its receive stamp.
const edgeSlack = 300 * time.Millisecond

// checkCovers checks that a snapshot covers exactly its window on channel
// ch: every record was received inside it, the records are a run of what
// the simulator published with nothing missing (byte-exact), and the run
// reaches both ends of the window: the samples just outside it were
// captured before its start, and after its end less the transport's slack.
func checkCovers(t *testing.T, path string, recs map[string][]snapRecord, snap *logfmt.Snapshot, published []truth, ch string, period time.Duration) {
	t.Helper()
	got := recs[ch]
	if len(got) == 0 {
		t.Fatalf("%s: no records of %s", path, ch)
	}
	for _, r := range got {
		if r.mono < snap.FromMonoNs || r.mono > snap.ToMonoNs {
			t.Fatalf("%s: %s seq %d received at %d, outside the window [%d, %d]", path, ch, r.Seq, r.mono, snap.FromMonoNs, snap.ToMonoNs)
		}
	}
	var pub []truth
	for _, p := range published {
		if p.Channel == ch {
			p.Channel = ""
			pub = append(pub, p)
		}
	}
	first := -1
	for i, p := range pub {
		if p == got[0].truth {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatalf("%s: %s's first record (seq %d) was never published", path, ch, got[0].Seq)
	}
	for i, r := range got {
		if first+i >= len(pub) || pub[first+i] != r.truth {
			t.Fatalf("%s: %s record %d (seq %d) is not the next published sample: a gap", path, ch, i, r.Seq)
		}
	}
	from, to := snap.FromWallNs, snap.ToWallNs
	if first > 0 && pub[first-1].TNs >= from {
		t.Fatalf("%s: %s seq %d, captured after the window's start, is missing", path, ch, pub[first-1].Seq)
	}
	if got[0].TNs > from+int64(period+edgeSlack) {
		t.Fatalf("%s: %s starts %.3f s into the window", path, ch, float64(got[0].TNs-from)/1e9)
	}
	last := first + len(got)
	if last < len(pub) && pub[last].TNs < to-int64(edgeSlack) {
		t.Fatalf("%s: %s seq %d, captured %.3f s before the window's end, is missing", path, ch, pub[last].Seq, float64(to-pub[last].TNs)/1e9)
	}
	if last < len(pub) && got[len(got)-1].TNs < to-int64(period+edgeSlack) {
		t.Fatalf("%s: %s ends %.3f s before the window does", path, ch, float64(to-got[len(got)-1].TNs)/1e9)
	}
}

// nearStart and nearEnd report whether a snapshot's window, its first and
// last records, starts (ends) at the asked start (end) within edgeSlack.
func nearStart(got, want int64) bool { return got >= want && got-want <= int64(edgeSlack) }
func nearEnd(got, want int64) bool   { return got <= want && want-got <= int64(edgeSlack) }

// endsAt reports whether snap's window ends at want (nearEnd), or past it
// by at most the recorder's wait for a stream received late, when its
// metadata says it was held open for one (a loaded machine's 1080p
// frames).
func endsAt(snap *logfmt.Snapshot, want int64) bool {
	if snap.HeldOpen != "" {
		return snap.ToMonoNs > want-int64(edgeSlack) && snap.ToMonoNs <= want+int64(3300*time.Millisecond)
	}
	return nearEnd(snap.ToMonoNs, want)
}

// checkWindow checks a snapshot's window against its first trigger.
func checkWindow(t *testing.T, path string, snap *logfmt.Snapshot, before, after time.Duration, triggers int) {
	t.Helper()
	t0 := snap.Triggers[0].MonoNs
	tl := snap.Triggers[len(snap.Triggers)-1].MonoNs
	if !nearStart(snap.FromMonoNs, t0-before.Nanoseconds()) || !endsAt(snap, tl+after.Nanoseconds()) || snap.Short != "" || snap.TriggerCount != triggers {
		t.Fatalf("%s: window %+v; want %s before the first of %d triggers and %s after the last", path, snap, before, triggers, after)
	}
}

// A snapshot by SIGUSR1, then one by a zenoh query (vrlog snapshot)
// extended by a second query while its window is open: each log holds
// exactly the requested window around its triggers, with nothing
// missing, and each querier is told the file.
func TestSnapshotBySignalAndQuery(t *testing.T) {
	s := startSnapSession(t, []string{"--snapshot", "2s", "--after", "1s"}, []string{"--duration", "12s", "--state-hz", "100"})
	s.waitTruth(t, 400)
	s.rec.signal(syscall.SIGUSR1)
	first := s.waitSnapshots(t, 1)
	if !strings.HasSuffix(first[0], "_signal-sigusr1.vrlog") {
		t.Fatalf("snapshot named %s", first[0])
	}
	time.Sleep(time.Second)
	type answer struct {
		r   result
		err error
	}
	answers := make(chan answer, 2)
	query := func(note string) {
		out, err := exec.Command(vrlogBin, "snapshot", "rec", "--note", note, "--connect", "tcp/127.0.0.1:"+s.port, "--no-multicast").CombinedOutput()
		answers <- answer{result{stdout: string(out)}, err}
	}
	go query("first")
	time.Sleep(400 * time.Millisecond)
	go query("second")
	var replies []string
	for i := 0; i < 2; i++ {
		a := <-answers
		if a.err != nil {
			t.Fatalf("vrlog snapshot: %v\n%s", a.err, a.r.stdout)
		}
		replies = append(replies, strings.TrimSpace(a.r.stdout))
	}
	s.finish(t)
	files := s.snapshots(t)
	if len(files) != 2 {
		t.Fatalf("snapshots %v, want 2 (the second query extends the first's window)", files)
	}
	abs, _ := filepath.Abs(files[1])
	for _, r := range replies {
		if r != "vrlog/record/rec/snapshot: wrote "+abs {
			t.Fatalf("vrlog snapshot printed %q, want the file %s", r, abs)
		}
	}
	published := readTruth(t, filepath.Join(s.dir, "truth.jsonl"))
	for i, f := range files {
		recs, snap := readSnapshot(t, f)
		checkWindow(t, f, snap, 2*time.Second, time.Second, i+1)
		checkCovers(t, f, recs, snap, published, "vr/"+s.robot+"/state", 10*time.Millisecond)
		checkCovers(t, f, recs, snap, published, "vr/"+s.robot+"/camera/front", 33*time.Millisecond)
		t.Logf("%s: %d states, %d frames, triggered by %v", filepath.Base(f), len(recs["vr/"+s.robot+"/state"]), len(recs["vr/"+s.robot+"/camera/front"]), snap.Triggers)
	}
	_, snap := readSnapshot(t, files[1])
	if snap.Triggers[0].Cause != "zenoh query on vrlog/record/rec/snapshot: first" || snap.Triggers[1].Cause != "zenoh query on vrlog/record/rec/snapshot: second" {
		t.Fatalf("causes %+v", snap.Triggers)
	}
	rep := analyzeJSON(t, files[1])
	sn := rep["snapshots"].([]any)[0].(map[string]any)
	if sn["cause"] != snap.Triggers[0].Cause || sn["trigger_count"].(float64) != 2 {
		t.Fatalf("analyze's snapshot %v", sn)
	}
	// The two windows overlap (the second reaches 2 s back, the first
	// ended 1 s after its trigger): analyzed together, the records they
	// share count once. Read twice, they were seq going back: restarts.
	union := map[string]map[uint64]bool{}
	for _, f := range files {
		recs, _ := readSnapshot(t, f)
		for ch, rs := range recs {
			if union[ch] == nil {
				union[ch] = map[uint64]bool{}
			}
			for _, r := range rs {
				union[ch][r.Seq] = true
			}
		}
	}
	both := analyzeJSON(t, files...)
	for _, ch := range []string{"vr/" + s.robot + "/state", "vr/" + s.robot + "/camera/front"} {
		c := channelReport(t, both, ch)
		if c["restart_count"].(float64) != 0 || int(c["count"].(float64)) != len(union[ch]) {
			t.Errorf("%s over both snapshots: %v restarts, %v records; want 0 and the %d distinct ones", ch, c["restart_count"], c["count"], len(union[ch]))
		}
	}
	if notes := fmt.Sprint(both["notes"]); !strings.Contains(notes, "overlaps") {
		t.Errorf("no note of the overlap: %s", notes)
	}
}

// Timing faults trigger snapshots, watched live with analyze's checks:
// the simulator's restart (--restart-after) and its pause (--pause). Each
// log holds the window around the sample that showed the fault.
func TestSnapshotByFaults(t *testing.T) {
	s := startSnapSession(t, []string{"--snapshot", "2s", "--after", "500ms", "--snapshot-on", "max-restarts=0", "--snapshot-on", "max-outage=vr/*/state=300ms"},
		[]string{"--duration", "12s", "--state-hz", "50", "--restart-after", "3s", "--outage", "1s", "--pause", "7s:600ms"})
	s.finish(t)
	files := s.snapshots(t)
	if len(files) != 2 {
		t.Fatalf("snapshots %v, want 2 (the restart, the pause)\n%s", files, s.rec.stderr)
	}
	state := "vr/" + s.robot + "/state"
	published := readTruth(t, filepath.Join(s.dir, "truth.jsonl"))
	for i, f := range files {
		recs, snap := readSnapshot(t, f)
		t0 := snap.Triggers[0]
		checkWindow(t, f, snap, 2*time.Second, 500*time.Millisecond, snap.TriggerCount)
		checkCovers(t, f, recs, snap, published, state, 20*time.Millisecond)
		checkCovers(t, f, recs, snap, published, "vr/"+s.robot+"/camera/front", 33*time.Millisecond)
		// The trigger is the sample after the gap: its capture stamp is a
		// published sample's, the one before it a gap earlier; or the
		// silence itself, once it passed the limit (max-outage on a stream
		// that stopped), before that sample came.
		for _, tr := range snap.Triggers {
			if tr.CaptureNs != 0 {
				t0 = tr
				break
			}
		}
		if t0.CaptureNs == 0 && strings.HasSuffix(t0.Cause, ": its samples stopped") {
			t.Logf("%s: triggered by the silence: %v", filepath.Base(f), causes(snap))
			continue
		}
		// The gap: before the sample at the trigger's capture stamp (a
		// restart), or around it (an outage that ended is stamped where
		// its silence crossed the limit, 300 ms after the sample before).
		var gap time.Duration
		for j, p := range published {
			if p.Channel == state && p.TNs >= t0.CaptureNs && j > 0 {
				for k := j - 1; k >= 0; k-- {
					if published[k].Channel == p.Channel {
						gap = time.Duration(p.TNs - published[k].TNs)
						if strings.HasPrefix(t0.Cause, "max-outage") && t0.CaptureNs != published[k].TNs+int64(300*time.Millisecond) {
							t.Fatalf("%s: the outage's trigger at capture %d, want the sample before the gap + 300 ms (%d)", f, t0.CaptureNs, published[k].TNs+int64(300*time.Millisecond))
						}
						break
					}
				}
				break
			}
		}
		switch i {
		case 0: // the restart: seq from 0 after a 1 s outage
			if !regexp.MustCompile(`_max-(restarts|outage)_vr-.*\.vrlog$`).MatchString(f) || gap < 900*time.Millisecond ||
				!strings.Contains(strings.Join(causes(snap), "|"), "max-restarts "+state+": 1 (limit ≤ 0): off by 1") {
				t.Fatalf("%s: the restart's snapshot: gap %s, triggers %v", f, gap, causes(snap))
			}
		case 1: // the pause: seq goes on after 600 ms
			if !strings.HasSuffix(f, "_max-outage_vr-"+s.robot+"-state.vrlog") || gap < 550*time.Millisecond || gap > 900*time.Millisecond ||
				!strings.HasPrefix(t0.Cause, "max-outage "+state+": ") {
				t.Fatalf("%s: the pause's snapshot: gap %s, triggers %v", f, gap, causes(snap))
			}
		}
		t.Logf("%s: triggered by %v (gap %s)", filepath.Base(f), causes(snap), gap)
	}
	out, _ := exec.Command(vrlogBin, "analyze", files[1]).CombinedOutput()
	if !strings.Contains(string(out), "snapshot "+files[1]+": triggered by max-outage "+state) {
		t.Fatalf("analyze of the pause's snapshot does not show the trigger:\n%s", out)
	}
}

func causes(s *logfmt.Snapshot) []string {
	var out []string
	for _, t := range s.Triggers {
		out = append(out, t.Cause)
	}
	return out
}

// At 1 kHz states and 1080p30 frames (186 MB/s, which the simulator's
// frames do not let zstd shrink), the snapshot buffer stays within
// --snapshot-bytes, and the process within it plus the Go heap's soft
// limit and the native library's memory; the snapshot keeps the second
// after the trigger (through its journal, on disk) and the seconds before
// it that the bound holds, and says so.
func TestSnapshotMemoryBound(t *testing.T) {
	const nativeAllowance = 256 << 20 // zenoh's and iceoryx2's own memory, outside Go's heap
	const bound = 256 << 20
	s := startSnapSession(t, []string{"--snapshot", "10s", "--snapshot-bytes", "256M", "--after", "1s"},
		[]string{"--duration", "14s", "--state-hz", "1000", "--frame-hz", "30", "--width", "1920", "--height", "1080", "--log", ""}) // no truth: hashing 186 MB/s of frames costs a core
	var peak int64 // VmHWM, kB
	hwm := func() {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.rec.cmd.Process.Pid))
		if m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b); m != nil {
			peak, _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
	}
	time.Sleep(11 * time.Second)
	s.rec.signal(syscall.SIGUSR1)
	files := s.waitSnapshots(t, 1)
	hwm()
	s.finish(t)
	recs, snap := readSnapshot(t, files[0])
	st, _ := os.Stat(files[0])
	ms := regexp.MustCompile(`snapshot buffer: .* of 256 MiB \(peak ([0-9.]+) MiB\)`).FindAllStringSubmatch(s.rec.stderr.String(), -1)
	if ms == nil {
		t.Fatalf("no buffer status in the recorder's output:\n%s", s.rec.stderr)
	}
	held, _ := strconv.ParseFloat(ms[len(ms)-1][1], 64) // the final status line
	frames := len(recs["vr/"+s.robot+"/camera/front"])
	t.Logf("buffer peak %.1f MiB of 256 MiB; process peak RSS %d MiB; snapshot %d MiB, %d states, %d frames, %.2f s: %s",
		held, peak>>10, st.Size()>>20, len(recs["vr/"+s.robot+"/state"]), frames, float64(snap.ToMonoNs-snap.FromMonoNs)/1e9, snap.Short)
	// The process: record holds the Go heap to --snapshot-bytes + 512 MiB
	// (a soft limit), and the native transport library adds its own.
	if held > 256 || peak<<10 > bound+512<<20+nativeAllowance {
		t.Fatalf("over the bound: buffer peak %.1f MiB, process peak RSS %d kB (bound 256 MiB + 512 MiB + %d MiB native)", held, peak, nativeAllowance>>20)
	}
	if frames < 20 || !strings.Contains(snap.Short, "the memory bound (256 MiB) held only ") || !endsAt(snap, snap.Triggers[0].MonoNs+int64(time.Second)) {
		t.Fatalf("the snapshot holds %d frames, %+v: want the second after the trigger and the seconds before it the bound holds", frames, snap)
	}
	var order []int64
	for _, r := range recs["vr/"+s.robot+"/state"] {
		order = append(order, int64(r.Seq))
	}
	for i := 1; i < len(order); i++ {
		if order[i] != order[i-1]+1 {
			t.Logf("states: seq %d → %d (published-side or recorder drops under this load)", order[i-1], order[i])
		}
	}
}

// kill -9 while a snapshot is being written loses that snapshot's
// unfinished tail only: the earlier snapshot is intact, nothing corrupt
// is under a final name, and the unfinished one (left under its
// temporary name) is recovered.
func TestSnapshotKill9(t *testing.T) {
	s := startSnapSession(t, []string{"--snapshot", "8s", "--compression", "vr/*/camera/*=none", "--snapshot-bytes", "1G"},
		[]string{"--duration", "60s", "--width", "640", "--height", "480", "--frame-hz", "30"}) // 27 MB/s of frames
	time.Sleep(11 * time.Second)
	s.rec.signal(syscall.SIGUSR1)
	first := s.waitSnapshots(t, 1)
	time.Sleep(500 * time.Millisecond)
	s.rec.signal(syscall.SIGUSR1)
	var tmp string
	waitFor(t, 30*time.Second, "the second snapshot's temporary file", func() bool {
		m, _ := filepath.Glob(filepath.Join(s.dir, ".rec_*.tmp-*"))
		if len(m) > 0 {
			tmp = m[0]
		}
		// Killed mid-write, not before its first chunk: a file killed
		// before its prelude holds nothing to recover (exit 2, correctly).
		st, err := os.Stat(tmp)
		return tmp != "" && (err != nil || st.Size() >= 64<<10)
	})
	s.rec.signal(syscall.SIGKILL)
	s.rec.wait(t, 10*time.Second)
	s.sim.cmd.Process.Signal(syscall.SIGINT)
	s.sim.wait(t, 30*time.Second)
	files := s.snapshots(t)
	for _, f := range files { // the first, and the second if its rename beat the kill
		if _, err := logfmt.ReadBack(f); err != nil {
			t.Fatalf("%s under its final name does not verify after kill -9: %v", f, err)
		}
	}
	if files[0] != first[0] {
		t.Fatalf("snapshots %v, first was %s", files, first[0])
	}
	if _, err := os.Stat(tmp); err == nil {
		fixed := filepath.Join(s.dir, "recovered.vrlog")
		out, err := exec.Command(vrlogBin, "recover", tmp, "-o", fixed).CombinedOutput()
		if err != nil {
			t.Fatalf("recover the unfinished snapshot: %v\n%s", err, out)
		}
		n, err := logfmt.ReadBack(fixed)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("killed mid-write: %d of %d snapshots complete; the unfinished one recovered: %d records (%s)", len(files), 2, n, strings.TrimSpace(string(out)))
	} else {
		t.Logf("the second snapshot was renamed into place before the kill: %v", files)
	}
}

// A publisher's frame skip over iceoryx2, whose gaps wait for their drain
// to say whether the subscriber buffer's safe overflow made them (the
// recorder's loss) before the live check judges them, still fires
// max-skips, stamped at the frame after the gap.
func TestSnapshotByFrameSkip(t *testing.T) {
	s := startSnapSession(t, []string{"--snapshot", "2s", "--after", "500ms", "--snapshot-on", "max-skips=vr/*/camera/front=0"},
		[]string{"--duration", "6s", "--state-hz", "50", "--drop-every", "40"})
	s.finish(t)
	files := s.snapshots(t)
	if len(files) == 0 {
		t.Fatalf("no snapshot: the frame skips fired nothing\n%s", s.rec.stderr)
	}
	published := readTruth(t, filepath.Join(s.dir, "truth.jsonl"))
	cam := "vr/" + s.robot + "/camera/front"
	_, snap := readSnapshot(t, files[0])
	t0 := snap.Triggers[0]
	if !strings.HasPrefix(t0.Cause, "max-skips "+cam+": 1 (limit ≤ 0)") {
		t.Fatalf("%s: triggers %v", files[0], causes(snap))
	}
	for j, p := range published {
		if p.Channel == cam && p.TNs == t0.CaptureNs {
			for k := j - 1; k >= 0; k-- {
				if published[k].Channel == cam {
					if p.Seq != published[k].Seq+2 {
						t.Fatalf("the trigger's frame, seq %d, follows seq %d: not the frame after the gap", p.Seq, published[k].Seq)
					}
					t.Logf("%s: %v at frame seq %d", filepath.Base(files[0]), causes(snap), p.Seq)
					return
				}
			}
		}
	}
	t.Fatalf("the trigger's capture stamp %d is no published frame's", t0.CaptureNs)
}
