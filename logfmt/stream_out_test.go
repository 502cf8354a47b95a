package logfmt

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mknod makes a private character device (1,3 null; 1,7 full) in the
// test's directory: never the machine's own /dev/null or /dev/full.
func mknod(t *testing.T, name string, major, minor int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("mknod %s: needs root (not a defect of the code under test)", name)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, major<<8|minor); err != nil {
		t.Skipf("mknod %s: %v (not a defect of the code under test)", name, err)
	}
	return p
}

// writeSome writes n records on one channel and closes w (also after
// an error: the first error is the result).
func writeSome(t *testing.T, w *Writer, n int) error {
	t.Helper()
	id, err := w.AddChannel(Channel{Name: "s", Schema: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.Write(&Record{Channel: id, RecvMonoNs: int64(i + 1), RecvWallNs: int64(i + 1), Payload: bytes.Repeat([]byte{byte(i)}, 3000)}); err != nil {
			w.Close()
			return err
		}
		if i%100 == 99 {
			if err := w.Flush(); err != nil {
				w.Close()
				return err
			}
		}
	}
	return w.Close()
}

// A log written onto a FIFO is written sequentially and completely: the
// reader of the pipe gets a finished log (footer, index) that verifies
// once saved, whatever the sync policy and with DirectIO asked for.
func TestCreateOntoAFIFO(t *testing.T) {
	for _, pol := range []SyncPolicy{SyncInterval, SyncOnFlush, SyncOnClose} {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "pipe")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		saved := make(chan []byte)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				saved <- nil
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			saved <- b
		}()
		w, err := Create(fifo, WriterOptions{Sync: pol, SyncInterval: 1, DirectIO: true, ChunkSize: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if w.Synced() {
			t.Error("the sync policy applies to a FIFO")
		}
		if err := writeSome(t, w, 500); err != nil {
			t.Fatalf("policy %d: %v", pol, err)
		}
		b := <-saved
		p := filepath.Join(dir, "saved.vrlog")
		os.WriteFile(p, b, 0o644)
		if n, err := ReadBack(p); err != nil || n != 500 {
			t.Fatalf("policy %d: the saved stream reads back %d records: %v", pol, n, err)
		}
		if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
			t.Fatalf("the FIFO became %v", st.Mode())
		}
	}
}

// Onto a null device: no sync error, the node intact, Remove leaves it;
// onto a full device: the write fails with ENOSPC.
func TestCreateOntoDevices(t *testing.T) {
	null := mknod(t, "null", 1, 3)
	w, err := Create(null, WriterOptions{Sync: SyncOnFlush, DirectIO: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSome(t, w, 300); err != nil {
		t.Fatalf("onto a null device: %v", err)
	}
	w, err = Create(null, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Remove()
	if st, err := os.Lstat(null); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("the null device after Remove: %v %v", st, err)
	}
	full := mknod(t, "full", 1, 7)
	w, err = Create(full, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSome(t, w, 300); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("onto a full device: %v", err)
	}
	if st, err := os.Lstat(full); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("the full device: %v %v", st, err)
	}
}

// Replacing a closed log with Overwrite makes a new inode: a reader of
// the old one keeps reading the old log, which is never truncated.
func TestCreateReplacesByRename(t *testing.T) {
	p := tempPath(t, "x.vrlog")
	w, _ := Create(p, WriterOptions{})
	writeSome(t, w, 10)
	r, err := Open(p, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err = Create(p, WriterOptions{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, r, Filter{})); n != 10 {
		t.Fatalf("the old log's reader got %d records after the replace", n)
	}
	writeSome(t, w, 3)
	if n, err := ReadBack(p); err != nil || n != 3 {
		t.Fatalf("the new log: %d, %v", n, err)
	}
}
