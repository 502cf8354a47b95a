package logfmt

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// A log's chunks read back (ReadChunk) are written into another log as a
// memory writer's are: the window's records exactly, whole chunks byte
// for byte; a damaged payload is refused, not copied.
func TestReadChunkCopiesAWindow(t *testing.T) {
	chs := memoryTestChannels()
	recs := memoryTestRecords(3000)
	src := tempPath(t, "journal.vrlog")
	w, err := Create(src, WriterOptions{ChunkSize: 64 << 10, FlushInterval: -1, CreatedAt: fixedTime})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chs {
		if _, err := w.AddChannel(c); err != nil {
			t.Fatal(err)
		}
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(src, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Chunks()) < 10 {
		t.Fatalf("%d chunks; want many small ones", len(r.Chunks()))
	}
	from, to := recs[700].RecvMonoNs+1, recs[2100].RecvMonoNs
	dst := tempPath(t, "final.vrlog")
	out, err := Create(dst, WriterOptions{CreatedAt: fixedTime})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chs {
		if _, err := out.AddChannel(c); err != nil {
			t.Fatal(err)
		}
	}
	var buf *Chunk
	var n uint64
	whole := 0
	for i := range r.Chunks() {
		if buf, err = r.ReadChunk(i, buf); err != nil {
			t.Fatal(err)
		}
		k, err := out.WriteChunk(buf, from, to)
		if err == nil {
			err = out.Flush() // before buf is reused
		}
		if err != nil {
			t.Fatal(err)
		}
		n += k
		if info := buf.Info(); info.MinMonoNs >= from && info.MaxMonoNs <= to {
			whole++
		}
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	var want []Record
	for _, x := range recs {
		if x.RecvMonoNs >= from && x.RecvMonoNs <= to {
			want = append(want, x)
		}
	}
	if got, err := ReadBack(dst); err != nil || got != n || n != uint64(len(want)) {
		t.Fatalf("read back %d (%v), wrote %d, want %d", got, err, n, len(want))
	}
	rd, err := Open(dst, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	got := readAll(t, rd, Filter{})
	for i := range want {
		checkRecord(t, &got[i], &want[i], false)
	}
	srcBytes, _ := os.ReadFile(src)
	dstBytes, _ := os.ReadFile(dst)
	c5 := r.Chunks()[len(r.Chunks())/2] // inside the window
	if whole == 0 || !bytes.Contains(dstBytes, srcBytes[c5.Offset:c5.Offset+c5.Size()]) {
		t.Fatalf("%d chunks inside the window; the middle one is not in the copy byte for byte", whole)
	}

	// A flipped payload byte: the chunk is refused.
	c := r.Chunks()[3]
	srcBytes[c.Offset+c.Size()-1] ^= 0xff
	bad := tempPath(t, "bad.vrlog")
	writeFile(t, bad, srcBytes)
	rb, err := Open(bad, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	var ce *CorruptionError
	if _, err := rb.ReadChunk(3, nil); !errors.As(err, &ce) || !errors.Is(err, ErrBadCRC) {
		t.Fatalf("damaged chunk: %v, want a CRC error", err)
	}
}
