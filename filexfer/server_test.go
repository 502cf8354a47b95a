//go:build cgo

package filexfer

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// sessions opens a recorder's and a collector's zenoh sessions on loopback.
func sessions(t *testing.T) (rec, col *zenoh.Session) {
	t.Helper()
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	a, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(); a.Close() })
	return a, b
}

// writeLog writes a log of about kib KiB: a channel of random payloads
// stored raw.
func writeLog(t *testing.T, path string, kib int) {
	t.Helper()
	w, err := logfmt.Create(path, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := w.AddChannel(logfmt.Channel{Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front"})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 16<<10)
	for i := range kib / 16 {
		rand.Read(payload)
		ns := int64(i) * int64(time.Millisecond)
		if err := w.Write(&logfmt.Record{Channel: ch, RecvWallNs: 1e18 + ns, RecvMonoNs: 1e9 + ns, Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// outputDir is a recorder's output directory with one file of each kind:
// finished logs, a log a crash left without its footer, a log being
// written, and what must never be served (links out of the directory and
// into it, a hidden file, a file of another kind, a subdirectory). It
// returns the directory and a secret file outside it.
func outputDir(t *testing.T) (dir, secret string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "out")
	os.Mkdir(dir, 0o755)
	secret = filepath.Join(base, "secret.vrlog")
	writeLog(t, secret, 64)
	writeLog(t, filepath.Join(dir, "run.0.vrlog"), 2048)
	writeLog(t, filepath.Join(dir, "run.1.vrlog"), 256)
	// A log whose recorder was killed: its footer and last chunk are gone.
	torn := filepath.Join(dir, "crashed.vrlog")
	writeLog(t, torn, 512)
	fi, _ := os.Stat(torn)
	os.Truncate(torn, fi.Size()*2/3)
	live, err := outfile.CreateLive(filepath.Join(dir, "live.vrlog"), outfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	live.Write([]byte("VRLOG being written"))
	os.Symlink(secret, filepath.Join(dir, "escape.vrlog"))
	os.Symlink("run.1.vrlog", filepath.Join(dir, "alias.vrlog"))
	os.WriteFile(filepath.Join(dir, ".hidden.vrlog"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub.vrlog"), 0o755)
	return dir, secret
}

// serving serves an outputDir as the recorder gpu-box and returns it, the
// secret outside it, and the collector's session.
func serving(t *testing.T) (dir, secret string, col *zenoh.Session) {
	t.Helper()
	rs, cs := sessions(t)
	dir, secret = outputDir(t)
	srv, err := Serve(rs, "gpu-box", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return dir, secret, cs
}

// A recorder's finished logs, fetched over real zenoh sessions: the list
// holds exactly the finished logs and the recovered copy of the crashed
// one (marked so), the live log is pending, nothing else is listed; each
// fetched file is byte for byte the recorder's, in small chunks with many
// in flight; a second collection finds them there and fetches nothing.
func TestCollectOverZenoh(t *testing.T) {
	dir, _, cs := serving(t)
	c := &Client{Sess: cs, Chunk: 64 << 10, Window: 6, Timeout: 5 * time.Second}
	ctx := context.Background()

	var names []string
	waitUntil(t, 10*time.Second, "the recorder's token", func() bool {
		names, _ = c.Discover(context.Background(), time.Second)
		return slices.Equal(names, []string{"gpu-box"})
	})
	l := list(t, c)
	var got []string
	for _, f := range l.Files {
		got = append(got, fmt.Sprintf("%s recovered=%v", f.Name, f.Recovered))
	}
	want := []string{"crashed.recovered.vrlog recovered=true", "run.0.vrlog recovered=false", "run.1.vrlog recovered=false"}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	if len(l.Pending) != 1 || l.Pending[0].Name != "live.vrlog" || !strings.Contains(l.Pending[0].Why, fmt.Sprintf("PID %d", os.Getpid())) {
		t.Fatalf("pending %+v: want live.vrlog, being written by this process", l.Pending)
	}
	if l.Files[0].RecoveredFrom != "crashed.vrlog" {
		t.Fatalf("recovered copy %+v", l.Files[0])
	}

	out := t.TempDir()
	p := &Progress{Name: "gpu-box"}
	cols, err := c.Collect(ctx, []string{"gpu-box"}, CollectOptions{Out: out}, []*Progress{p})
	if err != nil {
		t.Fatal(err)
	}
	if len(cols[0].Files) != 3 || p.Done() != p.Total() || p.State() != "done" {
		t.Fatalf("collected %+v; progress %d of %d, %q", cols[0].Files, p.Done(), p.Total(), p.State())
	}
	for _, f := range cols[0].Files {
		sameBytes(t, filepath.Join(dir, f.Name), f.Path)
		if f.How != HowFetched {
			t.Fatalf("%s: %s, want fetched", f.Name, f.How)
		}
	}
	r, err := logfmt.Open(filepath.Join(out, "gpu-box", "crashed.recovered.vrlog"), logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Header().Metadata[logfmt.MetaRecoveredFrom] != "crashed.vrlog" || !r.Indexed() {
		t.Fatalf("the recovered copy: metadata %v, indexed %v", r.Header().Metadata, r.Indexed())
	}
	r.Close()
	noLeftovers(t, filepath.Join(out, "gpu-box"), 3)

	cols, err = c.Collect(ctx, []string{"gpu-box"}, CollectOptions{Out: out}, []*Progress{{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cols[0].Files {
		if f.How != HowAlready || f.Fetched != 0 {
			t.Fatalf("second collection: %+v", f)
		}
	}
}

// Hostile and malformed requests get error replies that say why, and
// never a byte from outside the output directory, of a live log, of a
// link, or of a file the recorder did not list.
func TestHostileRequests(t *testing.T) {
	_, secret, cs := serving(t)
	c := &Client{Sess: cs, Timeout: 5 * time.Second}
	ctx := context.Background()
	l := list(t, c)
	good := l.Files[1]
	secretBytes, _ := os.ReadFile(secret)
	secretSum, _ := hashFile(ctx, mustOpen(t, secret))
	req := func(file, sum string, off, n int64) string {
		b, _ := json.Marshal(RangeRequest{File: file, SHA256: sum, Offset: off, Length: n})
		return string(b)
	}
	cases := []struct {
		name, key, payload, code string
	}{
		{"parent", RangeKey("gpu-box"), req("../secret.vrlog", secretSum, 0, 100), CodeBadRequest},
		{"absolute", RangeKey("gpu-box"), req(secret, secretSum, 0, 100), CodeBadRequest},
		{"link out", RangeKey("gpu-box"), req("escape.vrlog", secretSum, 0, 100), CodeNotFound},
		{"link in", RangeKey("gpu-box"), req("alias.vrlog", good.SHA256, 0, 100), CodeNotFound},
		{"live log", RangeKey("gpu-box"), req("live.vrlog", good.SHA256, 0, 10), CodeNotFound},
		{"torn log", RangeKey("gpu-box"), req("crashed.vrlog", good.SHA256, 0, 10), CodeNotFound},
		{"hidden", RangeKey("gpu-box"), req(".hidden.vrlog", good.SHA256, 0, 1), CodeBadRequest},
		{"not a log", RangeKey("gpu-box"), req("notes.txt", good.SHA256, 0, 1), CodeNotFound},
		{"directory", RangeKey("gpu-box"), req("sub.vrlog", good.SHA256, 0, 1), CodeNotFound},
		{"wrong version", RangeKey("gpu-box"), req(good.Name, secretSum, 0, 10), CodeChanged},
		{"past the end", RangeKey("gpu-box"), req(good.Name, good.SHA256, good.Size+1, 10), CodeBadRequest},
		{"too long", RangeKey("gpu-box"), req(good.Name, good.SHA256, 0, MaxChunk+1), CodeBadRequest},
		{"garbage", RangeKey("gpu-box"), "\x00\xff{", CodeBadRequest},
		{"no payload", RangeKey("gpu-box"), "", CodeBadRequest},
		{"oversized", RangeKey("gpu-box"), strings.Repeat("x", 1<<20), CodeBadRequest},
		{"listing with a payload", FilesKey("gpu-box"), `{"dir":"/"}`, CodeBadRequest},
		{"wildcard range", "vrlog/record/*/file", req(good.Name, good.SHA256, 0, 10), CodeBadRequest},
		{"wildcard everything", "**", req(good.Name, good.SHA256, 0, 10), CodeBadRequest},
	}
	for _, tc := range cases {
		replies, err := cs.Get(ctx, tc.key, []byte(tc.payload), 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		errs := 0
		for _, r := range replies {
			if !r.Err {
				t.Fatalf("%s: answered %d bytes, want an error", tc.name, len(r.Payload))
			}
			if bytes.Contains(r.Payload, secretBytes[:64]) {
				t.Fatalf("%s: the reply holds the secret's bytes", tc.name)
			}
			var re RemoteError
			if json.Unmarshal(r.Payload, &re) != nil || re.Schema != ErrorSchema || re.Code != tc.code || re.Message == "" {
				t.Fatalf("%s: reply %s, want code %s", tc.name, r.Payload, tc.code)
			}
			errs++
		}
		if errs == 0 {
			t.Fatalf("%s: no reply", tc.name)
		}
	}
	// The server still serves after all that.
	if _, err := c.Fetch(ctx, "gpu-box", good, filepath.Join(t.TempDir(), good.Name), false, nil); err != nil {
		t.Fatal(err)
	}
}

// A fetch interrupted halfway keeps its partial file; the next resumes
// from its end and the result is the recorder's file.
func TestFetchResumes(t *testing.T) {
	dir, _, cs := serving(t)
	c := &Client{Sess: cs, Chunk: 32 << 10, Window: 2}
	l := list(t, c)
	f := l.Files[1] // run.0.vrlog, the largest
	dst := filepath.Join(t.TempDir(), f.Name)
	ctx, cancel := context.WithCancel(context.Background())
	var got int64
	_, err := c.Fetch(ctx, "gpu-box", f, dst, false, func(n int64) {
		if got += n; got > f.Size/2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted fetch: %v", err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an interrupted fetch left %s: %v", dst, err)
	}
	res, err := c.Fetch(context.Background(), "gpu-box", f, dst, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed < f.Size/2 || res.Resumed+res.Bytes != f.Size {
		t.Fatalf("resumed %d + fetched %d of %d", res.Resumed, res.Bytes, f.Size)
	}
	sameBytes(t, filepath.Join(dir, f.Name), dst)
	noLeftovers(t, filepath.Dir(dst), 1)
}

// Two collectors of the same file into the same place take turns: one
// fetches, the other waits for it and finds the file there.
func TestTwoCollectorsOfOneFile(t *testing.T) {
	dir, _, cs := serving(t)
	c := &Client{Sess: cs, Chunk: 16 << 10, Window: 2}
	l := list(t, c)
	f := l.Files[1]
	dst := filepath.Join(t.TempDir(), f.Name)
	var wg sync.WaitGroup
	res := make([]Fetched, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = c.Fetch(context.Background(), "gpu-box", f, dst, false, nil)
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if res[0].Already == res[1].Already {
		t.Fatalf("both %v: want one fetch and one that found it done", res)
	}
	sameBytes(t, filepath.Join(dir, f.Name), dst)
	noLeftovers(t, filepath.Dir(dst), 1)
}

// A file replaced on the recorder after it was listed is not fetched as a
// mix of both: the fetch fails with ErrChanged and leaves nothing.
func TestFileChangedAfterListing(t *testing.T) {
	dir, _, cs := serving(t)
	c := &Client{Sess: cs}
	l := list(t, c)
	f := l.Files[2] // run.1.vrlog
	writeLog(t, filepath.Join(dir, "other.vrlog"), 300)
	os.Rename(filepath.Join(dir, "other.vrlog"), filepath.Join(dir, f.Name))
	c.List(context.Background(), "gpu-box") // the server looks again
	dst := filepath.Join(t.TempDir(), f.Name)
	if _, err := c.Fetch(context.Background(), "gpu-box", f, dst, false, nil); !errors.Is(err, ErrChanged) {
		t.Fatalf("fetch of a replaced file: %v, want ErrChanged", err)
	}
	noLeftovers(t, filepath.Dir(dst), 0)
}

// A full disk (writes past RLIMIT_FSIZE fail with EFBIG, as ENOSPC would)
// fails the fetch and leaves nothing half-written.
func TestFetchDiskFull(t *testing.T) {
	_, _, cs := serving(t)
	c := &Client{Sess: cs, Chunk: 64 << 10}
	l := list(t, c)
	f := l.Files[1]
	dst := filepath.Join(t.TempDir(), f.Name)
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
	lim := old
	lim.Cur = 256 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	_, err := c.Fetch(context.Background(), "gpu-box", f, dst, false, nil)
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	var we *writeError
	if !errors.As(err, &we) || !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("fetch onto a full disk: %v", err)
	}
	noLeftovers(t, filepath.Dir(dst), 0)
}

// A collector that cannot reach the recorder says so after its patience,
// naming the recorder.
func TestNoAnswer(t *testing.T) {
	_, cs := sessions(t)
	c := &Client{Sess: cs, Timeout: 200 * time.Millisecond, Patience: time.Second}
	p := &Progress{}
	start := time.Now()
	_, err := c.Collect(context.Background(), []string{"nobody"}, CollectOptions{Out: t.TempDir()}, []*Progress{p})
	if !errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "nobody") || time.Since(start) > 10*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func sameBytes(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Fatalf("%s (%d bytes) and %s (%d bytes) differ", a, len(x), b, len(y))
	}
}

// noLeftovers checks dir holds n files and no partial or temporary one.
func noLeftovers(t *testing.T, dir string, n int) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			t.Fatalf("%s holds %s", dir, e.Name())
		}
	}
	if len(names) != n {
		t.Fatalf("%s holds %v, want %d files", dir, names, n)
	}
}

func waitUntil(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !ok(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// list lists gpu-box's files once its queryable is known to the
// collector's session.
func list(t *testing.T, c *Client) Listing {
	t.Helper()
	var l Listing
	var err error
	waitUntil(t, 10*time.Second, "the recorder's listing", func() bool {
		l, err = c.List(context.Background(), "gpu-box")
		return err == nil
	})
	return l
}

// A collection of one recording whose file is still being finished (its
// recorder answered the stop, then writes the index and syncs) waits for
// it and fetches it, and only it.
func TestCollectWaitsForTheRecordingsFile(t *testing.T) {
	dir, _, cs := serving(t)
	w, err := logfmt.Create(filepath.Join(dir, "rec.vrlog"), logfmt.WriterOptions{Metadata: map[string]string{"recording": "r1"}})
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state"})
	if err := w.Write(&logfmt.Record{Channel: ch, RecvWallNs: 1, RecvMonoNs: 1, Payload: []byte("s")}); err != nil {
		t.Fatal(err)
	}
	c := &Client{Sess: cs, Timeout: 5 * time.Second, Patience: 30 * time.Second}
	waitUntil(t, 10*time.Second, "the recorder's token", func() bool { n, _ := c.Discover(context.Background(), time.Second); return len(n) == 1 })
	p := &Progress{Name: "gpu-box"}
	done := make(chan []Collection, 1)
	go func() {
		cols, err := c.Collect(context.Background(), []string{"gpu-box"}, CollectOptions{Out: t.TempDir(), Recording: map[string]string{"gpu-box": "rec.vrlog"}}, []*Progress{p})
		if err != nil {
			t.Error(err)
		}
		done <- cols
	}()
	waitUntil(t, 10*time.Second, "the collection to wait", func() bool { return strings.Contains(p.State(), "rec.vrlog is being finished") })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cols := <-done
	if len(cols) != 1 || len(cols[0].Files) != 1 || cols[0].Files[0].Name != "rec.vrlog" {
		t.Fatalf("collected %+v", cols)
	}
	sameBytes(t, filepath.Join(dir, "rec.vrlog"), cols[0].Files[0].Path)
}

// More requests at once than the server queues (a client whose window is
// far past any default): the ones beyond the queue are answered busy at
// once, the client asks them again, and the file arrives whole.
func TestFloodAnsweredBusy(t *testing.T) {
	dir, _, cs := serving(t)
	var busy []error
	var mu sync.Mutex
	c := &Client{Sess: cs, Chunk: 1 << 10, Window: 4 * queued, OnWait: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			busy = append(busy, err)
		}
	}}
	var f File
	for _, g := range list(t, c).Files {
		if g.Name == "run.0.vrlog" { // 2 MiB: 2048 requests of 1 KiB
			f = g
		}
	}
	dst := filepath.Join(t.TempDir(), f.Name)
	if _, err := c.Fetch(context.Background(), "gpu-box", f, dst, false, nil); err != nil {
		t.Fatal(err)
	}
	sameBytes(t, filepath.Join(dir, f.Name), dst)
	mu.Lock()
	defer mu.Unlock()
	var re *RemoteError
	if len(busy) == 0 || !errors.As(busy[0], &re) || re.Code != CodeBusy {
		t.Fatalf("waits %v: want the requests beyond the queue answered busy", busy)
	}
}

// Await returns as soon as every name asked for serves files (collect
// NAME goes on without Discover's settling), and at its timeout says
// which do not, beside those that do.
func TestAwait(t *testing.T) {
	_, _, cs := serving(t)
	c := &Client{Sess: cs}
	start := time.Now()
	absent, _, err := c.Await(context.Background(), []string{"gpu-box"}, 10*time.Second)
	if err != nil || len(absent) != 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("Await(gpu-box): absent %v, %v, after %v", absent, err, time.Since(start))
	}
	absent, serving, err := c.Await(context.Background(), []string{"gpu-box", "nosuch"}, time.Second)
	if err != nil || !slices.Equal(absent, []string{"nosuch"}) || !slices.Equal(serving, []string{"gpu-box"}) {
		t.Fatalf("Await(gpu-box, nosuch): absent %v, serving %v, %v", absent, serving, err)
	}
}
