package logtools

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/logfmt"
)

// BenchmarkInfoLargeLog measures `vrlog info` (open from the footer index,
// print the summary) on a multi-GB log: VRLOG_BENCH_GB gigabytes (default
// 1.5) of uncompressed 1080p RGB frames at 30 Hz plus 1 kHz states, written
// to a temporary directory once. Target (PRODUCT.md §5): ≤ 50 ms.
//
//	go test -run '^$' -bench InfoLargeLog ./internal/command/logtools/
func BenchmarkInfoLargeLog(b *testing.B) {
	gb := 1.5
	if s := os.Getenv("VRLOG_BENCH_GB"); s != "" {
		if _, err := fmt.Sscan(s, &gb); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(b.TempDir(), "large.vrlog")
	w, err := logfmt.Create(path, logfmt.WriterOptions{FlushInterval: -1, Sync: logfmt.SyncNone, ChunkSize: 8 << 20})
	if err != nil {
		b.Fatal(err)
	}
	st, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState,
		Compression: logfmt.Compression{Kind: logfmt.CompressionZstd}})
	fr, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame})
	fh := codec.NewFrameHeader(0, 0, 1, 1920, 1080, codec.RGB8)
	pix := make([]byte, fh.DataSize)
	var s codec.State
	var total int64
	start := time.Now()
	for i := 0; total < int64(gb*(1<<30)); i++ {
		tc := t0 + int64(i)*1_000_000
		s.Seq, s.TNs = uint64(i), tc
		if err := w.Write(&logfmt.Record{Channel: st, RecvWallNs: tc + 1000, RecvMonoNs: int64(i) * 1_000_000, CaptureNs: tc, Seq: uint64(i), HasStamp: true,
			Payload: codec.AppendState(nil, &s)}); err != nil {
			b.Fatal(err)
		}
		if i%33 == 0 {
			fh.Seq, fh.TNs = uint64(i/33), tc
			if err := w.Write(&logfmt.Record{Channel: fr, RecvWallNs: tc + 5000, RecvMonoNs: int64(i)*1_000_000 + 4000, CaptureNs: tc, Seq: fh.Seq, HasStamp: true,
				Header: codec.AppendFrameHeader(nil, &fh), Payload: pix}); err != nil {
				b.Fatal(err)
			}
			total += int64(len(pix))
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(path)
	b.Logf("wrote %.2f GB in %v", float64(fi.Size())/1e9, time.Since(start).Round(time.Millisecond))
	app := &cli.App{Name: "vrlog", Commands: Commands(), Writer: io.Discard, ErrWriter: io.Discard}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := cliutil.Execute(app, []string{"vrlog", "info", path}); code != 0 {
			b.Fatalf("info: exit %d", code)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/info")
	b.ReportMetric(float64(fi.Size())/1e9, "GB")
}
