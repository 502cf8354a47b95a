package logfmt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/vrlog/vrlog/internal/cputime"
)

// The payload read path side by side with MCAP's Go reader (issue 30): the
// same 1 M real state records (realStates: codec-encoded 200-byte
// simulator states, receive stamps with jitter) in a vrlog log (payloads
// LZ4, as the recorder stores states, and zstd-1; record metadata zstd-1)
// and in an MCAP file from the official Go writer (zstd chunks at its
// default level, and LZ4), with the chunk
// size of the default writer (4 MiB) and the ~110 KiB chunks a recorder's
// flush timer seals at 1 kHz. Every record is read in receive order with
// its payload and its stamps are touched. Figures in
// docs/benchmarks-logfmt.md; bench/read.sh interleaves the runs.

const readStates = 1_000_000

// readChunkSizes are the chunk sizes of the read benchmarks.
var readChunkSizes = []struct {
	name string
	size int
}{{"4MiB", 4 << 20}, {"110KiB", 110 << 10}}

var (
	readMu     sync.Mutex
	readStateN []Record              // the records, made once
	readPaths  = map[string]string{} // written logs by format and chunk size
)

// readLog writes (once per process) the log of the read benchmarks in
// format "vrlog" or "mcap", compressed with "lz4" or "zstd", with chunks of
// cs into benchDir, which TestMain removes. Only the log a benchmark reads
// is written: bench/read.sh runs each in a process of its own.
func readLog(b *testing.B, format, comp string, cs int) string {
	readMu.Lock()
	defer readMu.Unlock()
	key := fmt.Sprintf("%s-%s-%d", format, comp, cs)
	if p, ok := readPaths[key]; ok {
		return p
	}
	if benchDir == "" {
		dir, err := os.MkdirTemp("", "logfmt-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
	}
	if readStateN == nil {
		readStateN = realStates(readStates, 7)
	}
	p := fmt.Sprintf("%s/state-%s-%d.%s", benchDir, comp, cs, format)
	write := writeVrlog
	if format == "mcap" {
		write = writeMCAP
	}
	if err := write(p, readStateN, comp == "lz4", cs); err != nil {
		b.Fatal(err)
	}
	readPaths[key] = p
	return p
}

func writeVrlog(path string, rs []Record, lz4 bool, chunkSize int) error {
	w, err := Create(path, WriterOptions{Sync: SyncNone, FlushInterval: -1, ChunkSize: chunkSize, Overwrite: true})
	if err != nil {
		return err
	}
	comp := zstd1
	if lz4 {
		comp = lz4c
	}
	if _, err := w.AddChannel(Channel{Name: "state", Topic: "sim/state", Transport: TransportZenoh, Compression: comp}); err != nil {
		return err
	}
	for i := range rs {
		if err := w.Write(&rs[i]); err != nil {
			return err
		}
	}
	return w.Close()
}

func writeMCAP(path string, rs []Record, lz4 bool, chunkSize int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	comp := mcap.CompressionZSTD
	if lz4 {
		comp = mcap.CompressionLZ4
	}
	w, err := mcap.NewWriter(f, &mcap.WriterOptions{Chunked: true, ChunkSize: int64(chunkSize), Compression: comp, IncludeCRC: true})
	if err != nil {
		return err
	}
	if err := w.WriteHeader(&mcap.Header{Profile: "", Library: "bench"}); err != nil {
		return err
	}
	if err := w.WriteSchema(&mcap.Schema{ID: 1, Name: "vrlog.State", Encoding: "", Data: nil}); err != nil {
		return err
	}
	if err := w.WriteChannel(&mcap.Channel{ID: 1, SchemaID: 1, Topic: "sim/state", MessageEncoding: "vrlog"}); err != nil {
		return err
	}
	for i := range rs {
		r := &rs[i]
		if err := w.WriteMessage(&mcap.Message{ChannelID: 1, Sequence: uint32(r.Seq), LogTime: uint64(r.RecvWallNs),
			PublishTime: uint64(r.CaptureNs), Data: r.Payload}); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

// BenchmarkReadPayloads reads every record of the real state log, LZ4
// payloads as the recorder stores states, with its payload (Filter{}; with
// -cpu 2 and more, Filter.Workers loads chunks ahead on the other cores).
func BenchmarkReadPayloads(b *testing.B) { benchReadPayloads(b, "lz4") }

// BenchmarkReadPayloadsZstd is BenchmarkReadPayloads on zstd-1 payloads.
func BenchmarkReadPayloadsZstd(b *testing.B) { benchReadPayloads(b, "zstd") }

func benchReadPayloads(b *testing.B, comp string) {
	for _, cs := range readChunkSizes {
		b.Run("chunk="+cs.name, func(b *testing.B) {
			path := readLog(b, "vrlog", comp, cs.size)
			r, err := Open(path, ReaderOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			workers := 0
			if p := runtime.GOMAXPROCS(0); p > 1 {
				workers = p
			}
			b.SetBytes(int64(readStates) * 200)
			cpu0 := cputime.Process()
			b.ResetTimer()
			var sum int64
			for i := 0; i < b.N; i++ {
				it := r.Records(Filter{Workers: workers})
				n := 0
				for it.Next() {
					rec := it.Record()
					sum += rec.RecvMonoNs ^ rec.RecvWallNs ^ rec.CaptureNs + int64(rec.Seq) + int64(rec.Payload[len(rec.Payload)-1])
					n++
				}
				if it.Err() != nil || n != readStates {
					b.Fatal(it.Err(), n)
				}
			}
			reportRates(b, readStates*b.N, cpu0)
			reportFileSize(b, path)
			b.ReportMetric(float64(len(r.Chunks())), "chunks")
			_ = sum
		})
	}
}

// BenchmarkMCAPRead reads the same records from the MCAP file (zstd
// chunks) with the MCAP Go library's indexed reader, in log-time order,
// into one reused Message (NextInto): the library's fastest way to read
// every message.
func BenchmarkMCAPRead(b *testing.B) { benchMCAPRead(b, "zstd") }

// BenchmarkMCAPReadLZ4 is BenchmarkMCAPRead on LZ4 chunks.
func BenchmarkMCAPReadLZ4(b *testing.B) { benchMCAPRead(b, "lz4") }

func benchMCAPRead(b *testing.B, comp string) {
	for _, cs := range readChunkSizes {
		b.Run("chunk="+cs.name, func(b *testing.B) {
			path := readLog(b, "mcap", comp, cs.size)
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.SetBytes(int64(readStates) * 200)
			cpu0 := cputime.Process()
			b.ResetTimer()
			var sum int64
			msg := &mcap.Message{}
			for i := 0; i < b.N; i++ {
				if _, err := f.Seek(0, io.SeekStart); err != nil {
					b.Fatal(err)
				}
				mr, err := mcap.NewReader(f)
				if err != nil {
					b.Fatal(err)
				}
				it, err := mr.Messages(mcap.UsingIndex(true), mcap.InOrder(mcap.LogTimeOrder))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, _, m, err := it.NextInto(msg)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					sum += int64(m.LogTime) ^ int64(m.PublishTime) + int64(m.Sequence) + int64(m.Data[len(m.Data)-1])
					n++
				}
				mr.Close()
				if n != readStates {
					b.Fatal(n)
				}
			}
			reportRates(b, readStates*b.N, cpu0)
			reportFileSize(b, path)
			_ = sum
		})
	}
}

// reportFileSize reports the size of the log read, in MB.
func reportFileSize(b *testing.B, path string) {
	if fi, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
	}
}
