package logfmt

import (
	"math/rand/v2"
	"sort"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name      string
		chunk     int
		conc      int
		n         int
		maxPay    int
		big       bool
		shuffleNs int64
	}{
		{"small-chunks", 4 << 10, 2, 3000, 300, false, 0},
		{"one-worker", 64 << 10, 1, 2000, 2000, false, 0},
		{"out-of-order", 8 << 10, 2, 3000, 100, false, 50_000},
		{"big-payloads", 1 << 20, 2, 40, 0, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			path := tempPath(t, "rt.vrlog")
			w, err := Create(path, WriterOptions{ChunkSize: tc.chunk, Concurrency: tc.conc, FlushInterval: -1, CreatedAt: fixedTime,
				Metadata: map[string]string{"note": "round trip", "host": "test"}})
			if err != nil {
				t.Fatal(err)
			}
			comps := []Compression{{}, {Kind: CompressionZstd, Level: 1}, {Kind: CompressionZstd, Level: 2}, {Kind: CompressionZstd, Level: 4}, lz4c}
			var ids []uint16
			addCh := func() {
				id, err := w.AddChannel(Channel{Name: "ch" + string(rune('a'+len(ids))), Transport: Transport(len(ids) % 3), Topic: "vr/r1/x",
					Schema: "vrsdk.State/1", Compression: comps[len(ids)%len(comps)], Meta: map[string]string{"k": "v"}})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			addCh()
			addCh()
			var want []Record
			mono := int64(1_000_000)
			for i := 0; i < tc.n; i++ {
				if i == tc.n/2 {
					addCh() // mid-recording
				}
				mono += int64(rng.IntN(1000))
				m := mono
				if tc.shuffleNs > 0 {
					m += int64(rng.IntN(int(tc.shuffleNs)))
				}
				r := genRecord(rng, ids[rng.IntN(len(ids))], i, m, tc.maxPay)
				if tc.big {
					sizes := []int{0, 1, 4096, 6 << 20, 8 << 20, 3<<20 + 17}
					r.Payload = frameLike(sizes[i%len(sizes)], uint64(i))
				}
				if err := w.Write(&r); err != nil {
					t.Fatal(err)
				}
				want = append(want, r)
				if i%500 == 499 {
					w.AddDrops(ids[0], 3)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			sort.SliceStable(want, func(a, b int) bool { return want[a].RecvMonoNs < want[b].RecvMonoNs })
			for _, ignore := range []bool{false, true} {
				r, err := Open(path, ReaderOptions{IgnoreIndex: ignore})
				if err != nil {
					t.Fatal(err)
				}
				if r.Indexed() == ignore {
					t.Fatalf("Indexed() = %v with IgnoreIndex %v", r.Indexed(), ignore)
				}
				if h := r.Header(); h.CreatedWallNs != fixedTime.UnixNano() || h.Metadata["note"] != "round trip" {
					t.Fatalf("header %+v", h)
				}
				if len(r.Channels()) != len(ids) {
					t.Fatalf("%d channels", len(r.Channels()))
				}
				for i, c := range r.Channels() {
					if want := comps[i%len(comps)]; c.Compression != want && !(want.Kind == CompressionZstd && want.Level == 0) {
						t.Fatalf("channel %s stores %v, asked %v", c.Name, c.Compression, want)
					}
				}
				for _, metaOnly := range []bool{false, true} {
					got := readAll(t, r, Filter{MetaOnly: metaOnly})
					if len(got) != len(want) {
						t.Fatalf("read %d records, wrote %d", len(got), len(want))
					}
					for i := range got {
						checkRecord(t, &got[i], &want[i], metaOnly)
					}
				}
				st := r.Stats()
				var total uint64
				for _, s := range st {
					total += s.Records
				}
				if total != uint64(len(want)) {
					t.Fatalf("stats count %d", total)
				}
				if st[0].Drops != uint64(tc.n/500*3) {
					t.Fatalf("drops %d", st[0].Drops)
				}
				r.Close()
			}
		})
	}
}
