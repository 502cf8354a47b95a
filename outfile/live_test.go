package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/outfile/outfiletest"
)

// A live file is locked while it is written: a second writer is refused,
// Force or not, naming this process; a reader can tell it is live; once
// closed, Force replaces it with a new inode and a reader of the old one
// keeps what it had.
func TestLiveFileIsLocked(t *testing.T) {
	p := filepath.Join(t.TempDir(), "live.vrlog")
	l, err := CreateLive(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Regular() {
		t.Fatal("a regular file is not Regular")
	}
	l.Write([]byte("first"))
	l.Sync()
	for _, force := range []bool{false, true} {
		_, err := CreateLive(p, Options{Force: force})
		var le *LockedError
		if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || le.PID != os.Getpid() {
			t.Fatalf("second writer (force %v): %v", force, err)
		}
		if !strings.Contains(err.Error(), "being written by PID") {
			t.Fatalf("message %q", err)
		}
	}
	r, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if held, pid, _ := Holder(r); !held || pid != os.Getpid() {
		t.Fatalf("Holder of a live file: %v %d", held, pid)
	}
	if got := leftovers(t, filepath.Dir(p)); len(got) != 1 {
		t.Fatalf("left %v", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if held, _, _ := Holder(r); held {
		t.Fatal("a closed file still held")
	}
	if _, err := CreateLive(p, Options{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("replacing without Force: %v", err)
	}
	l2, err := CreateLive(p, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	l2.Write([]byte("second"))
	l2.Sync()
	a, _ := r.Stat()
	b, _ := os.Stat(p)
	if os.SameFile(a, b) {
		t.Fatal("the replaced file is the same inode (truncated in place)")
	}
	buf := make([]byte, 16)
	if n, _ := r.ReadAt(buf, 0); string(buf[:n]) != "first" {
		t.Fatalf("the old inode holds %q", buf[:n])
	}
}

// A link to a live file is followed: the lock is found through it.
func TestLiveThroughALink(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "real.vrlog")
	link := filepath.Join(dir, "link.vrlog")
	os.Symlink("real.vrlog", link)
	l, err := CreateLive(link, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal("the target was not created")
	}
	if _, err := CreateLive(p, Options{Force: true}); !errors.Is(err, ErrLocked) {
		t.Fatalf("through the target: %v", err)
	}
}

func TestLiveOnDevicesAndFIFOs(t *testing.T) {
	null := outfiletest.Mknod(t, "null", outfiletest.NullMinor)
	l, err := CreateLive(null, Options{}) // no Force
	if err != nil {
		t.Fatal(err)
	}
	if l.Regular() {
		t.Fatal("a device is Regular")
	}
	l.Write([]byte("x"))
	if err := l.Finish(); err != nil {
		t.Fatalf("finish on a null device: %v", err)
	}
	l.Remove() // never removes a device
	outfiletest.IsDevice(t, null, outfiletest.NullMinor)

	fifo := outfiletest.Mkfifo(t, "fifo")
	done := outfiletest.Reader(fifo)
	l, err = CreateLive(fifo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Write(make([]byte, 100<<10))
	if err := l.Finish(); err != nil {
		t.Fatalf("finish on a FIFO: %v", err)
	}
	if b := <-done; len(b) != 100<<10 {
		t.Fatalf("reader got %d bytes", len(b))
	}
	outfiletest.IsFIFO(t, fifo)
}
