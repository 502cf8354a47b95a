package logfmt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
)

// openedChunk decodes the chunk c (chunk's bytes) up to its record
// metadata, ready for lc.dec.
func openedChunk(t *testing.T, c []byte) *loadedChunk {
	t.Helper()
	h, err := parseBlockHeader(c)
	if err != nil {
		t.Fatal(err)
	}
	l := loaderOf(c, ReaderOptions{})
	lc := &loadedChunk{}
	if err := l.openChunk(lc, &ChunkInfo{MetaLen: h.metaLen, DataLen: h.dataLen}, nil, true, 0); err != nil {
		t.Fatal(err)
	}
	return lc
}

// viaEntries decodes raw with decode, batch by batch as nextBatch does,
// into the records Next gives; viaColumns with decodeColumns, as
// NextBatch does.
func viaEntries(lc *loadedChunk, raw []byte, want []bool, start int64) ([]Record, error) {
	lc.dec.reset(raw, &lc.cm, 1<<30, 0)
	var out []Record
	var es []metaEntry
	for !lc.dec.done() {
		var err error
		es, err = lc.dec.decode(es[:0], streamBatch)
		if err != nil {
			return out, err
		}
		for i := range es {
			e := &es[i]
			if (want != nil && !want[e.channel]) || (start != 0 && e.mono < start) {
				continue
			}
			r := Record{Channel: e.channel, RecvWallNs: e.wall, RecvMonoNs: e.mono, HasStamp: e.flags&rfStamp != 0,
				HasPubSN: e.flags&rfPubSN != 0, PayloadLen: int(e.hdrLen + e.payLen)}
			if r.HasStamp {
				r.CaptureNs, r.Seq = e.capture, e.seq
			}
			if r.HasPubSN {
				r.PublisherSN = e.sn
			}
			if e.pubLen > 0 {
				r.PublisherID = bytes.Clone(raw[e.pubOff : e.pubOff+e.pubLen])
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func viaColumns(lc *loadedChunk, raw []byte, want []bool, start int64) ([]Record, error) {
	lc.dec.reset(raw, &lc.cm, 1<<30, 0)
	var out []Record
	var b MetaBatch
	b.init()
	for !lc.dec.done() {
		err := lc.dec.decodeColumns(&b, want, start, 0)
		b.pubs = raw
		if err != nil {
			return out, err
		}
		for i := range b.Len {
			var r Record
			b.Record(i, &r)
			r.PublisherID = bytes.Clone(r.PublisherID)
			out = append(out, r)
		}
	}
	return out, nil
}

// decodeColumns is decode: the same records, and on damaged metadata
// (bytes changed, cut, grown) the same error after the same records,
// with and without filters.
func TestDecodeColumnsIsDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	var recs []Record
	for i := range 1500 {
		recs = append(recs, genRecord(rng, uint16(1+i%3), i, int64(i)*1000, 40))
	}
	lc := openedChunk(t, chunk(zstd1, recs...))
	good := bytes.Clone(lc.metaRaw)
	want := make([]bool, 1<<16)
	want[2] = true
	check := func(raw []byte, what string) {
		for _, f := range []struct {
			want  []bool
			start int64
		}{{nil, 0}, {want, 0}, {nil, 700_000}, {want, 300_000}} {
			a, errA := viaEntries(lc, raw, f.want, f.start)
			b, errB := viaColumns(lc, raw, f.want, f.start)
			if fmt.Sprint(errA) != fmt.Sprint(errB) || !reflect.DeepEqual(a, b) {
				t.Fatalf("%s, filter %v/%d: entries %d records, %v; columns %d records, %v", what, f.want != nil, f.start, len(a), errA, len(b), errB)
			}
		}
	}
	check(good, "intact")
	if a, _ := viaEntries(lc, good, nil, 0); len(a) != len(recs) {
		t.Fatalf("%d records, want %d", len(a), len(recs))
	}
	for k := range 1200 {
		raw := bytes.Clone(good)
		switch k % 4 {
		case 0, 1:
			for range 1 + rng.IntN(3) {
				raw[rng.IntN(len(raw))] = byte(rng.Uint32())
			}
		case 2:
			raw = raw[:rng.IntN(len(raw))]
		case 3:
			raw = append(raw, byte(rng.Uint32()), byte(rng.Uint32()))
		}
		check(raw, fmt.Sprintf("damage %d", k))
	}
}

// NextBatch gives the records Next gives, in the same order, with the
// same error: streamed chunks, merged (overlapping) ones, filters,
// workers, the tolerant mode's skipped chunks.
func TestNextBatchIsNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var sorted, overlap []byte
	sorted = file(prelude(), header(), channel(1, zstd1), channel(2, zstd1), channel(3, Compression{}))
	overlap = bytes.Clone(sorted)
	mono := int64(0)
	for c := range 6 {
		var rs []Record
		for i := range 700 + c*100 {
			rs = append(rs, genRecord(rng, uint16(1+i%3), i, mono, 30))
			mono += 1000
		}
		sorted = append(sorted, chunk(zstd1, rs...)...)
		// Chunks overlapping in time: merged by loadCluster.
		for i := range rs {
			rs[i].RecvMonoNs -= int64(c%2) * 200_000
		}
		overlap = append(overlap, chunk(zstd1, rs...)...)
	}
	damaged := bytes.Clone(sorted)
	damaged[len(damaged)/2] ^= 0xff // a chunk's CRC fails
	sample, err := os.ReadFile("../testdata/sample.vrlog")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"sorted": withFooter(t, sorted), "overlap": withFooter(t, overlap), "damaged": damaged, "sample": sample}
	for name, data := range files {
		for _, tolerant := range []bool{false, true} {
			for _, f := range []Filter{{MetaOnly: true}, {MetaOnly: true, Workers: 2}, {Channels: []uint16{1, 3}, MetaOnly: true},
				{Start: 1_500_000, End: 4_000_000, MetaOnly: true, Workers: 1}, {Wall: Range{HasStart: true, Start: 1_700_000_000_001_000_000}, MetaOnly: true}} {
				label := fmt.Sprintf("%s tolerant=%v %+v", name, tolerant, f)
				next, errN := readMeta(t, data, tolerant, f, false)
				batch, errB := readMeta(t, data, tolerant, f, true)
				if fmt.Sprint(errN) != fmt.Sprint(errB) || !reflect.DeepEqual(next, batch) {
					t.Fatalf("%s: Next %d records, %v; NextBatch %d records, %v", label, len(next), errN, len(batch), errB)
				}
				if len(next) == 0 && name != "damaged" && f.Start == 0 && !f.Wall.HasStart {
					t.Fatalf("%s: no records", label)
				}
			}
		}
	}
}

// readMeta reads data's records with Next or NextBatch, as NextBatch
// gives them (HeaderLen and PayloadLen summed).
func readMeta(t *testing.T, data []byte, tolerant bool, f Filter, batch bool) ([]Record, error) {
	r, err := openBytes(data, ReaderOptions{Tolerant: tolerant})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	it := r.Records(f)
	defer it.Close()
	var out []Record
	if batch {
		var b MetaBatch
		for it.NextBatch(&b) {
			if b.Len == 0 {
				t.Fatal("an empty batch")
			}
			for i := range b.Len {
				var rec Record
				b.Record(i, &rec)
				rec.PublisherID = bytes.Clone(rec.PublisherID)
				out = append(out, rec)
			}
		}
		return out, it.Err()
	}
	for it.Next() {
		rec := *it.Record()
		rec = Record{Channel: rec.Channel, RecvWallNs: rec.RecvWallNs, RecvMonoNs: rec.RecvMonoNs, CaptureNs: rec.CaptureNs, Seq: rec.Seq,
			HasStamp: rec.HasStamp, HasPubSN: rec.HasPubSN, PublisherID: bytes.Clone(rec.PublisherID), PublisherSN: rec.PublisherSN,
			PayloadLen: rec.HeaderLen + rec.PayloadLen}
		if !rec.HasStamp {
			rec.CaptureNs, rec.Seq = 0, 0
		}
		if !rec.HasPubSN {
			rec.PublisherSN = 0
		}
		out = append(out, rec)
	}
	return out, it.Err()
}
