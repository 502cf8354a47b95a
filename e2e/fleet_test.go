package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/netem"
	"github.com/vrlog/vrlog/internal/peertest"
)

// fleetBed is fleet capture's test bed: two recorder hosts and a
// controller host, each joined by its own veth link to a router host
// (four network namespaces). The router host does not forward IP: the
// hosts meet only through the zenoh router, which listens on every
// interface of its host. The controller's link can be given a delay
// (a netem.Relay on the router host: ctlRelayPort).
//
//	a   198.51.100.17 ─veth─ 198.51.100.18 ┐
//	b   198.51.100.21 ─veth─ 198.51.100.22 ├ router
//	ctl 198.51.100.25 ─veth─ 198.51.100.26 ┘
type fleetBed struct {
	a, b, ctl, router *netem.NS
	routerIP          map[*netem.NS]string // the router's address on each host's link
	ifOf              map[*netem.NS]string // the router host's interface toward each host
}

const ctlRelayPort = "7448" // on the controller's link: the router, behind a delay

func newFleetBed(t testing.TB) *fleetBed {
	t.Helper()
	if err := netem.Available(); err != nil {
		t.Skipf("fleet test skipped, it needs network namespaces: %v", err)
	}
	f := &fleetBed{a: netem.New(t, "a"), b: netem.New(t, "b"), ctl: netem.New(t, "ctl"), router: netem.New(t, "router"),
		routerIP: map[*netem.NS]string{}, ifOf: map[*netem.NS]string{}}
	for i, h := range []struct {
		ns   *netem.NS
		name string
	}{{f.a, "a"}, {f.b, "b"}, {f.ctl, "ctl"}} {
		host, router := fmt.Sprintf("198.51.100.%d", 17+4*i), fmt.Sprintf("198.51.100.%d", 18+4*i)
		netem.Link(t, h.ns, "to-router", host+"/30", f.router, "to-"+h.name, router+"/30")
		f.routerIP[h.ns], f.ifOf[h.ns] = router, "to-"+h.name
	}
	if c, err := f.a.Dial(net.JoinHostPort(f.routerIP[f.b], zenohPort)); err == nil {
		c.Close()
		t.Fatal("host a reaches host b's link: the router host forwards IP")
	}
	return f
}

// delayCtl puts a relay on the controller's link that holds every byte
// oneWay in each direction (a round trip of 2 × oneWay), on ctlRelayPort.
func (f *fleetBed) delayCtl(t testing.TB, oneWay time.Duration) {
	l, err := f.router.Listen(net.JoinHostPort(f.routerIP[f.ctl], ctlRelayPort))
	if err != nil {
		t.Fatal(err)
	}
	relay := &netem.Relay{Delay: oneWay, Seed: 1,
		Dial: func() (net.Conn, error) { return f.router.Dial(net.JoinHostPort(f.routerIP[f.ctl], zenohPort)) }}
	go relay.Serve(l)
	t.Cleanup(func() { l.Close(); relay.Close() })
}

// startRouter runs the router (peers/router.py on the official wheel) on
// the router host with config, listening on every interface.
func (f *fleetBed) startRouter(t *testing.T, config, zid string) *proc {
	t.Helper()
	cmd := f.router.Command(peertest.Python(t), filepath.Join(root(), "peers", "router.py"), "--config", config,
		"--listen", "tcp/0.0.0.0:"+zenohPort, "--id", zid)
	cmd.Dir = filepath.Dir(config)
	p := startCmd(t, cmd)
	waitFor(t, 30*time.Second, "the router to listen", func() bool {
		c, err := f.router.Dial(net.JoinHostPort(f.routerIP[f.a], zenohPort))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p
}

// zenoh are the flags of a client on host h with config (a file of
// deploy/), through the router (port: zenohPort, or ctlRelayPort).
func (f *fleetBed) zenoh(h *netem.NS, config, port string) []string {
	return []string{"--zenoh-config", filepath.Join(root(), "deploy", config), "--connect", "tcp/" + net.JoinHostPort(f.routerIP[h], port)}
}

// cut takes host h's link down on the router's side; heal brings it back.
func (f *fleetBed) cut(h *netem.NS)  { f.router.IP("link", "set", f.ifOf[h], "down") }
func (f *fleetBed) heal(h *netem.NS) { f.router.IP("link", "set", f.ifOf[h], "up") }

// aclRouterConfig is deploy/router-acl.json5 with the example credentials,
// in a directory of its own (the router reads credentials.txt next to it).
func aclRouterConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for from, to := range map[string]string{"router-acl.json5": "router-acl.json5", "credentials.example.txt": "credentials.txt"} {
		b, err := os.ReadFile(filepath.Join(root(), "deploy", from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "router-acl.json5")
}

func fileSHA(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// partSize is the size of the partial file of name under dir ("" if none).
func partSize(dir, name string) int64 {
	m, _ := filepath.Glob(filepath.Join(dir, "."+name+".*.part"))
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil {
			return fi.Size()
		}
	}
	return 0
}

// leftovers lists the hidden files under dir (partial, temporary).
func hiddenFiles(dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), ".") && p != dir {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// collectJSON is what `collect --json` prints, in part.
type collectJSON struct {
	Recorders []struct {
		Name  string `json:"name"`
		Files []struct {
			Name      string `json:"name"`
			SHA256    string `json:"sha256"`
			Path      string `json:"path"`
			How       string `json:"how"`
			Recovered bool   `json:"recovered"`
		} `json:"files"`
		Pending []struct{ Name, Why string } `json:"pending"`
	} `json:"recorders"`
	Merged string `json:"merged"`
}

func parseCollect(t *testing.T, out string) collectJSON {
	t.Helper()
	var c collectJSON
	if i := strings.Index(out, "{\n"); i < 0 || json.Unmarshal([]byte(out[i:]), &c) != nil {
		t.Fatalf("collect --json printed no report:\n%s", out)
	}
	return c
}

// runCmd runs cmd and returns its combined output and exit code.
func runCmd(t *testing.T, cmd *exec.Cmd) (string, int) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// The collection's faults, over the controller's link with a 20 ms round
// trip: a recorder host partitioned during a collection (its link down
// for 3 s: the collection waits and resumes), the router restarted during
// one, two collectors of the same files at once (both succeed, the files
// are whole), and the collector's disk full (exit 3, no partial file).
func TestCollectFaults(t *testing.T) {
	f := newFleetBed(t)
	f.delayCtl(t, 25*time.Millisecond) // 50 ms round trips, one request in flight: about 20 MB/s
	router := f.startRouter(t, filepath.Join(root(), "deploy", "router.json5"), "f1ee71")
	dir := t.TempDir()
	_, want := f.earlierLog(t, dir, 96<<20, "client.json5")
	collect := func(out string, extra ...string) *exec.Cmd {
		args := append([]string{"collect", "hosta", "-o", out, "--no-merge", "--json", "--window", "1", "--timeout", "2s"}, extra...)
		return f.ctl.Command(vrlogBin, append(args, f.zenoh(f.ctl, "client.json5", ctlRelayPort)...)...)
	}
	check := func(what, out string, code int, dst string) {
		t.Helper()
		if code != 0 {
			t.Fatalf("%s: collect exit %d:\n%s", what, code, out)
		}
		c := parseCollect(t, out)
		if len(c.Recorders) != 1 || len(c.Recorders[0].Files) != 1 || c.Recorders[0].Files[0].Name != "earlier.vrlog" ||
			len(c.Recorders[0].Pending) != 1 || c.Recorders[0].Pending[0].Name != "now.vrlog" {
			t.Fatalf("%s: collected %+v", what, c.Recorders)
		}
		if got := fileSHA(t, filepath.Join(dst, "hosta", "earlier.vrlog")); got != want {
			t.Fatalf("%s: the collected file's sha256 %s, the recorder's %s", what, got, want)
		}
		if h := hiddenFiles(dst); len(h) > 0 {
			t.Fatalf("%s: left %v", what, h)
		}
	}
	waitFor(t, 30*time.Second, "the recorder to serve", func() bool {
		out, code := runCmd(t, collect(filepath.Join(dir, "probe"), "--patience", "1s"))
		return code == 0 || !strings.Contains(out, "no answer") && !strings.Contains(out, "no recorder serves files")
	})
	os.RemoveAll(filepath.Join(dir, "probe"))

	// A partition of the recorder's host while its file is fetched.
	out1 := filepath.Join(dir, "partition")
	p := startCmd(t, collect(out1))
	thirdOf(t, p, out1)
	f.cut(f.a)
	at := partSize(filepath.Join(out1, "hosta"), "earlier.vrlog")
	time.Sleep(3 * time.Second)
	if now := partSize(filepath.Join(out1, "hosta"), "earlier.vrlog"); now > at+8<<20 {
		t.Fatalf("%d bytes arrived from a host without a link", now-at)
	}
	f.heal(f.a)
	code := p.wait(t, 120*time.Second)
	check("partition", p.stderr.String(), code, out1)
	if !strings.Contains(p.stderr.String(), "waiting") {
		t.Fatalf("the collection never said it waited:\n%s", p.stderr)
	}

	// The router restarted while a file is fetched.
	out2 := filepath.Join(dir, "restart")
	p = startCmd(t, collect(out2))
	thirdOf(t, p, out2)
	router.signal(9)
	router.wait(t, 10*time.Second)
	time.Sleep(time.Second)
	f.startRouter(t, filepath.Join(root(), "deploy", "router.json5"), "f1ee72")
	code = p.wait(t, 120*time.Second)
	check("router restart", p.stderr.String(), code, out2)

	// Two collectors of the same files into the same directory.
	out3 := filepath.Join(dir, "two")
	p1, p2 := startCmd(t, collect(out3)), startCmd(t, collect(out3))
	c1, c2 := p1.wait(t, 120*time.Second), p2.wait(t, 120*time.Second)
	check("first of two", p1.stderr.String(), c1, out3)
	check("second of two", p2.stderr.String(), c2, out3)

	// The collector's disk full: a 40 MiB file system for a 96 MiB file.
	out4 := filepath.Join(dir, "full")
	os.Mkdir(out4, 0o755)
	if o, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", out4).CombinedOutput(); err != nil {
		t.Fatalf("mount a small tmpfs: %v: %s", err, o)
	}
	defer exec.Command("umount", "-l", out4).Run()
	o, code := runCmd(t, collect(out4))
	if code != 3 || !strings.Contains(o, "disk full") || !strings.Contains(o, "nothing half-written") {
		t.Fatalf("collect onto a full disk: exit %d:\n%s", code, o)
	}
	if h := hiddenFiles(out4); len(h) > 0 {
		t.Fatalf("a full disk left %v", h)
	}
	if _, err := os.Stat(filepath.Join(out4, "hosta", "earlier.vrlog")); err == nil {
		t.Fatal("a full disk left a file in place")
	}
}

// earlierLog puts a finished log of size bytes in dir/a, as an earlier
// recording would have left it, and starts host a's recorder there
// (--name hosta, with deploy/config), recording nothing of note. It returns
// the recorder and the log's SHA-256.
func (f *fleetBed) earlierLog(t *testing.T, dir string, size int, config string) (*proc, string) {
	t.Helper()
	recDir := filepath.Join(dir, "a")
	os.Mkdir(recDir, 0o755)
	bigLog(t, filepath.Join(recDir, "earlier.vrlog"), size)
	rec := startCmd(t, f.a.Command(vrlogBin, append([]string{"record", "--name", "hosta", "-o", filepath.Join(recDir, "now.vrlog"),
		"-k", "vr/" + robot(t) + "/**", "--probe-interval", "0"}, f.zenoh(f.a, config, zenohPort)...)...))
	return rec, fileSHA(t, filepath.Join(recDir, "earlier.vrlog"))
}

// thirdOf waits until the collection p into out has a third of the file.
func thirdOf(t *testing.T, p *proc, out string) {
	t.Helper()
	waitFor(t, 60*time.Second, "a third of the file", func() bool {
		select {
		case <-p.done:
			t.Fatalf("the collection ended before a third of the file:\n%s", p.stderr)
		default:
		}
		return partSize(filepath.Join(out, "hosta"), "earlier.vrlog") > 32<<20
	})
}

// Access control (deploy/router-acl.json5): the controller's identity
// collects; another identity that the router lets in (the simulator's)
// gets no answer, and is told the recorder is there but answers only who
// may ask; a client without credentials is refused by the router itself.
// The recorder's files are the same afterwards.
func TestCollectAccessControl(t *testing.T) {
	f := newFleetBed(t)
	f.startRouter(t, aclRouterConfig(t), "acc1")
	dir := t.TempDir()
	rec, before := f.earlierLog(t, dir, 4<<20, "recorder.json5")
	recDir := filepath.Join(dir, "a")
	collect := func(config, out string) *exec.Cmd {
		args := []string{"collect", "hosta", "-o", filepath.Join(dir, out), "--no-merge", "--timeout", "1s", "--patience", "40s"}
		return f.ctl.Command(vrlogBin, append(args, f.zenoh(f.ctl, config, zenohPort)...)...)
	}
	var out string
	var code int
	waitFor(t, 30*time.Second, "the controller's collection", func() bool {
		out, code = runCmd(t, collect("controller.json5", "ctl"))
		return code == 0
	})
	if got := fileSHA(t, filepath.Join(dir, "ctl", "hosta", "earlier.vrlog")); got != before {
		t.Fatal("the controller's copy differs")
	}

	start := time.Now()
	out, code = runCmd(t, collect("authclient.json5", "other"))
	if code != 3 || !strings.Contains(out, "access control") || !strings.Contains(out, "hosta is on the network") || time.Since(start) > 35*time.Second {
		t.Fatalf("another identity: exit %d after %v:\n%s", code, time.Since(start), out)
	}
	if _, err := os.Stat(filepath.Join(dir, "other", "hosta", "earlier.vrlog")); err == nil {
		t.Fatal("another identity fetched a file")
	}
	out, code = runCmd(t, collect("client.json5", "anon"))
	if code != 3 || !strings.Contains(out, "Unable to connect") || !strings.Contains(out, "user and password") {
		t.Fatalf("no credentials: exit %d:\n%s", code, out)
	}
	if got := fileSHA(t, filepath.Join(recDir, "earlier.vrlog")); got != before {
		t.Fatal("the recorder's file changed")
	}
	ents, _ := os.ReadDir(recDir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"earlier.vrlog", "now.vrlog"}) {
		t.Fatalf("the recorder's directory holds %v", names)
	}
	if strings.Contains(rec.stderr.String(), "is open to anyone") {
		t.Fatalf("a recorder behind an authenticating router said its control plane is open:\n%s", rec.stderr)
	}
}

// Two hosts, each with the simulator's streams (its own robot, its own
// iceoryx2 camera) and a recorder serving its files (record --name),
// their clocks apart; the recorder of host b is killed with kill -9 in
// the middle of a file and started again. collect --all from the
// controller's host brings back every finished file byte for byte, the
// killed one as the copy its host recovered (marked so, its unfinished
// original not served), and merges them on the simulator's clock: every
// record of every file is in the merged log, each host's injected offset
// comes back within its uncertainty, and analyze says which host recorded
// which stream and that host b's file was recovered.
func TestCollectAcrossHosts(t *testing.T) {
	f := newFleetBed(t)
	f.startRouter(t, filepath.Join(root(), "deploy", "router.json5"), "c011ec")
	dir := t.TempDir()
	ra, rb := robot(t)+"a", robot(t)+"b"
	service := "vr/" + ra + "/time"
	const simAhead, aAhead, bAhead = 250 * time.Millisecond, -120 * time.Millisecond, 300 * time.Millisecond
	sim := func(h *netem.NS, r string) *proc {
		return startCmd(t, h.Command(vrlogBin, append([]string{"sim", "-q", "--robot", r, "--state-hz", "100", "--width", "64", "--height", "48",
			"--duration", "60s", "--clock-offset", simAhead.String()}, f.zenoh(h, "client.json5", zenohPort)...)...))
	}
	record := func(h *netem.NS, name, r, out string, ahead time.Duration) *proc {
		return startCmd(t, h.Command(vrlogBin, append([]string{"record", "-q", "--name", name, "-o", out, "-k", "vr/" + r + "/**", "-s", "vr/" + r + "/camera/*",
			"--time-service", service, "--probe-interval", "200ms", "--split-duration", "3s", "--clock-offset", ahead.String()},
			f.zenoh(h, "client.json5", zenohPort)...)...))
	}
	aDir, bDir := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Mkdir(aDir, 0o755)
	os.Mkdir(bDir, 0o755)
	sim(f.a, ra)
	sim(f.b, rb)
	recA := record(f.a, "hosta", ra, filepath.Join(aDir, "run.vrlog"), aAhead)
	recB := record(f.b, "hostb", rb, filepath.Join(bDir, "run.vrlog"), bAhead)
	// Host b's recorder dies 1.5 s into its second file.
	waitFor(t, 60*time.Second, "host b's second file", func() bool {
		_, err := os.Stat(filepath.Join(bDir, "run_001.vrlog"))
		return err == nil
	})
	time.Sleep(1500 * time.Millisecond)
	recB.signal(9)
	recB.wait(t, 10*time.Second)
	record(f.b, "hostb", rb, filepath.Join(bDir, "again.vrlog"), bAhead)
	time.Sleep(4 * time.Second) // host a finishes a few files, host b one of the new recording

	out := filepath.Join(dir, "ctl")
	var o string
	var code int
	waitFor(t, 60*time.Second, "the collection", func() bool {
		o, code = runCmd(t, f.ctl.Command(vrlogBin, append([]string{"collect", "--all", "-o", out, "--json"}, f.zenoh(f.ctl, "client.json5", zenohPort)...)...))
		return code == 0 && strings.Count(o, `"name": "host`) == 2
	})
	t.Log(o)
	c := parseCollect(t, o)
	var inputs []string
	recovered := ""
	for _, rc := range c.Recorders {
		host := map[string]string{"hosta": aDir, "hostb": bDir}[rc.Name]
		if len(rc.Files) < 2 || len(rc.Pending) == 0 {
			t.Fatalf("%s: collected %+v, pending %+v: want finished files and the one being written", rc.Name, rc.Files, rc.Pending)
		}
		for _, fl := range rc.Files {
			if got, want := fileSHA(t, fl.Path), fileSHA(t, filepath.Join(host, fl.Name)); got != want || got != fl.SHA256 {
				t.Fatalf("%s: %s collected with sha256 %s, the host's is %s", rc.Name, fl.Name, got, want)
			}
			if fl.Name == "run_001.vrlog" && rc.Name == "hostb" {
				t.Fatal("host b's unfinished file was served as it is")
			}
			if fl.Recovered != (fl.Name == "run_001.recovered.vrlog" && rc.Name == "hostb") {
				t.Fatalf("%s: %s recovered=%v", rc.Name, fl.Name, fl.Recovered)
			}
			if fl.Recovered {
				recovered = fl.Path
			}
			inputs = append(inputs, fl.Path)
		}
	}
	if recovered == "" {
		t.Fatal("host b's killed file was not collected as recovered")
	}
	if !strings.Contains(recA.stderr.String(), "the control plane of hosta (vrlog/record/hosta/...) is open to anyone") {
		t.Fatalf("a recorder without authentication did not say its control plane is open:\n%s", recA.stderr)
	}
	if !strings.Contains(o, "RECOVERED") {
		t.Fatalf("merge did not say a host's file was recovered:\n%s", o)
	}

	// Every record of every collected file is in the merged log, per channel.
	count := func(paths ...string) map[string]int {
		n := map[string]int{}
		for _, p := range paths {
			recs, _ := readLog(t, p)
			for _, r := range recs {
				if !strings.HasPrefix(r.channel, "vrlog/") {
					n[r.channel]++
				}
			}
		}
		return n
	}
	want, got := count(inputs...), count(c.Merged)
	if len(want) < 4 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("records per channel: the hosts' files %v, the merged log %v", want, got)
	}

	// Each host's offset, and what analyze says of the hosts: one per
	// recorder, with all its files (host b's two recordings too).
	rep := analyzeJSON(t, c.Merged)
	hosts, _ := rep["hosts"].([]any)
	if len(hosts) != 2 {
		t.Fatalf("analyze: %d hosts, want one per recorder", len(hosts))
	}
	for i, h := range hosts {
		h := h.(map[string]any)
		name := h["name"].(string)
		ahead, r := aAhead, ra
		if name == "hostb" {
			ahead, r = bAhead, rb
		}
		if files, _ := h["files"].([]any); name != c.Recorders[i].Name || len(files) != len(c.Recorders[i].Files) {
			t.Fatalf("host %d: %s with files %v, want %s with its %d", i, name, files, c.Recorders[i].Name, len(c.Recorders[i].Files))
		}
		off, unc := h["offset_ms"].(float64), h["uncertainty_ms"].(float64)
		if want := float64((simAhead - ahead).Milliseconds()); off < want-unc-1 || off > want+unc+1 {
			t.Fatalf("%s: offset %.3f ms ± %.3f, injected %.0f", name, off, unc, want)
		}
		chans := fmt.Sprint(h["channels"])
		if !strings.Contains(chans, "vr/"+r+"/state") || !strings.Contains(chans, "vr/"+r+"/camera/front") {
			t.Fatalf("%s: channels %s", name, chans)
		}
		if (h["recovered_from"] != "") != (name == "hostb") {
			t.Fatalf("%s: recovered_from %q", name, h["recovered_from"])
		}
	}
	for _, r := range []string{ra, rb} {
		ch := channelReport(t, rep, "vr/"+r+"/state")
		if hs := fmt.Sprint(ch["hosts"]); hs != map[string]string{ra: "[hosta]", rb: "[hostb]"}[r] {
			t.Fatalf("vr/%s/state: hosts %s", r, hs)
		}
	}
}
