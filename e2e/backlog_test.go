package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
)

// backlogSim is a recording whose writer is slower than the stream: 1080p
// rgb8 frames at 30 Hz (190 MB/s, from the simulator's frame ring) stored
// at zstd-4, which two cores compress at a few frames a second, with the
// default 512 MiB queue, so hundreds of MB of frames wait for the writer;
// and 200 Hz states.
func backlogSim(t *testing.T, r string, recArgs []string, simFor string) (rec, sim *proc, logPath, truthPath string) {
	return recordSim(t, r, append([]string{"--compression", "zstd-4", "--probe-interval", "0"}, recArgs...),
		[]string{"--duration", simFor, "--state-hz", "200", "--frame-hz", "30", "--width", "1920", "--height", "1080",
			"--frame-ring", "8", "--frame-content", "gradient"})
}

// channelLog is what a log holds of one channel, in the reader's order.
type channelLog struct {
	seqs    []uint64
	drops   uint64
	indexed bool
}

// readChannel reads a channel's record metadata (not its payloads) and
// checks that the reader returns it in receive order.
func readChannel(t *testing.T, path, name string) channelLog {
	t.Helper()
	lr, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	out := channelLog{indexed: lr.Indexed()}
	var id uint16
	for _, c := range lr.Channels() {
		if c.Name == name {
			id = c.ID
		}
	}
	if id == 0 {
		return out
	}
	for _, s := range lr.Stats() {
		if s.Channel == id {
			out.drops = s.Drops
		}
	}
	it := lr.Records(logfmt.Filter{Channels: []uint16{id}, MetaOnly: true})
	last := int64(-1 << 63)
	for it.Next() {
		x := it.Record()
		if x.RecvMonoNs < last {
			t.Fatalf("%s: a record received at %d read after one received at %d", name, x.RecvMonoNs, last)
		}
		if n := len(out.seqs); n > 0 && x.Seq <= out.seqs[n-1] {
			t.Fatalf("%s: seq %d after %d: out of order or duplicated", name, x.Seq, out.seqs[n-1])
		}
		last = x.RecvMonoNs
		out.seqs = append(out.seqs, x.Seq)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// States do not queue behind a backlog of frames: after a kill -9 under
// back-pressure, recover keeps every state published up to about a flush
// interval before the kill (in one queue with the frames, states reached
// the log seconds late, and a kill -9 lost those seconds: 1 of 144 states
// survived).
func TestKill9UnderBackPressureKeepsStates(t *testing.T) {
	r := robot(t)
	rec, sim, logPath, truthPath := backlogSim(t, r, nil, "30s")
	waitFor(t, 30*time.Second, "frames in the log", func() bool { return fileSize(logPath) > 4<<20 })
	time.Sleep(6 * time.Second) // the queue fills within a second or two: a backlog of seconds
	rec.signal(syscall.SIGKILL)
	killedAt := time.Now()
	rec.wait(t, 10*time.Second)
	sim.signal(syscall.SIGINT)
	sim.wait(t, 30*time.Second)

	fixed := filepath.Join(t.TempDir(), "fixed.vrlog")
	if out, err := runVrlog("recover", logPath, "-o", fixed); err != nil {
		t.Fatalf("recover: %v\n%s", err, out)
	}
	state := "vr/" + r + "/state"
	got := readChannel(t, fixed, state)
	if len(got.seqs) == 0 {
		t.Fatal("no state recovered")
	}
	have := map[uint64]bool{}
	for _, s := range got.seqs {
		have[s] = true
	}
	// FlushInterval (1 s), plus the frames ahead of a state's chunk in the
	// log writer (its compression workers and chunks in flight), plus slack
	// for a loaded machine.
	const window = 2 * time.Second
	var before, lost int
	var lostAge []time.Duration
	for _, p := range readTruth(t, truthPath) {
		if p.Channel != state || p.Seq < got.seqs[0] {
			continue // states published before the subscription reached the recorder
		}
		age := killedAt.Sub(time.Unix(0, p.TNs))
		if age < 0 {
			continue
		}
		if !have[p.Seq] {
			lostAge = append(lostAge, age)
		}
		if age > window {
			before++
			if !have[p.Seq] {
				lost++
			}
		}
	}
	oldest := time.Duration(0)
	for _, a := range lostAge {
		oldest = max(oldest, a)
	}
	t.Logf("%d states recovered; %d lost in all, the oldest published %s before kill -9; of the %d published more than %s before it, %d lost",
		len(got.seqs), len(lostAge), oldest.Round(time.Millisecond), before, window, lost)
	if lost > 0 {
		t.Fatalf("%d of %d states published more than %s before kill -9 were lost (the oldest %s before): states waited behind the frames",
			lost, before, window, oldest.Round(time.Millisecond))
	}
	if out, err := runVrlog("analyze", fixed); err != nil {
		t.Fatalf("analyze of the recovered log: %v\n%s", err, out)
	}
}

// The end of a recording whose writer is far behind is bounded by
// --drain-timeout: what is still queued then is dropped, counted exactly
// as recorder drops (published - recorded = drops, on every channel), the
// log is finished (indexed), and record says so and exits 0.
func TestDrainTimeoutBoundsTheEnd(t *testing.T) {
	r := robot(t)
	rec, sim, logPath, truthPath := backlogSim(t, r, []string{"--drain-timeout", "1s"}, "5s")
	if code := sim.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sim exit %d:\n%s", code, sim.stderr)
	}
	time.Sleep(300 * time.Millisecond) // the last samples arrive
	rec.signal(syscall.SIGINT)
	stopped := time.Now()
	code := rec.wait(t, 60*time.Second)
	took := time.Since(stopped)
	if code != 0 {
		t.Fatalf("record exit %d after SIGINT:\n%s", code, rec.stderr)
	}
	if !strings.Contains(rec.stderr.String(), "--drain-timeout 1s reached with") {
		t.Fatalf("record did not say that it cut the drain off:\n%s", rec.stderr)
	}
	// 1 s of drain, then the chunks in flight, the footer and the sync.
	if took > 15*time.Second {
		t.Fatalf("record took %s to finish after SIGINT with --drain-timeout 1s", took)
	}
	published := readTruth(t, truthPath)
	var cut uint64
	for _, ch := range []string{"vr/" + r + "/state", "vr/" + r + "/camera/front"} {
		got := readChannel(t, logPath, ch)
		if !got.indexed {
			t.Fatal("the log is not finished (no index)")
		}
		if len(got.seqs) == 0 {
			t.Fatalf("%s: nothing recorded", ch)
		}
		pub := 0
		for _, p := range published {
			if p.Channel == ch && p.Seq >= got.seqs[0] { // from the first that reached the recorder
				pub++
			}
		}
		lost := uint64(pub - len(got.seqs))
		t.Logf("%s: %d published, %d recorded, %d lost, %d recorder drops", ch, pub, len(got.seqs), lost, got.drops)
		if lost != got.drops {
			t.Fatalf("%s: %d lost, %d counted as recorder drops", ch, lost, got.drops)
		}
		cut += got.drops
	}
	t.Logf("record finished %s after SIGINT", took.Round(time.Millisecond))
	if cut == 0 {
		t.Fatal("nothing was dropped: the writer kept up, the cut-off was not tested")
	}
}

// fileSize is a file's size (0 when it cannot be read).
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
