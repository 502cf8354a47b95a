package outfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vrlog/vrlog/outfile/outfiletest"
)

func TestDeviceIsWrittenInPlace(t *testing.T) {
	null := outfiletest.Mknod(t, "null", outfiletest.NullMinor)
	f, err := Create(null, Options{}) // a device needs no Force
	if err != nil {
		t.Fatal(err)
	}
	if !f.InPlace() || f.TempName() != "" {
		t.Fatalf("in place %v, temp %q", f.InPlace(), f.TempName())
	}
	f.Write(bytes.Repeat([]byte("x"), 3<<20))
	checked := false
	if err := f.CommitChecked(func(string) error { checked = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if checked {
		t.Error("read back a device")
	}
	outfiletest.IsDevice(t, null, outfiletest.NullMinor)
	if got := leftovers(t, filepath.Dir(null)); len(got) != 1 {
		t.Errorf("left %v", got)
	}
}

func TestFullDeviceFails(t *testing.T) {
	full := outfiletest.Mknod(t, "full", outfiletest.FullMinor)
	f, err := Create(full, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("report"))
	err = f.Commit()
	if !errors.Is(err, syscall.ENOSPC) || strings.Count(err.Error(), full) != 1 {
		t.Fatalf("commit onto a full device: %v", err)
	}
	outfiletest.IsDevice(t, full, outfiletest.FullMinor)
}

func TestFIFOIsWrittenInPlace(t *testing.T) {
	p := outfiletest.Mkfifo(t, "fifo")
	got := outfiletest.Reader(p)
	f, err := Create(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("a,b\n1,2\n"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "a,b\n1,2\n" {
		t.Fatalf("reader got %q", b)
	}
	outfiletest.IsFIFO(t, p)
}

func TestSocketIsWrittenInPlace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sock")
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(c)
		c.Close()
		got <- b
	}()
	f, err := Create(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("<html/>"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "<html/>" {
		t.Fatalf("listener got %q", b)
	}
	if st, _ := os.Lstat(p); st.Mode()&fs.ModeSocket == 0 {
		t.Fatalf("the socket became %v", st.Mode())
	}
}

// A link is followed: the target is written (next to it, then renamed),
// the link stays a link; a dangling link creates its target.
func TestSymlinkIsFollowed(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	tgt := filepath.Join(other, "report.csv")
	os.WriteFile(tgt, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.csv")
	os.Symlink(tgt, link)
	if _, err := Create(link, Options{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a link to an existing file without Force: %v", err)
	}
	f, err := Create(link, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(f.TempName()) != other {
		t.Fatalf("temporary file %s is not next to the target", f.TempName())
	}
	f.Write([]byte("new"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link became %v", st.Mode())
	}
	if b, _ := os.ReadFile(tgt); string(b) != "new" {
		t.Fatalf("target holds %q", b)
	}

	// Relative and dangling: the target is created where it points.
	dangling := filepath.Join(dir, "dangling")
	os.Symlink("sub/../made.csv", dangling)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	f, err = Create(dangling, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("made"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "made.csv")); string(b) != "made" {
		t.Fatalf("dangling link's target holds %q", b)
	}
	if st, _ := os.Lstat(dangling); st.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the dangling link was replaced")
	}
}

func TestDashIsStandardOutput(t *testing.T) {
	if _, err := Create("-", Options{}); err == nil {
		t.Fatal("- accepted with no standard output to write to")
	}
	var out bytes.Buffer
	f, err := Create("-", Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("csv"))
	if err := f.Commit(); err != nil || out.String() != "csv" {
		t.Fatalf("%v, %q", err, out.String())
	}
}

// Without Force, a file that appears while the output is written is not
// replaced at the commit (it links, it does not rename).
func TestCommitDoesNotReplaceALateFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out")
	f, err := Create(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("mine"))
	os.WriteFile(p, []byte("theirs"), 0o644)
	if err := f.Commit(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("commit over a file that appeared: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "theirs" {
		t.Fatalf("%q", b)
	}
	if got := leftovers(t, filepath.Dir(p)); len(got) != 1 {
		t.Fatalf("left %v", got)
	}
}

func TestCommitCheckedRefusesWhatDoesNotReadBack(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.vrlog")
	f, _ := Create(p, Options{})
	f.Write([]byte("bytes"))
	var seen string
	err := f.CommitChecked(func(tmp string) error {
		b, _ := os.ReadFile(tmp)
		seen = string(b)
		return errors.New("bad footer")
	})
	if err == nil || !strings.Contains(err.Error(), "does not read back, nothing written: bad footer") || seen != "bytes" {
		t.Fatalf("%v (read back %q)", err, seen)
	}
	if got := leftovers(t, filepath.Dir(p)); len(got) != 0 {
		t.Fatalf("left %v", got)
	}
}

func TestDirectoryAndBlockDeviceRefused(t *testing.T) {
	if _, err := Create(t.TempDir(), Options{Force: true}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("a directory: %v", err)
	}
}

// A name of an open descriptor (/dev/stdout onto `> file`, /proc/self/fd/N)
// is written in place: the file the process was given, not replaced, no
// Force needed.
func TestDescriptorNameIsWrittenInPlace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "redirected")
	given, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer given.Close()
	before, _ := given.Stat()
	name := "/proc/self/fd/" + strconv.Itoa(int(given.Fd()))
	if _, err := os.Stat(name); err != nil {
		t.Skipf("no %s: %v", name, err)
	}
	f, err := Create(name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !f.InPlace() {
		t.Fatal("a descriptor's file is replaced")
	}
	f.Write([]byte("log"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) {
		t.Fatal("the redirected file was replaced")
	}
	if b, _ := os.ReadFile(p); string(b) != "log" {
		t.Fatalf("%q", b)
	}
}
