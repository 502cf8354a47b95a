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
