package logfmt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// fixedTime makes output reproducible.
var fixedTime = time.Unix(1_700_000_000, 123456789)

// stateLike builds a 200-byte state-like payload: seq counter, t_ns,
// slowly changing floats.
func stateLike(dst []byte, seq uint64, tns int64) []byte {
	dst = dst[:0]
	dst = binary.LittleEndian.AppendUint32(dst, 0x53545631)
	dst = binary.LittleEndian.AppendUint64(dst, seq)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(tns))
	for i := 0; len(dst) < 200; i++ {
		v := float32(i) + float32(seq%1000)*0.001
		dst = binary.LittleEndian.AppendUint32(dst, mathFloat32bits(v))
	}
	return dst[:200]
}

func mathFloat32bits(f float32) uint32 { return *(*uint32)(unsafePointer(&f)) }

// frameLike fills n bytes with a smooth image-like gradient plus noise.
func frameLike(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i/3%256) + byte(rng.IntN(8))
	}
	return b
}

// genRecord is a test record with owned buffers.
func genRecord(rng *rand.Rand, ch uint16, i int, mono int64, maxPayload int) Record {
	r := Record{Channel: ch, RecvMonoNs: mono, RecvWallNs: 1_700_000_000_000_000_000 + mono + int64(rng.IntN(3))}
	if rng.IntN(4) != 0 {
		r.HasStamp = true
		r.CaptureNs = r.RecvWallNs - int64(rng.IntN(1_000_000))
		r.Seq = uint64(i) + uint64(rng.IntN(2))
	}
	if rng.IntN(3) == 0 {
		r.PublisherID = []byte(fmt.Sprintf("pub-%d", rng.IntN(2)))
	}
	if rng.IntN(3) == 0 {
		r.HasPubSN = true
		r.PublisherSN = uint64(i * 2)
	}
	if rng.IntN(5) == 0 {
		r.Header = bytes.Repeat([]byte{byte(i)}, 1+rng.IntN(64))
	}
	n := 0
	if maxPayload > 0 {
		n = rng.IntN(maxPayload + 1)
	}
	r.Payload = make([]byte, n)
	for k := range r.Payload {
		r.Payload[k] = byte(k*7 + i)
	}
	return r
}

func tempPath(t testing.TB, name string) string {
	return filepath.Join(t.TempDir(), name)
}

// checkRecord compares a read record with the one written.
func checkRecord(t testing.TB, got *Record, want *Record, metaOnly bool) {
	t.Helper()
	if got.Channel != want.Channel || got.RecvMonoNs != want.RecvMonoNs || got.RecvWallNs != want.RecvWallNs ||
		got.HasStamp != want.HasStamp || got.HasPubSN != want.HasPubSN {
		t.Fatalf("record mismatch:\n got %+v\nwant %+v", got, want)
	}
	if want.HasStamp && (got.CaptureNs != want.CaptureNs || got.Seq != want.Seq) {
		t.Fatalf("stamp mismatch: got %d/%d want %d/%d", got.CaptureNs, got.Seq, want.CaptureNs, want.Seq)
	}
	if want.HasPubSN && got.PublisherSN != want.PublisherSN {
		t.Fatalf("pub sn mismatch")
	}
	if !bytes.Equal(got.PublisherID, want.PublisherID) {
		t.Fatalf("publisher id %q, want %q", got.PublisherID, want.PublisherID)
	}
	if got.HeaderLen != len(want.Header) || got.PayloadLen != len(want.Payload) {
		t.Fatalf("lengths %d/%d want %d/%d", got.HeaderLen, got.PayloadLen, len(want.Header), len(want.Payload))
	}
	if metaOnly {
		if got.Payload != nil || got.Header != nil {
			t.Fatalf("meta-only read returned payload")
		}
		return
	}
	if !bytes.Equal(got.Header, want.Header) || !bytes.Equal(got.Payload, want.Payload) {
		t.Fatalf("payload mismatch (channel %d mono %d)", want.Channel, want.RecvMonoNs)
	}
}

func readAll(t testing.TB, r *Reader, f Filter) []Record {
	t.Helper()
	var out []Record
	it := r.Records(f)
	for it.Next() {
		rec := *it.Record()
		rec.Payload = append([]byte(nil), rec.Payload...)
		rec.Header = append([]byte(nil), rec.Header...)
		if it.Record().Header == nil {
			rec.Header = nil
		}
		rec.PublisherID = append([]byte(nil), rec.PublisherID...)
		if it.Record().PublisherID == nil {
			rec.PublisherID = nil
		}
		out = append(out, rec)
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iterate: %v", err)
	}
	return out
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sortByMono(rs []Record) {
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].RecvMonoNs < rs[b].RecvMonoNs })
}
