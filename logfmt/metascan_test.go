package logfmt

import (
	"os"
	"testing"
)

// writeFrameHeavy writes seconds of 1 kHz state and 30 Hz frames
// (uncompressed) and returns the file size and record count.
func writeFrameHeavy(t testing.TB, path string, frames [][]byte, seconds int) (int64, int) {
	w, err := Create(path, WriterOptions{Sync: SyncNone, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := w.AddChannel(Channel{Name: "state", Transport: TransportZenoh, Compression: zstd1})
	cam, _ := w.AddChannel(Channel{Name: "cam", Transport: TransportIceoryx2})
	var r Record
	buf := make([]byte, 0, 200)
	n := 0
	for ms := 0; ms < 1000*seconds; ms++ {
		stateRecord(&r, buf, ms)
		r.Channel = st
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
		n++
		if ms%33 == 0 {
			f := Record{Channel: cam, RecvMonoNs: r.RecvMonoNs + 1, RecvWallNs: r.RecvWallNs + 1, HasStamp: true, Seq: uint64(ms / 33),
				Header: make([]byte, 48), Payload: frames[ms%len(frames)]}
			if err := w.Write(&f); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size(), n
}

// TestMetaScanReadsLittle checks the ≤ 5 % claim: a metadata-only scan of
// a frame-heavy log reads a small fraction of the file.
func TestMetaScanReadsLittle(t *testing.T) {
	frames := [][]byte{frameLike(1<<20, 1), frameLike(1<<20, 2)} // 1 MiB frames keep the test fast
	path := tempPath(t, "heavy.vrlog")
	size, n := writeFrameHeavy(t, path, frames, 1)
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := 0
	it := r.Records(Filter{MetaOnly: true})
	for it.Next() {
		got++
	}
	if it.Err() != nil || got != n {
		t.Fatalf("%d records (%v), want %d", got, it.Err(), n)
	}
	frac := float64(r.BytesRead()) / float64(size)
	t.Logf("metadata scan read %d of %d bytes (%.3f%%)", r.BytesRead(), size, 100*frac)
	if frac > 0.05 {
		t.Fatalf("metadata scan read %.2f%% of the file", 100*frac)
	}
}
