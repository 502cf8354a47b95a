package logfmt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
)

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
