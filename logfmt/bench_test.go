package logfmt

import (
	"os"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Benchmarks: see docs/benchmarks-logfmt.md for the commands and figures.
// Run the writer ones with -cpu 1 for the one-core figures.

const frameSize = 1920 * 1080 * 3 // 1080p RGB, 6.2 MB

var (
	framesOnce sync.Once
	frames     [][]byte
)

func benchFrames() [][]byte {
	framesOnce.Do(func() {
		for i := 0; i < 4; i++ {
			frames = append(frames, imageLike(frameSize, uint64(i)))
		}
	})
	return frames
}

// stateRecord fills r with the i-th realistic state record.
func stateRecord(r *Record, buf []byte, i int) {
	mono := int64(1e9) + int64(i)*1_000_000
	wall := int64(1.7e18) + mono
	*r = Record{Channel: 1, RecvMonoNs: mono, RecvWallNs: wall, HasStamp: true, CaptureNs: wall - 40_000 - int64(i%7)*1000,
		Seq: uint64(i), PublisherID: []byte("zenoh-zid-000000"), HasPubSN: true, PublisherSN: uint64(i),
		Payload: stateLike(buf, uint64(i), wall-40_000)}
}

// benchWriterFrames writes 1080p frames with Write (copy) or WriteOwned
// (zero-copy on uncompressed channels). The owned variant cycles the
// four frame buffers through release, as the recorder recycles transport
// buffers, so a buffer is reused only after the writer let go of it.
func benchWriterFrames(b *testing.B, comp Compression, sync SyncPolicy, owned bool, direct ...bool) {
	fr := benchFrames()
	pool := make(chan []byte, len(fr))
	for _, f := range fr {
		pool <- f
	}
	path := tempPath(b, "frames.vrlog")
	w, err := Create(path, WriterOptions{Sync: sync, FlushInterval: -1, DirectIO: len(direct) > 0 && direct[0]})
	if err != nil {
		b.Fatal(err)
	}
	w.AddChannel(Channel{Name: "cam", Transport: TransportIceoryx2, Compression: comp})
	hdr := make([]byte, 48)
	b.SetBytes(frameSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := Record{Channel: 1, RecvMonoNs: int64(i) * 33e6, RecvWallNs: 1.7e18 + int64(i)*33e6, HasStamp: true, Seq: uint64(i), Header: hdr}
		if owned {
			r.Payload = <-pool
			p := r.Payload
			err = w.WriteOwned(&r, func() { pool <- p })
		} else {
			r.Payload = fr[i%len(fr)]
			err = w.Write(&r)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	os.Remove(path)
}

func BenchmarkWriterFrameZstd(b *testing.B) { benchWriterFrames(b, zstd1, SyncNone, false) }
func BenchmarkWriterFrameNone(b *testing.B) { benchWriterFrames(b, Compression{}, SyncNone, false) }
func BenchmarkWriterFrameNoneSync(b *testing.B) {
	benchWriterFrames(b, Compression{}, SyncOnFlush, false)
}
func BenchmarkWriterFrameNoneOwned(b *testing.B) { benchWriterFrames(b, Compression{}, SyncNone, true) }
func BenchmarkWriterFrameNoneOwnedSync(b *testing.B) {
	benchWriterFrames(b, Compression{}, SyncOnFlush, true)
}

// BenchmarkWriterFrameNoneDirect is WriterFrameNoneOwned with DirectIO
// (the recorder's setting): past the page cache, straight to the disk.
func BenchmarkWriterFrameNoneDirect(b *testing.B) {
	benchWriterFrames(b, Compression{}, SyncNone, true, true)
}

// BenchmarkRawZstdFrame compresses the same frames with zstd.EncodeAll.
func BenchmarkRawZstdFrame(b *testing.B) {
	fr := benchFrames()
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	defer enc.Close()
	var dst []byte
	b.SetBytes(frameSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = enc.EncodeAll(fr[i%len(fr)], dst[:0])
	}
	b.ReportMetric(float64(len(dst))/frameSize, "ratio")
}

// BenchmarkDiskWrite writes the same frames to a file with plain
// sequential writes: the disk bandwidth the uncompressed writer is
// compared with. DiskWriteSync fdatasyncs after every frame, like
// SyncOnFlush.
func benchDiskWrite(b *testing.B, sync bool) {
	fr := benchFrames()
	path := tempPath(b, "plain.bin")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(frameSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Write(fr[i%len(fr)]); err != nil {
			b.Fatal(err)
		}
		if sync {
			fdatasync(f)
		}
	}
	f.Close()
	b.StopTimer()
	os.Remove(path)
}

func BenchmarkDiskWrite(b *testing.B)     { benchDiskWrite(b, false) }
func BenchmarkDiskWriteSync(b *testing.B) { benchDiskWrite(b, true) }

var (
	stateLogOnce sync.Once
	stateLogPath string
	stateLogN    int
	benchDir     string // shared by several benchmarks, so not b.TempDir
)

// stateLog writes (once) a log of 1 M state records for the read
// benchmarks, in a directory TestMain removes.
func stateLog(b *testing.B) (string, int) {
	stateLogOnce.Do(func() {
		dir, err := os.MkdirTemp("", "logfmt-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
		stateLogPath, stateLogN = dir+"/state.vrlog", 1_000_000
		w, err := Create(stateLogPath, WriterOptions{Sync: SyncNone, FlushInterval: -1})
		if err != nil {
			b.Fatal(err)
		}
		w.AddChannel(Channel{Name: "state", Transport: TransportZenoh, Compression: zstd1})
		var r Record
		buf := make([]byte, 0, 200)
		for i := 0; i < stateLogN; i++ {
			stateRecord(&r, buf, i)
			w.Write(&r)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	})
	return stateLogPath, stateLogN
}

func benchRead(b *testing.B, metaOnly bool) {
	path, n := stateLog(b)
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.SetBytes(int64(n) * 200)
	b.ResetTimer()
	total := 0
	for i := 0; i < b.N; i++ {
		it := r.Records(Filter{MetaOnly: metaOnly})
		for it.Next() {
			total += int(it.Record().Seq & 1)
		}
		if it.Err() != nil {
			b.Fatal(it.Err())
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	_ = total
}

func BenchmarkReadFull(b *testing.B) { benchRead(b, false) }
func BenchmarkReadMeta(b *testing.B) { benchRead(b, true) }

// BenchmarkReadMetaBatch is ReadMeta in batches (Iterator.NextBatch), as
// analyze reads: the seq and stamps of every record.
func BenchmarkReadMetaBatch(b *testing.B) {
	path, n := stateLog(b)
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.SetBytes(int64(n) * 200)
	b.ResetTimer()
	var total int64
	var batch MetaBatch
	for i := 0; i < b.N; i++ {
		it := r.Records(Filter{Channels: []uint16{r.Channels()[0].ID}, MetaOnly: true}) // a filter, as analyze's
		read := 0
		for it.NextBatch(&batch) {
			for k := range batch.Len {
				total += int64(batch.Seq(k)) ^ batch.CaptureNs(k) ^ batch.RecvMonoNs(k)
			}
			read += batch.Len
		}
		if it.Err() != nil || read != n {
			b.Fatal(it.Err(), read)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	_ = total
}

// BenchmarkReadMetaFrameHeavy scans the metadata of a frame-heavy log
// (1 s of 1 kHz state + 30 Hz 6.2 MB frames) and reports the fraction
// of the file read.
func BenchmarkReadMetaFrameHeavy(b *testing.B) {
	path := tempPath(b, "heavy.vrlog")
	size, recs := writeFrameHeavy(b, path, benchFrames(), 1)
	b.ResetTimer()
	var read int64
	for i := 0; i < b.N; i++ {
		r, err := Open(path, ReaderOptions{})
		if err != nil {
			b.Fatal(err)
		}
		it := r.Records(Filter{MetaOnly: true})
		n := 0
		for it.Next() {
			n++
		}
		if n != recs {
			b.Fatalf("%d records, want %d", n, recs)
		}
		read = r.BytesRead()
		r.Close()
	}
	b.ReportMetric(float64(read), "bytes-read")
	b.ReportMetric(float64(size), "file-bytes")
	b.ReportMetric(100*float64(read)/float64(size), "%read")
}

// imageLike is a smooth RGB gradient with sensor noise on one byte in
// sixteen: compressible like a camera frame of a simulated scene
// (zstd fastest gets about 2:1), unlike frameLike's dense noise.
func imageLike(n int, seed uint64) []byte {
	b := make([]byte, n)
	x := uint32(seed*2654435761 + 1)
	for i := range b {
		px := i / 3
		b[i] = byte(px%1920/8 + px/1920/4 + i%3*40)
		if i%16 == 0 {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[i] += byte(x & 7)
		}
	}
	return b
}
