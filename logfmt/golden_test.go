package logfmt

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/logfmt")

const goldenDir = "../testdata/logfmt"

// goldenRecords writes the fixed content of the golden files.
func goldenLog(t testing.TB, path string, comp Compression, meta *Compression) []Record {
	w, err := Create(path, WriterOptions{ChunkSize: 1024, FlushInterval: -1, CreatedAt: fixedTime, MetaCompression: meta,
		Overwrite: true, Metadata: map[string]string{"note": "golden file: do not change without a format version bump", "host": "golden", "tool": "logfmt test"}})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := w.AddChannel(Channel{Name: "vr/r1/state", Transport: TransportZenoh, Topic: "vr/r1/state", Schema: "vrsdk.State/1",
		Compression: comp, Meta: map[string]string{"zenoh.encoding": "application/octet-stream"}})
	var want []Record
	write := func(r Record) {
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	var cam uint16
	for i := 0; i < 30; i++ {
		mono := int64(5e9 + i*4e6)
		wall := int64(1.7e18) + mono + 777
		write(Record{Channel: st, RecvMonoNs: mono, RecvWallNs: wall, HasStamp: true, CaptureNs: wall - 41_000, Seq: uint64(100 + i),
			PublisherID: []byte{0xde, 0xad, 0xbe, 0xef, 1}, HasPubSN: true, PublisherSN: uint64(7 + i), Payload: stateLike(nil, uint64(100+i), wall-41_000)[:64]})
		if i == 10 {
			cam, _ = w.AddChannel(Channel{Name: "cam0", Transport: TransportIceoryx2, Topic: "vr/r1/cam0", Schema: "vrsdk.Frame/1",
				Meta: map[string]string{"iox2.payload.type": "u8", "iox2.payload.size": "1", "iox2.payload.align": "1", "iox2.header.type": "FrameHeader", "iox2.variant": "dynamic"}})
		}
		if i > 10 && i%5 == 0 {
			write(Record{Channel: cam, RecvMonoNs: mono + 1, RecvWallNs: wall + 1, HasStamp: true, CaptureNs: wall - 9_000_000, Seq: uint64(i / 5),
				PublisherID: []byte("iox2-pub-0001"), Header: []byte("FRMH\x01\x00\x00\x00w=16 h=8"), Payload: frameLike(16*8*3, uint64(i))})
		}
		if i == 20 {
			w.AddDrops(cam, 3)
		}
	}
	probe, _ := w.AddChannel(Channel{Name: "vrlog/clock", Transport: TransportInternal, Schema: "vrlog.ClockProbe/1"})
	write(Record{Channel: probe, RecvMonoNs: 6e9, RecvWallNs: 1.7e18 + 6e9, Payload: []byte("T1T2T3T4")})
	w.AddDrops(st, 1)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestGolden compares a freshly written log with testdata/logfmt/golden-v1.1.vrlog
// byte for byte: an accidental format change fails here. The file uses no
// compression so it does not depend on an encoder's version; the others
// are checked for content only: golden-v1.vrlog and golden-v1-zstd.vrlog
// are the same records written by the format 1.0 writer, which every
// later reader reads, golden-v1.1-lz4.vrlog has LZ4 payload blocks.
func TestGolden(t *testing.T) {
	for _, g := range []struct {
		name   string
		comp   Compression
		meta   *Compression
		bytes  bool
		frozen bool // written by an older writer: never -update'd
	}{
		{"golden-v1.1.vrlog", Compression{}, &Compression{}, true, false},
		{"golden-v1.1-lz4.vrlog", lz4c, nil, false, false},
		{"golden-v1.vrlog", Compression{}, &Compression{}, false, true},
		{"golden-v1-zstd.vrlog", zstd1, nil, false, true},
	} {
		t.Run(g.name, func(t *testing.T) {
			path := tempPath(t, g.name)
			want := goldenLog(t, path, g.comp, g.meta)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(goldenDir, g.name)
			if *update && !g.frozen {
				if err := os.MkdirAll(goldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, golden, got)
			}
			ref, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update ./logfmt/ to create it)", err)
			}
			if g.bytes && !bytes.Equal(got, ref) {
				n := 0
				for n < len(got) && n < len(ref) && got[n] == ref[n] {
					n++
				}
				t.Fatalf("output differs from %s at byte %d (len %d vs %d): the on-disk format changed", golden, n, len(got), len(ref))
			}
			r, err := Open(golden, ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if g.comp.Kind != CompressionNone && !storesCompressed(r) {
				t.Fatalf("no payload block is stored %v", g.comp)
			}
			recs := readAll(t, r, Filter{})
			if len(recs) != len(want) {
				t.Fatalf("%d records, want %d", len(recs), len(want))
			}
			sortByMono(want)
			for i := range recs {
				checkRecord(t, &recs[i], &want[i], false)
			}
			v, err := Verify(golden, ReaderOptions{})
			if err != nil || !v.OK() {
				t.Fatalf("verify: %v %+v", err, v)
			}
		})
	}
}

// storesCompressed reports whether some payload block of r is stored
// smaller than its records.
func storesCompressed(r *Reader) bool {
	for _, c := range r.Chunks() {
		for _, cc := range c.Channels {
			if cc.StoredBytes < cc.RawBytes {
				return true
			}
		}
	}
	return false
}
