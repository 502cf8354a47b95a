package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
)

// The independent Python publisher (official eclipse-zenoh and iceoryx2
// wheels, wire format written from docs/wire-format.md) is recorded
// byte-exact too.
func TestRecordPythonPublisher(t *testing.T) {
	r := robot(t)
	dir := t.TempDir()
	port := strconv.Itoa(freePort(t))
	logPath, truthPath := filepath.Join(dir, "py.vrlog"), filepath.Join(dir, "py.jsonl")
	state, cam := "vr/"+r+"/state", "vr/"+r+"/camera/front"
	rec := start(t, vrlogBin, "record", "--listen", "tcp/127.0.0.1:"+port, "--no-multicast", "-q", "-o", logPath,
		"-k", state, "-s", cam, "--probe-interval", "0")
	pub := start(t, peertest.Python(t), filepath.Join(root(), "peers", "publisher.py"), "--connect", "tcp/127.0.0.1:"+port,
		"--state-key", state, "--states", "300", "--state-hz", "300", "--service", cam, "--frames", "20", "--frame-hz", "30",
		"--width", "320", "--height", "240", "--log", truthPath)
	endRecording(t, pub, rec, 60*time.Second)
	published := readTruth(t, truthPath)
	for i := range published {
		_, published[i].Channel, _ = strings.Cut(published[i].Channel, ":") // "state:KEY" → KEY
	}
	recs, _ := readLog(t, logPath)
	if n := contains(t, recs, published, state); n != 300 {
		t.Fatalf("%d states", n)
	}
	if n := contains(t, recs, published, cam); n != 20 {
		t.Fatalf("%d frames", n)
	}
}

// A simulator nobody here wrote creates its iceoryx2 services with
// iceoryx2's defaults for every setting (subscriber_max_buffer_size 2, ...)
// or with unusual ones: record opens each, adapting its subscriber to the
// service's limits, and captures every sample. A service whose subscriber
// slots are all taken cannot be opened: that is loud (stderr, exit 3, a
// channel error in the log that info and analyze show), never silent.
func TestRecordForeignIceoryxServices(t *testing.T) {
	for _, c := range []struct {
		name    string
		peer    []string
		pattern bool // select by pattern (the discovery path) instead of the exact name
	}{
		{"defaults", []string{"--buffer", "0"}, false},
		{"two_publishers", []string{"--buffer", "0", "--max-publishers", "3", "--publishers", "2"}, true},
		{"small_history", []string{"--buffer", "0", "--history", "1", "--pre-frames", "1"}, false},
		{"fixed_payload", []string{"--buffer", "0", "--fixed-payload"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := robot(t)
			dir := t.TempDir()
			logPath, truthPath := filepath.Join(dir, "iox.vrlog"), filepath.Join(dir, "truth.jsonl")
			cam := "vr/" + r + "/camera/front"
			sel := cam
			if c.pattern {
				sel = "vr/" + r + "/**"
			}
			rec := start(t, vrlogBin, "record", "-q", "-o", logPath, "-s", sel, "--probe-interval", "0")
			pub := start(t, peertest.Python(t), append([]string{filepath.Join(root(), "peers", "publisher.py"), "--service", cam,
				"--frames", "40", "--frame-hz", "30", "--width", "64", "--height", "48", "--log", truthPath, "--wait-subscribers", "20"}, c.peer...)...)
			if code := pub.wait(t, 60*time.Second); code != 0 {
				t.Fatalf("publisher peer exit %d:\n%s\nrecord:\n%s", code, pub.stderr, rec.stderr)
			}
			time.Sleep(300 * time.Millisecond)
			rec.signal(syscall.SIGINT)
			if code := rec.wait(t, 20*time.Second); code != 0 {
				t.Fatalf("record exit %d:\n%s", code, rec.stderr)
			}
			published := readTruth(t, truthPath)
			recs, lr := readLog(t, logPath)
			chans := dataChannels(lr)
			if len(chans) != 1 {
				t.Fatalf("channels %+v", lr.Channels())
			}
			ch := chans[0]
			if ch.Meta["vrlog.iox2.buffer_size"] != "2" || !strings.Contains(ch.Meta[logfmt.MetaWarning], "buffer 2") ||
				!strings.Contains(rec.stderr.String(), "warning: iceoryx2 "+cam) {
				t.Fatalf("the recorder does not say its buffer is limited to 2: meta %v\nstderr:\n%s", ch.Meta, rec.stderr)
			}
			sameSamples(t, recs, published, cam, lr.StatsOf(ch.ID).Drops)
		})
	}

	t.Run("max_subscribers_taken", func(t *testing.T) {
		r := robot(t)
		dir := t.TempDir()
		logPath := filepath.Join(dir, "taken.vrlog")
		cam := "vr/" + r + "/camera/front"
		pub := start(t, peertest.Python(t), filepath.Join(root(), "peers", "publisher.py"), "--service", cam, "--frames", "0",
			"--max-subscribers", "1", "--hold-subscriber", "--linger", "60", "--log", filepath.Join(dir, "truth.jsonl"))
		waitFor(t, 20*time.Second, "the peer's service", func() bool { return strings.Contains(pub.stderr.String(), "ready") })
		for _, sel := range []string{"vr/" + r + "/**", cam} { // found by discovery, and named; the last log is checked below
			rec := start(t, vrlogBin, "record", "-q", "-f", "-o", logPath, "-s", sel, "--probe-interval", "0", "--duration", "2s")
			code := rec.wait(t, 30*time.Second)
			if code != 3 || !strings.Contains(rec.stderr.String(), "ERROR: iceoryx2 "+cam+" is not recorded") ||
				!strings.Contains(rec.stderr.String(), "ExceedsMaxSupportedSubscribers") {
				t.Fatalf("record -s %s: exit %d, want 3 with the service's error on stderr:\n%s", sel, code, rec.stderr)
			}
			t.Logf("record -s %s: %s", sel, strings.TrimSpace(rec.stderr.String()))
		}
		_, lr := readLog(t, logPath)
		if chans := dataChannels(lr); len(chans) != 1 || !strings.Contains(chans[0].Meta[logfmt.MetaError], "ExceedsMaxSupportedSubscribers") {
			t.Fatalf("the log does not store the channel error: %+v", lr.Channels())
		}
		if out, err := runVrlog("info", logPath); err != nil || !strings.Contains(out, "channel "+cam+" was NOT RECORDED") {
			t.Fatalf("info: %v\n%s", err, out)
		}
		if e, _ := channelReport(t, analyzeJSON(t, logPath), cam)["error"].(string); !strings.Contains(e, "ExceedsMaxSupportedSubscribers") {
			t.Fatalf("analyze does not show the channel error: %q", e)
		}
	})
}

// sameSamples checks that the log's records of channel ch are exactly the
// published samples (byte-exact, each once), and that each publisher's
// samples are in the order it sent them.
// drops are the recorder drops the log counts on ch: a subscriber starved
// on a loaded machine loses frames from a 2-sample buffer, and every one
// lost must be counted (publisher skips = missing - drops, exactly).
func sameSamples(t *testing.T, recs []logged, published []truth, ch string, drops uint64) {
	t.Helper()
	key := func(x truth) string { return x.HeaderSHA256 + "/" + x.PayloadSHA256 }
	order := map[string]int{}
	for i, p := range published {
		if p.Channel == "frame:"+ch {
			order[key(p)] = i
		}
	}
	last := map[string]int{}
	seen := map[string]bool{}
	for _, r := range recs {
		if r.channel != ch {
			continue
		}
		k := key(r.truth)
		i, ok := order[k]
		if !ok || seen[k] {
			t.Fatalf("%s: a record that was not published (or twice): %+v", ch, r.truth)
		}
		seen[k] = true
		if j, ok := last[r.publisher]; ok && i < j {
			t.Fatalf("%s: publisher %x's samples out of order", ch, r.publisher)
		}
		last[r.publisher] = i
	}
	if uint64(len(seen))+drops != uint64(len(order)) || len(seen) == 0 {
		t.Fatalf("%s: %d of %d published samples recorded, %d recorder drops counted", ch, len(seen), len(order), drops)
	}
	if drops > 0 {
		t.Logf("%s: %d of %d samples recorded byte-exact, the %d lost counted as recorder drops (a starved 2-sample buffer)", ch, len(seen), len(order), drops)
		return
	}
	t.Logf("%s: all %d samples of %d publisher(s) recorded byte-exact", ch, len(seen), len(last))
}

// dataChannels are a log's channels but the recorder's own (its heartbeats
// and clock probes).
func dataChannels(r *logfmt.Reader) []logfmt.Channel {
	var out []logfmt.Channel
	for _, c := range r.Channels() {
		if c.Transport != logfmt.TransportInternal {
			out = append(out, c)
		}
	}
	return out
}
