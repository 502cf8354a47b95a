package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
)

// A recorder driven far past its limit (3 kHz of 320×240 frames from the
// simulator's frame ring, zstd, a 64 MiB queue) loses frames, and counts
// every one: the frames published from its first frame on (the
// simulator's truth log) minus those in the log are exactly its recorder
// drops, whether it dropped them for want of memory or iceoryx2's safe
// overflow replaced them in its subscriber buffer, and the frames held in
// that buffer when the recording stops are still written; what is in the
// log is byte-exact, in order, without duplicates. Its memory stays near
// the queue bound (before the bound, overload grew it by 1–2 GB).
func TestOverloadCountsEveryLoss(t *testing.T) {
	r := robot(t)
	const queue = 64 << 20
	rec, sim, logPath, truthPath := recordSim(t, r, []string{"--queue-bytes", "64M", "--compression", "zstd"},
		[]string{"--duration", "3s", "--state-hz", "100", "--frame-hz", "3000", "--width", "320", "--height", "240", "--frame-ring", "16"})
	if code := sim.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("sim exit %d:\n%s", code, sim.stderr)
	}
	time.Sleep(300 * time.Millisecond)
	peak := vmHWM(rec.cmd.Process.Pid) // the high-water mark of the overload
	rec.signal(syscall.SIGINT)
	if code := rec.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("record exit %d after SIGINT:\n%s", code, rec.stderr)
	}
	published := readTruth(t, truthPath)
	recs, lr := readLog(t, logPath)
	cam := "vr/" + r + "/camera/front"
	pub := map[uint64]string{} // seq → payload digest
	for _, p := range published {
		if p.Channel == cam {
			pub[p.Seq] = p.HeaderSHA256 + p.PayloadSHA256
		}
	}
	var got uint64
	last := int64(-1)
	for _, x := range recs {
		if x.channel != cam {
			continue
		}
		if want, ok := pub[x.Seq]; !ok || want != x.HeaderSHA256+x.PayloadSHA256 {
			t.Fatalf("frame seq %d in the log: not published, or not byte-exact", x.Seq)
		}
		if int64(x.Seq) <= last {
			t.Fatalf("frame seq %d after %d: out of order or duplicated", x.Seq, last)
		}
		last, got = int64(x.Seq), got+1
	}
	// Frames published before the recorder's subscriber was connected
	// (iceoryx2 connects publishers to a new subscriber lazily, and the
	// recorder discovers services by polling) never reached it: the
	// recording starts at its first frame.
	var first uint64
	for _, x := range recs {
		if x.channel == cam {
			first = x.Seq
			break
		}
	}
	for q := range pub {
		if q < first {
			delete(pub, q)
		}
	}
	var drops uint64
	for _, c := range lr.Channels() {
		if c.Name == cam {
			for _, s := range lr.Stats() {
				if s.Channel == c.ID {
					drops = s.Drops
				}
			}
		}
	}
	lost := uint64(len(pub)) - got
	t.Logf("%d frames published, %d recorded, %d lost, %d recorder drops; recorder peak RSS %d MiB (queue %d MiB)",
		len(pub), got, lost, drops, peak>>20, queue>>20)
	if lost == 0 {
		t.Fatalf("the recorder kept up with %d frames/s: no overload, nothing tested", len(pub)/3)
	}
	if drops != lost {
		t.Fatalf("%d frames lost, %d counted as recorder drops: the accounting is off by %d", lost, drops, int64(lost)-int64(drops))
	}
	// The queue, the log writer's chunks in flight, the transports' own
	// memory and the Go runtime: well under the queue plus 320 MiB.
	if peak > queue+320<<20 {
		t.Fatalf("recorder peak RSS %d MiB with a %d MiB queue", peak>>20, queue>>20)
	}
}

// vmHWM is a process's peak resident set in bytes (0 when unreadable).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// The recorder's own losses are no fault of the publisher: a recorder far
// past its limit (as above) with --snapshot-on max-skips=0, watching a
// simulator that skips nothing, fires no trigger, although it drops
// frames; the one snapshot, taken on SIGUSR1, counts them as the
// recorder's drops.
func TestOverloadFiresNoLiveTrigger(t *testing.T) {
	s, errPath := startFileSession(t, []string{"--snapshot", "20s", "--after", "500ms", "--snapshot-bytes", "512M", "--queue-bytes", "64M",
		"--compression", "zstd", "--snapshot-on", "max-skips=0"},
		[]string{"--duration", "3s", "--state-hz", "100", "--frame-hz", "3000", "--frame-ring", "16"})
	if code := s.sim.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("sim exit %d", code)
	}
	time.Sleep(500 * time.Millisecond)
	s.rec.signal(syscall.SIGUSR1)
	s.waitSnapshots(t, 1)
	if code := s.stopRec(t); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, readErr(t, errPath))
	}
	files := s.snapshots(t)
	if len(files) != 1 {
		t.Fatalf("snapshots %v, want the one of SIGUSR1:\n%s", files, readErr(t, errPath))
	}
	_, snap := readSnapshot(t, files[0])
	lr, err := logfmt.Open(files[0], logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	var drops uint64
	for _, st := range lr.Stats() {
		drops += st.Drops
	}
	if drops == 0 {
		t.Fatalf("the recorder kept up with 3 kHz of frames: no loss, nothing tested\n%s", readErr(t, errPath))
	}
	for _, tr := range snap.Triggers {
		if tr.Cause != "signal SIGUSR1" {
			t.Fatalf("triggers %+v: the recorder's %d drops fired %q", snap.Triggers, drops, tr.Cause)
		}
	}
	t.Logf("%d recorder drops, triggers %d", drops, snap.TriggerCount)
}
