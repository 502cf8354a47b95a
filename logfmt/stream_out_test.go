package logfmt

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/outfile/outfiletest"
)

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
		fifo := outfiletest.Mkfifo(t, "pipe")
		saved := outfiletest.Reader(fifo)
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
		p := tempPath(t, "saved.vrlog")
		os.WriteFile(p, b, 0o644)
		if n, err := ReadBack(p); err != nil || n != 500 {
			t.Fatalf("policy %d: the saved stream reads back %d records: %v", pol, n, err)
		}
		outfiletest.IsFIFO(t, fifo)
	}
}

// Onto a null device: no sync error, the node intact, Remove leaves it;
// onto a full device: the write fails with ENOSPC.
func TestCreateOntoDevices(t *testing.T) {
	null := outfiletest.Mknod(t, "null", outfiletest.NullMinor)
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
	outfiletest.IsDevice(t, null, outfiletest.NullMinor)
	full := outfiletest.Mknod(t, "full", outfiletest.FullMinor)
	w, err = Create(full, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSome(t, w, 300); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("onto a full device: %v", err)
	}
	outfiletest.IsDevice(t, full, outfiletest.FullMinor)
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
