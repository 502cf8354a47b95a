package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
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
	if code := pub.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("publisher peer exit %d:\n%s", code, pub.stderr)
	}
	time.Sleep(300 * time.Millisecond)
	rec.signal(syscall.SIGINT)
	if code := rec.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, rec.stderr)
	}
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
