package logfmt

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/outfile"
)

// fullDisk accepts limit bytes, then fails like a full disk; the write
// that crosses the limit is short.
type fullDisk struct {
	buf   bytes.Buffer
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	room := d.limit - d.buf.Len()
	if room >= len(p) {
		return d.buf.Write(p)
	}
	if room > 0 {
		d.buf.Write(p[:room])
	} else {
		room = 0
	}
	return room, &pathError{syscall.ENOSPC}
}

type pathError struct{ err error }

func (e *pathError) Error() string { return "write log: " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// TestFullDisk fails the file after N bytes for many N and checks that
// the error surfaces from Write, Flush or Close, and that the bytes on
// "disk" read back up to the last complete chunk.
func TestFullDisk(t *testing.T) {
	full, want := smallLog(t)
	step := 13
	if testing.Short() {
		step = 97
	}
	for limit := 0; limit < len(full)+10; limit += step {
		d := &fullDisk{limit: limit}
		w, err := NewWriter(d, WriterOptions{ChunkSize: 600, FlushInterval: -1, CreatedAt: fixedTime, Concurrency: 2})
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("limit %d: NewWriter: %v", limit, err)
			}
			continue
		}
		var sawErr error
		st, err1 := w.AddChannel(Channel{Name: "state", Transport: TransportZenoh, Topic: "vr/r1/state", Schema: "vrsdk.State/1", Compression: zstd1})
		fr, err2 := w.AddChannel(Channel{Name: "cam", Transport: TransportIceoryx2, Topic: "cam0", Schema: "vrsdk.Frame/1"})
		// The channel blocks are written asynchronously: a disk that filled
		// on the first one may already fail the second AddChannel.
		if err := errors.Join(err1, err2); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("limit %d: add channel: %v", limit, err)
			}
			sawErr = err
		} else if st != 1 || fr != 2 {
			t.Fatalf("limit %d: channel ids %d, %d", limit, st, fr)
		}
		for i := 0; i < len(want) && sawErr == nil; i++ {
			if err := w.Write(&want[i]); err != nil {
				sawErr = err
				break
			}
			if i == 20 {
				w.AddDrops(st, 2)
				if err := w.Flush(); err != nil {
					sawErr = err
					break
				}
			}
		}
		cerr := w.Close()
		if sawErr == nil {
			sawErr = cerr
		}
		if limit < len(full) {
			if !errors.Is(sawErr, syscall.ENOSPC) {
				t.Fatalf("limit %d: error %v, want ENOSPC", limit, sawErr)
			}
		} else if sawErr != nil {
			t.Fatalf("limit %d: %v", limit, sawErr)
		}
		b := d.buf.Bytes()
		if limit < len(full) && !bytes.Equal(b, full[:len(b)]) {
			t.Fatalf("limit %d: bytes written differ from a healthy run", limit)
		}
		checkRecoveredPrefix(t, int64(limit), b, want)
	}
}

// checkRecoveredPrefix: a file cut short at limit (b, its bytes) recovers
// to a prefix of want, every record intact.
func checkRecoveredPrefix(t *testing.T, limit int64, b []byte, want []Record) {
	t.Helper()
	if len(b) < preludeSize {
		return // nothing to recover (TestTruncateEveryOffset)
	}
	rec, rep := recoverBytes(t, b)
	got := readAll(t, mustOpen(t, rec), Filter{})
	if uint64(len(got)) != rep.RecordsKept {
		t.Fatalf("limit %d: read %d, kept %d", limit, len(got), rep.RecordsKept)
	}
	for i := range got {
		checkRecord(t, &got[i], &want[i], false)
	}
}

// TestWriterErrorsAndOptions covers the API edges.
func TestWriterErrorsAndOptions(t *testing.T) {
	path := tempPath(t, "x.vrlog")
	w, err := Create(path, WriterOptions{FlushInterval: 5 * time.Millisecond, Sync: SyncInterval, SyncInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, over := range []bool{false, true} { // a live log: locked, never replaced
		if _, err := Create(path, WriterOptions{Overwrite: over}); !errors.Is(err, outfile.ErrLocked) {
			t.Fatalf("Create over a live log (Overwrite %v): %v", over, err)
		}
	}
	id, _ := w.AddChannel(Channel{Name: "a"})
	if _, err := w.AddChannel(Channel{Name: "a"}); err == nil {
		t.Fatal("duplicate name accepted")
	}
	if _, err := w.AddChannel(Channel{Name: "b", Compression: Compression{Kind: CompressionZstd, Level: 9}}); err == nil {
		t.Fatal("bad level accepted")
	}
	if err := w.Write(&Record{Channel: 9}); !errors.Is(err, ErrUnknownChannel) {
		t.Fatalf("unknown channel: %v", err)
	}
	if err := w.Write(&Record{Channel: id, PublisherID: make([]byte, 65)}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("long publisher id: %v", err)
	}
	if err := w.Write(&Record{Channel: id, RecvMonoNs: 5, Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	// The flush timer writes the chunk without an explicit Flush.
	deadline := time.Now().Add(2 * time.Second)
	for w.Stats().Chunks == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if s := w.Stats(); s.Chunks != 1 || s.Records != 1 {
		t.Fatalf("flush interval: stats %+v", s)
	}
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, r, Filter{})); n != 1 {
		t.Fatalf("read %d records from a live file", n)
	}
	if bw := r.BeingWritten(); !strings.Contains(bw, "being written by PID") {
		t.Fatalf("a live file's reader says %q", bw)
	}
	r.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path, WriterOptions{}); !errors.Is(err, ErrExists) {
		t.Fatalf("Create over a closed log: %v", err)
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if err := w.Write(&Record{Channel: id}); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
}
