package logfmt

import (
	"math/rand"
	"testing"
)

// TestSealAhead: chunks of small records sealed ahead of large chunks
// still being compressed (slow zstd, one worker) land in a sound file that
// reads back complete and in receive order, a channel defined behind a
// chunk being compressed included.
func TestSealAhead(t *testing.T) {
	path := tempPath(t, "ahead.vrlog")
	w, err := Create(path, WriterOptions{Concurrency: 1, MaxChunksInFlight: 1, ChunkSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	frames, err := w.AddChannel(Channel{Name: "cam", Compression: Compression{Kind: CompressionZstd, Level: 4}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	frame := make([]byte, 512<<10)
	for i := range frame {
		frame[i] = byte(i/1024) + byte(rng.Intn(4))
	}
	want := 0
	var states uint16
	for i := range 6 {
		// a frame received long ago (sealed by size), then newer states
		if err := w.Write(&Record{Channel: frames, RecvMonoNs: int64(i) * 1e6, Payload: frame}); err != nil {
			t.Fatal(err)
		}
		if i == 0 { // defined behind a chunk being compressed: its definition goes ahead with it
			if states, err = w.AddChannel(Channel{Name: "state", Compression: Compression{Kind: CompressionZstd, Level: 1}}); err != nil {
				t.Fatal(err)
			}
		}
		for k := range 50 {
			if err := w.Write(&Record{Channel: states, RecvMonoNs: int64(i)*1e6 + 3e9 + int64(k), Payload: frame[k : k+200]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.SealAhead(); err != nil {
			t.Fatal(err)
		}
		want += 51
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := readAll(t, r, Filter{MetaOnly: true})
	if len(got) != want {
		t.Fatalf("read %d records, wrote %d", len(got), want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].RecvMonoNs < got[i-1].RecvMonoNs {
			t.Fatalf("record %d received at %d read after one at %d", i, got[i].RecvMonoNs, got[i-1].RecvMonoNs)
		}
	}
	if rep, err := Verify(path, ReaderOptions{}); err != nil || !rep.OK() || rep.Records != uint64(want) {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// A chunk sealed ahead never passes a chunk of its own channel sealed in
// order (the flush timer's seal of a states chunk waiting behind a frame
// still compressing): each channel's chunks stay in receive order in the
// file, and the footer's statistics (first and last in file order) agree
// with a scan. Before, verify called such a recorder log malformed.
func TestSealAheadKeepsEachChannelInOrder(t *testing.T) {
	path := tempPath(t, "order.vrlog")
	w, err := Create(path, WriterOptions{Concurrency: 1, MaxChunksInFlight: 2, ChunkSize: 64 << 10, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	frames, _ := w.AddChannel(Channel{Name: "cam", Compression: Compression{Kind: CompressionZstd, Level: 4}})
	states, _ := w.AddChannel(Channel{Name: "state", Compression: Compression{Kind: CompressionZstd, Level: 1}})
	rng := rand.New(rand.NewSource(2))
	frame := make([]byte, 2<<20)
	for i := range frame {
		frame[i] = byte(rng.Intn(256))
	}
	at := int64(0)
	write := func(ch uint16, p []byte) {
		at += 1000
		if err := w.Write(&Record{Channel: ch, RecvMonoNs: at, RecvWallNs: at, Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		write(frames, frame) // sealed by size: compressing, slowly
		write(states, frame[:200])
		if err := w.Seal(); err != nil { // in order, behind the frame
			t.Fatal(err)
		}
		write(states, frame[200:400])
		if err := w.SealAhead(); err != nil { // must not pass the one above
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(path, ReaderOptions{}); err != nil || !rep.OK() || rep.Records != 9 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}
