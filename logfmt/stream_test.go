package logfmt

import (
	"errors"
	"os"
	"testing"
)

// TestStreamedChunkDamage: a chunk whose record metadata passes its CRC
// but disagrees with its prefix (a writer's bug, a crafted file) stops a
// strict iteration, which streams chunks, with a CorruptionError at the
// record metadata's offset; a tolerant one skips that chunk whole and
// goes on.
func TestStreamedChunkDamage(t *testing.T) {
	none := Compression{}
	path := tempPath(t, "stream.vrlog")
	w, err := Create(path, WriterOptions{ChunkSize: 2000, FlushInterval: -1, CreatedAt: fixedTime, MetaCompression: &none})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := w.AddChannel(Channel{Name: "s"})
	for i := 0; i < 60; i++ {
		if err := w.Write(&Record{Channel: id, RecvMonoNs: int64(i) * 1e6, RecvWallNs: 1e18 + int64(i)*1e6, Payload: make([]byte, 100)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	chunks := mustOpen(t, b).Chunks()
	if len(chunks) < 3 {
		t.Fatalf("%d chunks, want 3 or more", len(chunks))
	}
	// Chunk 1 claims one record more than its metadata holds.
	c := chunks[1]
	meta := b[c.Offset+blockHeaderSize : c.Offset+blockHeaderSize+int64(c.MetaLen)]
	le.PutUint32(meta[0:], le.Uint32(meta[0:])+1)
	hdr := b[c.Offset : c.Offset+blockHeaderSize]
	le.PutUint32(hdr[16:], crc(meta))
	le.PutUint32(hdr[20:], crc(hdr[:20]))
	metaAt := c.Offset + blockHeaderSize + chunkPrefixSize + groupEntrySize // one payload block

	for _, meta := range []bool{true, false} {
		r := mustOpen(t, b)
		it := r.Records(Filter{MetaOnly: meta})
		n := 0
		for it.Next() {
			n++
		}
		var ce *CorruptionError
		if !errors.As(it.Err(), &ce) || !errors.Is(ce, ErrMalformed) || ce.Offset != metaAt {
			t.Fatalf("meta-only %v: strict read ends with %v, want ErrMalformed at %d", meta, it.Err(), metaAt)
		}
		// The damage is found in the batch holding the chunk's last
		// record, which is dropped: here the whole (small) chunk.
		if want := int(chunks[0].Records); n != want {
			t.Fatalf("meta-only %v: strict read returned %d records before the error, want %d", meta, n, want)
		}

		tr, err := openBytes(b, ReaderOptions{Tolerant: true})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, tr, Filter{MetaOnly: meta})
		if want := 60 - int(chunks[1].Records); len(got) != want || len(tr.SkippedChunks()) != 1 {
			t.Fatalf("meta-only %v: tolerant read returned %d records, skipped %d chunks; want %d and 1", meta, len(got), len(tr.SkippedChunks()), want)
		}
		tr.Close()
	}
}
