package outfile

import (
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vrlog/vrlog/outfile/outfiletest"
)

// leftovers lists the files of dir (temporary ones included).
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestCommitHonoursUmask(t *testing.T) {
	for _, mask := range []int{0o022, 0o077} {
		old := syscall.Umask(mask)
		dir := t.TempDir()
		p := filepath.Join(dir, "out.csv")
		f, err := Create(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("a,b\n"))
		if got := leftovers(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], ".out.csv.tmp-") {
			t.Fatalf("while writing: %v", got)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		syscall.Umask(old)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := fs.FileMode(0o666 &^ mask); st.Mode().Perm() != want {
			t.Errorf("umask %03o: mode %v, want %v", mask, st.Mode().Perm(), want)
		}
		if b, _ := os.ReadFile(p); string(b) != "a,b\n" {
			t.Errorf("content %q", b)
		}
		if got := leftovers(t, dir); len(got) != 1 {
			t.Errorf("after commit: %v", got)
		}
		f.Abort() // no-op after Commit
		if _, err := os.Stat(p); err != nil {
			t.Error("Abort after Commit removed the output")
		}
	}
}

func TestExistsAndForce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x")
	os.WriteFile(p, []byte("old"), 0o644)
	if _, err := Create(p, Options{}); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), p) {
		t.Fatalf("existing output: %v", err)
	}
	if _, err := Create(dir, Options{Force: true}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("a directory as output: %v", err)
	}
	f, err := Create(p, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("%q", b)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "out"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	if got := leftovers(t, dir); len(got) != 0 {
		t.Fatalf("left %v", got)
	}
}

// A write beyond the file size limit fails like a full disk (EFBIG): the
// error names the output, Commit fails, nothing is left.
// limitFileSize limits the files the process writes to 64 KiB (writes
// beyond fail with EFBIG) until restore.
func limitFileSize(t *testing.T) (restore func()) {
	signal.Ignore(syscall.SIGXFSZ)
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
	lim := old
	lim.Cur = 64 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		signal.Reset(syscall.SIGXFSZ)
		t.Skipf("setrlimit: %v", err) // not a defect of the code under test: the test needs the limit
	}
	return func() {
		syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
		signal.Reset(syscall.SIGXFSZ)
	}
}

func TestWriteErrorFailsCommit(t *testing.T) {
	restore := limitFileSize(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "big")
	f, err := Create(p, Options{})
	if err != nil {
		restore()
		t.Fatal(err)
	}
	buf := make([]byte, 4<<20)
	_, werr := f.Write(buf)
	cerr := f.Commit()
	restore()
	if werr == nil && cerr == nil {
		t.Fatal("writing past the file size limit succeeded")
	}
	if cerr == nil || !strings.Contains(cerr.Error(), p) || strings.Count(cerr.Error(), p) != 1 {
		t.Fatalf("commit: %v (want the path named once)", cerr)
	}
	if got := leftovers(t, dir); len(got) != 0 {
		t.Fatalf("left %v", got)
	}
}

func TestStreamReportsAFullDisk(t *testing.T) {
	full, err := os.OpenFile(outfiletest.Mknod(t, "full", outfiletest.FullMinor), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	s := NewStream(full)
	s.Write([]byte("report\n"))
	if err := s.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close: %v, want ENOSPC", err)
	}
	if _, err := s.Write([]byte("x")); err == nil {
		t.Fatal("a write after the error succeeded")
	}
}

func TestDirAbortRemovesWhatItCreated(t *testing.T) {
	base := t.TempDir()
	p := filepath.Join(base, "timing")
	d, err := CreateDir(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := d.Create("a.csv")
	f.Write([]byte("x"))
	d.Abort()
	if got := leftovers(t, base); len(got) != 0 {
		t.Fatalf("left %v", got)
	}
	// Committed: both files, no temporary names.
	d, _ = CreateDir(p, Options{})
	for _, n := range []string{"a.csv", "b.csv"} {
		f, _ := d.Create(n)
		f.Write([]byte(n))
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := leftovers(t, p); strings.Join(got, " ") != "a.csv b.csv" {
		t.Fatalf("committed %v", got)
	}
	os.WriteFile(filepath.Join(base, "file"), nil, 0o644)
	if _, err := CreateDir(filepath.Join(base, "file"), Options{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a file as directory: %v", err)
	}
}

// A directory whose second file fails to finish (a full disk shows at the
// flush or fsync) is left with nothing: not the first file, committed on
// its own, nor the directory it created.
func TestDirCommitAllOrNothing(t *testing.T) {
	base := t.TempDir()
	d, err := CreateDir(filepath.Join(base, "timing"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := d.Create("a.csv")
	a.Write([]byte("a"))
	b, _ := d.Create("b.csv")
	b.Write([]byte("b"))
	b.f.Close() // its flush and fsync fail, as on a full disk
	if err := d.Commit(); err == nil {
		t.Fatal("committed a directory with a file that could not be written")
	}
	if got := leftovers(t, base); len(got) != 0 {
		t.Fatalf("left %v", got)
	}
}

func TestDiscard(t *testing.T) {
	base := t.TempDir()
	d, _ := CreateDir(filepath.Join(base, "dir"), Options{})
	g, _ := d.Create("x.csv")
	g.Write([]byte("x"))
	sub, _ := CreateDir(filepath.Join(base, "dir", "sub"), Options{}) // removed before dir
	h, _ := sub.Create("y.parquet")
	h.Write([]byte("y"))
	f, _ := Create(filepath.Join(base, "out"), Options{})
	f.Write([]byte("x"))
	if n := Discard(); n < 3 {
		t.Fatalf("Discard removed %d files", n)
	}
	if got := leftovers(t, base); len(got) != 0 {
		t.Fatalf("left %v", got)
	}
	if err := f.Commit(); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("commit after Discard: %v", err)
	}
	live.mu.Lock()
	live.discarded = false // this process goes on testing
	live.mu.Unlock()
}

func TestLiveIsReadableWhileWritten(t *testing.T) {
	p := filepath.Join(t.TempDir(), "truth.jsonl")
	l, err := CreateLive(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 99) + "\n")
	for range 100 {
		l.Write(line)
	}
	if b, _ := os.ReadFile(p); len(b) < 8<<10 {
		t.Fatalf("%d bytes visible while writing 10000", len(b))
	}
	if err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); len(b) != 10000 {
		t.Fatalf("%d bytes after Finish", len(b))
	}
	full := outfiletest.Mknod(t, "full", outfiletest.FullMinor)
	l, err = CreateLive(full, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Write(line)
	if err := l.Finish(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close on a full device: %v", err)
	}
}

// WriteBuffers writes after what Write buffered, in order, however many
// buffers (more than one writev takes) and with empty ones among them.
func TestWriteBuffers(t *testing.T) {
	p := filepath.Join(t.TempDir(), "vec")
	f, err := Create(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	f.Write([]byte("head:"))
	want = append(want, "head:"...)
	var bufs [][]byte
	for i := range 3000 {
		b := []byte(strings.Repeat(string(rune('a'+i%26)), i%5))
		bufs = append(bufs, b)
		want = append(want, b...)
	}
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 31)
	}
	bufs = append(bufs, big, nil)
	want = append(want, big...)
	if n, err := f.WriteBuffers(bufs); err != nil || n != int64(len(want)-len("head:")) {
		t.Fatalf("WriteBuffers: %d, %v", n, err)
	}
	f.Write([]byte(":tail"))
	want = append(want, ":tail"...)
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("file of %d bytes differs from the %d written", len(got), len(want))
	}
}

// A failing vectored write fails the commit and leaves nothing.
func TestWriteBuffersErrorFailsCommit(t *testing.T) {
	restore := limitFileSize(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "big")
	f, err := Create(p, Options{})
	if err != nil {
		restore()
		t.Fatal(err)
	}
	_, werr := f.WriteBuffers([][]byte{make([]byte, 1<<20), make([]byte, 1<<20)})
	_, werr2 := f.Write([]byte("x"))
	cerr := f.Commit()
	restore()
	if werr == nil || werr2 == nil || cerr == nil {
		t.Fatalf("writing past the file size limit: %v, then %v, commit %v", werr, werr2, cerr)
	}
	if !strings.Contains(cerr.Error(), p) || strings.Count(cerr.Error(), p) != 1 {
		t.Fatalf("commit: %v (want the path named once)", cerr)
	}
	if got := leftovers(t, dir); len(got) != 0 {
		t.Fatalf("left %v", got)
	}
}

// One rule for every output: its directory must exist (a file's, and a
// CSV directory's parent), else ErrNoDir naming it; nothing is created.
// (CSV export created missing directories, MCAP export failed.)
func TestMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	if _, err := Create(filepath.Join(missing, "x.mcap"), Options{}); !errors.Is(err, ErrNoDir) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("a file: %v", err)
	}
	if _, err := CreateDir(filepath.Join(missing, "csv"), Options{}); !errors.Is(err, ErrNoDir) {
		t.Fatalf("a directory: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s was created: %v", missing, err)
	}
	d, err := CreateDir(filepath.Join(dir, "csv"), Options{}) // its parent exists: created
	if err != nil {
		t.Fatal(err)
	}
	d.Abort()
	d, err = CreateDir(filepath.Join(dir, "csv")+"/", Options{}) // -o timing/: its parent is dir, not timing
	if err != nil {
		t.Fatalf("a trailing slash: %v", err)
	}
	d.Abort()
}
