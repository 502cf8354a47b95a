package logfmt

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// TestFilterAndSeek checks channel and time filters against a plain
// filter over all records, and that a time seek skips chunks by index.
func TestFilterAndSeek(t *testing.T) {
	path := tempPath(t, "f.vrlog")
	w, err := Create(path, WriterOptions{ChunkSize: 2048, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := w.AddChannel(Channel{Name: "a", Compression: zstd1})
	b, _ := w.AddChannel(Channel{Name: "b"})
	c, _ := w.AddChannel(Channel{Name: "c", Compression: zstd1})
	rng := rand.New(rand.NewPCG(3, 4))
	var all []Record
	for i := 0; i < 5000; i++ {
		ch := []uint16{a, a, a, b, c}[rng.IntN(5)]
		if i > 2500 && ch == c {
			ch = a // c ends early: later chunks lack it
		}
		r := genRecord(rng, ch, i, int64(1e6+i*1000), 50)
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, f := range []Filter{
		{Channels: []uint16{b}},
		{Channels: []uint16{c}, MetaOnly: true},
		{Start: 2e6, End: 3e6},
		{Start: 4e6},
		{End: 1.5e6},
		{Channels: []uint16{a, c}, Start: 3_333_333, End: 4_444_444},
		{Start: 1e9},
	} {
		var want []Record
		for _, rec := range all {
			in := len(f.Channels) == 0
			for _, ch := range f.Channels {
				in = in || ch == rec.Channel
			}
			if in && (f.Start == 0 || rec.RecvMonoNs >= f.Start) && (f.End == 0 || rec.RecvMonoNs < f.End) {
				want = append(want, rec)
			}
		}
		before := r.BytesRead()
		got := readAll(t, r, f)
		if len(got) != len(want) {
			t.Fatalf("filter %+v: %d records, want %d", f, len(got), len(want))
		}
		for i := range got {
			checkRecord(t, &got[i], &want[i], f.MetaOnly)
		}
		if f.Start == 4e6 {
			var need int64
			for _, ci := range r.Chunks() {
				if ci.MaxMonoNs >= f.Start {
					need += ci.Size()
				}
			}
			if read := r.BytesRead() - before; read > need {
				t.Fatalf("seek read %d bytes, chunks after start hold %d", read, need)
			}
		}
	}
}

// TestConcurrentWriters writes from several goroutines while flushing,
// adding channels and drops; run with -race.
func TestConcurrentWriters(t *testing.T) {
	path := tempPath(t, "c.vrlog")
	w, err := Create(path, WriterOptions{ChunkSize: 4096, FlushInterval: 2e6, Sync: SyncOnFlush, Concurrency: 3, MaxChunksInFlight: 2})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	const per = 2000
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := w.AddChannel(Channel{Name: string(rune('a' + g)), Compression: Compression{Kind: CompressionKind(g % 2), Level: g%4 + 1}})
			if err != nil {
				t.Error(err)
				return
			}
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := 0; i < per; i++ {
				r := genRecord(rng, id, i, int64(i), 300)
				if err := w.Write(&r); err != nil {
					t.Error(err)
					return
				}
				if i%500 == 0 {
					w.AddDrops(id, 1)
					if err := w.Flush(); err != nil {
						t.Error(err)
					}
					_ = w.Stats()
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(path, ReaderOptions{})
	if err != nil || !v.OK() || v.Records != 4*per {
		t.Fatalf("verify %v %+v", err, v)
	}
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg2 sync.WaitGroup
	for k := 0; k < 3; k++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			it := r.Records(Filter{MetaOnly: k == 0})
			n := 0
			for it.Next() {
				n++
			}
			if it.Err() != nil || n != 4*per {
				t.Errorf("concurrent read: %d records, %v", n, it.Err())
			}
		}()
	}
	wg2.Wait()
	for _, s := range r.Stats() {
		if s.Drops != 4 || s.Records != per {
			t.Fatalf("stats %+v", s)
		}
	}
}
