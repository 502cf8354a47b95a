//go:build linux

package logfmt

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// writeDirectMix writes records of 0 B to 3 direct buffers (small states,
// frames crossing the 8 MiB buffer and 4 KiB block boundaries) on an
// uncompressed and a zstd channel, flushing at some points, and returns
// the file's bytes after each flush and at the end.
func writeDirectMix(t *testing.T, direct bool) (atFlush [][]byte, final []byte) {
	t.Helper()
	path := tempPath(t, "direct.vrlog")
	w, err := Create(path, WriterOptions{ChunkSize: 1 << 20, FlushInterval: -1, CreatedAt: fixedTime, DirectIO: direct})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.owned.(*directFile); ok != direct {
		t.Fatalf("DirectIO %v: the file is written through %T", direct, w.owned)
	}
	w.AddChannel(Channel{Name: "cam", Transport: TransportIceoryx2})
	w.AddChannel(Channel{Name: "state", Transport: TransportZenoh, Compression: zstd1})
	recs := directMix()
	for i := range recs {
		if err := w.WriteOwned(&recs[i], func() {}); err != nil {
			t.Fatal(err)
		}
		if i%13 == 5 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			atFlush = append(atFlush, b)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	final, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return atFlush, final
}

// directMix is 60 records of 0 B to 3 direct buffers (small states, frames
// crossing the buffer and 4 KiB block boundaries) on channels 1 and 2.
func directMix() []Record {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{0, 1, 4095, 4096, 4097, directBufSize - 1, directBufSize, directBufSize + 1, 2*directBufSize + 5, 6 << 20}
	recs := make([]Record, 60)
	for i := range recs {
		recs[i] = genRecord(rng, uint16(1+i%2), i, int64(1e9+i*1e6), 300)
		if i%4 == 0 {
			recs[i].Payload = make([]byte, sizes[(i/4)%len(sizes)])
			for k := range recs[i].Payload {
				recs[i].Payload[k] = byte(k*7 + i)
			}
		}
	}
	return recs
}

// TestDirectIOSameFile: a file written with O_DIRECT has the very bytes of
// one written through the page cache, at every Flush (a live reader sees
// everything written so far) and at the end; and it reads back.
func TestDirectIOSameFile(t *testing.T) {
	probe := tempPath(t, "probe")
	f, err := os.Create(probe)
	if err != nil {
		t.Fatal(err)
	}
	d := openDirect(f, probe)
	if d == nil {
		t.Fatalf("the test directory's filesystem refuses O_DIRECT (%s): the direct path is not tested", probe)
	}
	d.Close()
	bufFlush, bufFinal := writeDirectMix(t, false)
	dirFlush, dirFinal := writeDirectMix(t, true)
	if len(bufFlush) != len(dirFlush) {
		t.Fatalf("%d vs %d flushes", len(bufFlush), len(dirFlush))
	}
	for i := range bufFlush {
		if !bytes.Equal(bufFlush[i], dirFlush[i]) {
			t.Fatalf("flush %d: %d bytes direct, %d buffered, or different bytes", i, len(dirFlush[i]), len(bufFlush[i]))
		}
	}
	if !bytes.Equal(bufFinal, dirFinal) {
		t.Fatalf("final file: %d bytes direct vs %d buffered, or different bytes", len(dirFinal), len(bufFinal))
	}
	path := tempPath(t, "copy.vrlog")
	if err := os.WriteFile(path, dirFinal, 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(path, ReaderOptions{}); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}

// TestDirectIOFallsBack: where the filesystem refuses O_DIRECT, Create
// writes through the page cache and the file is complete.
func TestDirectIOFallsBack(t *testing.T) {
	defer func(f func(string, int) (int, error)) { openFlags = f }(openFlags)
	openFlags = func(path string, flags int) (int, error) {
		if flags&unix.O_DIRECT != 0 {
			return -1, unix.EINVAL
		}
		return unix.Open(path, flags, 0)
	}
	path := tempPath(t, "x.vrlog")
	w, err := Create(path, WriterOptions{DirectIO: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.owned.(*directFile); ok {
		t.Fatal("O_DIRECT refused, yet the file is written directly")
	}
	id, _ := w.AddChannel(Channel{Name: "s", Transport: TransportZenoh})
	for i := 0; i < 100; i++ {
		if err := w.Write(&Record{Channel: id, RecvMonoNs: int64(i), Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n := r.Stats()[0].Records; n != 100 {
		t.Fatalf("%d records", n)
	}
}

// TestDirectIOFullDisk: a disk that fills up under direct writes (writes
// in flight at once, any of which may fail while a later one succeeds)
// leaves what a full disk leaves through the page cache: the error from
// Write, Flush or Close, and a file that is a prefix of the healthy one,
// whose records recover in order.
func TestDirectIOFullDisk(t *testing.T) {
	_, healthy := writeDirectMix(t, false)
	want := directMix()
	defer func(f func(int, []byte, int64) (int, error)) { pwriteFd = f }(pwriteFd)
	for _, limit := range []int64{0, 4096, 1 << 20, directBufSize + 4096, 3*directBufSize - 4096, int64(len(healthy)) / 2, int64(len(healthy)) - 8192} {
		pwriteFd = func(fd int, b []byte, off int64) (int, error) {
			if off+int64(len(b)) <= limit {
				return unix.Pwrite(fd, b, off)
			}
			if room := (limit - off) &^ (directAlign - 1); room > 0 {
				return unix.Pwrite(fd, b[:room], off)
			}
			return 0, unix.ENOSPC
		}
		path := tempPath(t, "full.vrlog")
		w, err := Create(path, WriterOptions{ChunkSize: 1 << 20, FlushInterval: -1, CreatedAt: fixedTime, DirectIO: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := w.owned.(*directFile); !ok {
			t.Fatalf("the file is written through %T", w.owned)
		}
		w.AddChannel(Channel{Name: "cam", Transport: TransportIceoryx2})
		w.AddChannel(Channel{Name: "state", Transport: TransportZenoh, Compression: zstd1})
		var sawErr error
		for i := range want {
			r := want[i]
			if sawErr = w.WriteOwned(&r, func() {}); sawErr != nil {
				break
			}
			if i%13 == 5 {
				if sawErr = w.Flush(); sawErr != nil {
					break
				}
			}
		}
		if err := w.Close(); sawErr == nil {
			sawErr = err
		}
		if !errors.Is(sawErr, unix.ENOSPC) {
			t.Fatalf("limit %d: error %v, want ENOSPC", limit, sawErr)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) > limit+directBufSize || !bytes.Equal(b, healthy[:len(b)]) {
			t.Fatalf("limit %d: the file (%d bytes) is not a prefix of the healthy log", limit, len(b))
		}
		checkRecoveredPrefix(t, limit, b, want)
	}
}
