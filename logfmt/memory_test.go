package logfmt

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"
)

// memoryChunks writes recs into a memory writer with channels chs and
// returns what it kept.
func memoryChunks(t *testing.T, chs []Channel, recs []Record, opts WriterOptions) []*Chunk {
	t.Helper()
	var mu sync.Mutex
	var kept []*Chunk
	mw, err := NewMemoryWriter(opts, func(c *Chunk) { mu.Lock(); kept = append(kept, c); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chs {
		if _, err := mw.AddChannel(c); err != nil {
			t.Fatal(err)
		}
	}
	for i := range recs {
		if err := mw.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return kept
}

func memoryTestChannels() []Channel {
	return []Channel{
		{Name: "vr/r1/state", Transport: TransportZenoh, Topic: "vr/r1/state", Schema: "vrsdk.State/1", Compression: Compression{Kind: CompressionZstd}},
		{Name: "vr/r1/camera/front", Transport: TransportIceoryx2, Topic: "vr/r1/camera/front", Compression: Compression{Kind: CompressionNone}},
	}
}

func memoryTestRecords(n int) []Record {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([]Record, n)
	for i := range recs {
		ch := uint16(1 + i%2)
		recs[i] = genRecord(rng, ch, i, int64(1_000_000+i*1000), 3000)
	}
	return recs
}

// A window of kept chunks written into a log holds exactly the records
// received in the window, byte for byte; chunks inside the window are in
// the file as they were kept, and the log verifies.
func TestWriteChunkWindow(t *testing.T) {
	chs := memoryTestChannels()
	recs := memoryTestRecords(3000)
	kept := memoryChunks(t, chs, recs, WriterOptions{ChunkSize: 64 << 10, FlushInterval: -1, CreatedAt: fixedTime})
	if len(kept) < 10 {
		t.Fatalf("kept %d chunks; want many small ones", len(kept))
	}
	var total uint32
	for _, c := range kept {
		total += c.Info().Records
	}
	if total != 3000 {
		t.Fatalf("kept chunks hold %d records, 3000 written", total)
	}
	for _, win := range []struct {
		name     string
		from, to int64
	}{
		{"middle", recs[700].RecvMonoNs + 1, recs[2100].RecvMonoNs},
		{"everything", 0, 1 << 62},
		{"one record", recs[1500].RecvMonoNs, recs[1500].RecvMonoNs},
		{"nothing", 1, 2},
	} {
		t.Run(win.name, func(t *testing.T) {
			path := tempPath(t, "w.vrlog")
			w, err := Create(path, WriterOptions{CreatedAt: fixedTime})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range chs {
				if _, err := w.AddChannel(c); err != nil {
					t.Fatal(err)
				}
			}
			var n uint64
			for _, c := range kept {
				k, err := w.WriteChunk(c, win.from, win.to)
				if err != nil {
					t.Fatal(err)
				}
				n += k
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			var want []Record
			for _, r := range recs {
				if r.RecvMonoNs >= win.from && r.RecvMonoNs <= win.to {
					want = append(want, r)
				}
			}
			if n != uint64(len(want)) {
				t.Fatalf("WriteChunk says %d records, %d are in the window", n, len(want))
			}
			got, err := ReadBack(path)
			if err != nil || got != n {
				t.Fatalf("read back %d records (%v), wrote %d", got, err, n)
			}
			r, err := Open(path, ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			read := readAll(t, r, Filter{})
			if len(read) != len(want) {
				t.Fatalf("read %d records, want %d", len(read), len(want))
			}
			for i := range want {
				checkRecord(t, &read[i], &want[i], false)
			}
			file, _ := os.ReadFile(path)
			inside := 0
			for _, c := range kept {
				info := c.Info()
				if info.MinMonoNs >= win.from && info.MaxMonoNs <= win.to {
					inside++
					if !bytes.Contains(file, c.block) {
						t.Fatalf("a chunk inside the window is not in the file byte for byte")
					}
				}
			}
			for _, s := range r.Stats() {
				var recsOf, raw uint64
				for _, x := range want {
					if x.Channel == s.Channel {
						recsOf++
						raw += uint64(len(x.Header) + len(x.Payload))
					}
				}
				if s.Records != recsOf || s.RawBytes != raw {
					t.Fatalf("channel %d stats: %d records %d bytes, want %d, %d", s.Channel, s.Records, s.RawBytes, recsOf, raw)
				}
			}
			t.Logf("%d records, %d chunks copied byte for byte", n, inside)
		})
	}
}

// A kept chunk names channels by id: a log that lacks them refuses it.
func TestWriteChunkUnknownChannel(t *testing.T) {
	chs := memoryTestChannels()
	kept := memoryChunks(t, chs, memoryTestRecords(10), WriterOptions{FlushInterval: -1})
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.AddChannel(chs[0])
	if _, err := w.WriteChunk(kept[0], 0, 1<<62); !errors.Is(err, ErrUnknownChannel) {
		t.Fatalf("WriteChunk into a log without channel 2: %v, want ErrUnknownChannel", err)
	}
}

// The flush interval seals chunks of a memory writer as it does for a
// file: a record is kept within it.
func TestMemoryWriterFlushInterval(t *testing.T) {
	got := make(chan *Chunk, 16)
	mw, err := NewMemoryWriter(WriterOptions{FlushInterval: 50 * time.Millisecond}, func(c *Chunk) { got <- c })
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Close()
	id, _ := mw.AddChannel(Channel{Name: "a"})
	mw.Write(&Record{Channel: id, RecvMonoNs: 5, RecvWallNs: 6, Payload: []byte("x")})
	select {
	case c := <-got:
		if c.Info().Records != 1 || c.Size() == 0 {
			t.Fatalf("kept chunk: %+v, %d bytes", c.Info(), c.Size())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no chunk kept within the flush interval")
	}
}

// oneRecordChunks is a memory writer and a function that writes one
// record of n bytes as a chunk of its own and returns it.
func oneRecordChunks(t *testing.T) (*Writer, func(n int) *Chunk) {
	t.Helper()
	got := make(chan *Chunk, 16)
	mw, err := NewMemoryWriter(WriterOptions{FlushInterval: -1}, func(c *Chunk) { got <- c })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mw.Close() })
	id, _ := mw.AddChannel(Channel{Name: "a"})
	return mw, func(n int) *Chunk {
		mw.Write(&Record{Channel: id, RecvMonoNs: 5, RecvWallNs: 6, Payload: make([]byte, n)})
		mw.Flush()
		return <-got
	}
}

// A recycled chunk's memory builds a later chunk.
func TestMemoryWriterRecycles(t *testing.T) {
	mw, write := oneRecordChunks(t)
	a := write(100 << 10)
	buf := &a.block[:1][0]
	mw.Recycle(a)
	b := write(90 << 10)
	if &b.block[:1][0] != buf || b.Size() != cap(b.block) {
		t.Fatal("the recycled buffer was not reused")
	}
	r, err := b.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if recs := readAll(t, r, Filter{}); len(recs) != 1 || len(recs[0].Payload) != 90<<10 {
		t.Fatalf("the chunk built in recycled memory reads %d records", len(recs))
	}
}

// A small chunk is not built in a much larger recycled buffer: Size counts
// the memory held, and a frame's buffer holding a flush interval's few
// states would count megabytes for kilobytes (a budget of Size held less
// and less time at a constant rate).
func TestMemoryWriterRecycledSizeFollowsUse(t *testing.T) {
	mw, write := oneRecordChunks(t)
	big := write(4 << 20)
	mw.Recycle(big)
	small := write(1 << 10)
	if small.Size() > 64<<10 {
		t.Fatalf("a chunk of 1 KiB holds %d bytes: built in the recycled 4 MiB buffer", small.Size())
	}
}

// Records without payload (the recorder's heartbeats) leave an empty
// payload block at the end of a kept chunk: a window that cuts the chunk
// reads it back from memory, where reading nothing at the end is EOF.
func TestWriteChunkWindowEmptyPayloads(t *testing.T) {
	chs := []Channel{{Name: "vrlog/recorder", Transport: TransportInternal, Topic: "vrlog/recorder", Compression: Compression{Kind: CompressionNone}}}
	recs := make([]Record, 10)
	for i := range recs {
		recs[i] = Record{Channel: 1, RecvMonoNs: int64(1_000_000 + i*1000), RecvWallNs: int64(5_000_000 + i*1000)}
	}
	kept := memoryChunks(t, chs, recs, WriterOptions{FlushInterval: -1, CreatedAt: fixedTime})
	w, err := Create(tempPath(t, "w.vrlog"), WriterOptions{CreatedAt: fixedTime})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddChannel(chs[0]); err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, c := range kept {
		k, err := w.WriteChunk(c, recs[3].RecvMonoNs, recs[6].RecvMonoNs)
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("%d records in the window, want 4", n)
	}
}
