//go:build cgo

package fleetctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// stopScript runs peers/fleet_stop.py for the fleet name against ep with
// timeout (seconds) on a fresh zenoh client session and returns its
// stdout, stderr, exit code and how long it took.
func stopScript(t *testing.T, ep, name string, timeout int) (stdout, stderr string, code int, took time.Duration) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "client.json5")
	if err := os.WriteFile(cfg, []byte(`{mode: "client", scouting: {multicast: {enabled: false}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, peertest.Python(t), filepath.Join(peertest.Root(), "peers", "fleet_stop.py"), "--config", cfg,
		"--connect", ep, "--timeout", fmt.Sprint(timeout), "--reason", "tests done", name)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code, time.Since(start)
}

// peers/fleet_stop.py waits for the fleet's liveliness token, asks
// until it is answered, and says truthfully what happened when it is
// not: a script started before the fleet stops it once it is up (it gave
// up at once, saying it had waited), one for a fleet that is not there
// waits its whole timeout, and one for a fleet whose token is there but
// that does not answer says so.
func TestStopScript(t *testing.T) {
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	fleet, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()

	type ran struct {
		stdout, stderr string
		code           int
	}
	done := make(chan ran, 1)
	go func() {
		o, e, c, _ := stopScript(t, ep, "run1", 30)
		done <- ran{o, e, c}
	}()
	time.Sleep(time.Second) // the script asks before the fleet is there
	srv, err := ServeStop(fleet, "run1")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	select {
	case <-srv.Requested():
	case r := <-done:
		t.Fatalf("the script ended before it asked the fleet: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	case <-time.After(30 * time.Second):
		t.Fatal("the stop query did not arrive")
	}
	if srv.Reason() != "tests done" {
		t.Fatalf("reason %q", srv.Reason())
	}
	srv.Answer(StopReply{OK: true})
	if r := <-done; r.code != 0 || !strings.Contains(r.stdout, `"ok": true`) || !strings.Contains(r.stdout, `"name": "run1"`) {
		t.Fatalf("the script that asked before the fleet was up: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	_, stderr, code, took := stopScript(t, ep, "nobody", 2)
	if code != 3 || took < 2*time.Second || !strings.Contains(stderr, "no fleet recording nobody on the network: its liveliness token vrlog/fleet/nobody did not appear within 2 s") {
		t.Fatalf("no fleet: exit %d after %v:\n%s", code, took, stderr)
	}

	tok, err := fleet.DeclareToken(TokenKey("mute"))
	if err != nil {
		t.Fatal(err)
	}
	defer tok.Close()
	_, stderr, code, took = stopScript(t, ep, "mute", 2)
	if code != 3 || took < 2*time.Second || !strings.Contains(stderr, "the fleet recording mute is on the network (its liveliness token vrlog/fleet/mute is there) but no fleet recording answered vrlog/fleet/mute/stop within 2 s") {
		t.Fatalf("a fleet that does not answer: exit %d after %v:\n%s", code, took, stderr)
	}
}
