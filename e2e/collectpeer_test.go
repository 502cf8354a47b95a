package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// collect --all as a user on one machine runs it: a simulator that
// listens, two recorders (peers) that connect to it, each splitting its
// recording every second, the second recording the first's state stream
// too. Ten collections in a row into one directory, each a new zenoh
// session connecting to the simulator: every one finds both recorders
// (a new session learns their tokens in its first moments), fetches the
// files finished since the one before, and makes the merged log again
// from all of them, atomically. In the merged log each recorder is one
// host (one clock model from all its files' probes, one probe channel),
// and the state samples both recorded are there once.
func TestCollectAllPeersOnLoopback(t *testing.T) {
	dir, port, r := t.TempDir(), strconv.Itoa(freePort(t)), robot(t)
	z := []string{"--no-multicast", "--connect", "tcp/127.0.0.1:" + port}
	start(t, vrlogBin, "sim", "-q", "--no-multicast", "--listen", "tcp/127.0.0.1:"+port, "--robot", r, "--state-hz", "100",
		"--width", "64", "--height", "48", "--duration", "90s")
	recDirs := map[string]string{}
	for name, keys := range map[string]string{r + "-a": "vr/" + r + "/**", r + "-b": "vr/" + r + "/state"} {
		recDirs[name] = filepath.Join(dir, name)
		os.Mkdir(recDirs[name], 0o755)
		start(t, vrlogBin, append([]string{"record", "-q", "--name", name, "-o", filepath.Join(recDirs[name], "run.vrlog"), "-k", keys,
			"--time-service", "vr/" + r + "/time", "--probe-interval", "300ms", "--split-duration", "1s"}, z...)...)
	}
	waitFor(t, 30*time.Second, "two finished files on each recorder", func() bool {
		for _, d := range recDirs {
			if _, err := os.Stat(filepath.Join(d, "run_002.vrlog")); err != nil {
				return false
			}
		}
		return true
	})

	out := filepath.Join(dir, "out")
	merged := filepath.Join(out, "session.vrlog")
	var c collectJSON
	fetched := 0
	var lastInode uint64
	for i := range 10 {
		begin := time.Now()
		o, code := runCmd(t, exec.Command(vrlogBin, append([]string{"collect", "--all", "-q", "-o", out, "--json"}, z...)...))
		if code != 0 {
			t.Fatalf("collection %d: exit %d after %v:\n%s", i+1, code, time.Since(begin).Round(time.Millisecond), o)
		}
		c = parseCollect(t, o)
		var names []string
		for _, rc := range c.Recorders {
			names = append(names, rc.Name)
			for _, f := range rc.Files {
				if f.How == "fetched" {
					fetched++
				}
			}
		}
		if !slices.Equal(names, []string{r + "-a", r + "-b"}) || c.Merged != merged {
			t.Fatalf("collection %d: recorders %v, merged %q:\n%s", i+1, names, c.Merged, o)
		}
		ino := inode(t, merged)
		if ino == lastInode {
			t.Fatalf("collection %d did not make the merged log again", i+1)
		}
		lastInode = ino
		time.Sleep(300 * time.Millisecond)
	}
	// A mistyped name is said at once (the discovery window, not
	// --patience), with the recorders that serve files, and nothing is
	// fetched for it.
	for _, args := range [][]string{{r + "-x"}, {r + "-a", r + "-x"}} {
		begin := time.Now()
		o, code := runCmd(t, exec.Command(vrlogBin, append(append([]string{"collect"}, args...), append([]string{"-o", filepath.Join(dir, "typo")}, z...)...)...))
		want := fmt.Sprintf(`no recorder named "%s-x" (the recorders serving files: %s-a, %s-b)`, r, r, r)
		if took := time.Since(begin); code != 2 || !strings.Contains(o, want) || took > 20*time.Second {
			t.Fatalf("collect %v: exit %d after %v, want 2 within the discovery window saying %s:\n%s", args, code, took.Round(time.Millisecond), want, o)
		}
		if _, err := os.Stat(filepath.Join(dir, "typo", r+"-a")); err == nil {
			t.Fatalf("collect %v fetched before saying the name is wrong", args)
		}
	}

	if n := len(c.Recorders[0].Files) + len(c.Recorders[1].Files); fetched <= n-4 {
		t.Fatalf("%d files fetched over the collections, %d collected: the later ones fetched nothing new", fetched, n)
	}
	if h := hiddenFiles(out); len(h) > 0 {
		t.Fatalf("left %v", h)
	}

	rep := analyzeJSON(t, merged)
	hosts, _ := rep["hosts"].([]any)
	if len(hosts) != 2 {
		t.Fatalf("analyze: %d hosts, want one per recorder: %v", len(hosts), hosts)
	}
	for i, h := range hosts {
		h := h.(map[string]any)
		rc := c.Recorders[i]
		files, _ := h["files"].([]any)
		if h["name"] != rc.Name || len(files) != len(rc.Files) || h["probes"].(float64) < float64(2*len(rc.Files)) {
			t.Fatalf("host %d: %v, want %s with its %d files and their probes", i, h, rc.Name, len(rc.Files))
		}
	}
	var probeChans []string
	for _, ch := range rep["channels"].([]any) {
		if n := ch.(map[string]any)["name"].(string); strings.HasPrefix(n, "vrlog/clock/") {
			probeChans = append(probeChans, n)
		}
	}
	if want := []string{"vrlog/clock/vr/" + r + "/time", "vrlog/clock/vr/" + r + "/time@2"}; !slices.Equal(probeChans, want) {
		t.Fatalf("probe channels %v, want %v", probeChans, want)
	}
	state := channelReport(t, rep, "vr/"+r+"/state")
	if state["duplicates"].(float64) != 0 || fmt.Sprint(state["hosts"]) != fmt.Sprintf("[%s-a %s-b]", r, r) {
		t.Fatalf("vr/%s/state in the merged log: %v duplicates, hosts %v", r, state["duplicates"], state["hosts"])
	}
	text, _ := runCmd(t, exec.Command(vrlogBin, "analyze", merged))
	if strings.Count(text, ": offset ") != 2 || !strings.Contains(text, r+"-a: offset") {
		t.Fatalf("analyze names a host more than once:\n%s", text)
	}
}
