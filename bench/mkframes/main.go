// Command mkframes writes a camera-heavy log for the export and Python
// reader benchmarks (bench/downstream.sh, bench/pyread.sh): 1 kHz states
// (lz4 chunks, the recorder's default for states; -states to change) and
// 30 Hz RGB frames, stored raw (-frames none), lz4 or in zstd-1 chunks
// (-frames zstd, the recorder's default for iceoryx2 channels), until -mib
// MiB of pixels. Chunks are sealed every simulated second, as the recorder's flush timer
// does. The pixels are a moving gradient with a little noise, so zstd finds
// something to compress, as in a camera image.
//
//	go run ./bench/mkframes -o /var/tmp/frames.vrlog -mib 1024 -width 1920 -height 1080
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

func main() {
	out := flag.String("o", "", "output log (overwritten)")
	mib := flag.Int("mib", 1024, "MiB of frame pixels to write")
	width := flag.Uint("width", 1920, "frame width")
	height := flag.Uint("height", 1080, "frame height")
	frames := flag.String("frames", "none", "frame chunk compression: none, lz4 or zstd (zstd-1)")
	states := flag.String("states", "lz4", "state chunk compression: none, lz4 or zstd (zstd-1)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "mkframes: -o is required")
		os.Exit(2)
	}
	if err := run(*out, *mib, uint32(*width), uint32(*height), *frames, *states); err != nil {
		fmt.Fprintln(os.Stderr, "mkframes:", err)
		os.Exit(1)
	}
}

func run(path string, mib int, width, height uint32, frames, states string) error {
	fc, err := synth.ParseStore(frames)
	if err != nil {
		return fmt.Errorf("-frames %w", err)
	}
	sc, err := synth.ParseStore(states)
	if err != nil {
		return fmt.Errorf("-states %w", err)
	}
	w, err := logfmt.Create(path, logfmt.WriterOptions{FlushInterval: -1, Sync: logfmt.SyncNone, ChunkSize: 8 << 20, Overwrite: true})
	if err != nil {
		return err
	}
	st, err := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState,
		Compression: sc})
	if err != nil {
		return err
	}
	fr, err := w.AddChannel(logfmt.Channel{Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front",
		Schema: codec.SchemaFrame, Compression: fc})
	if err != nil {
		return err
	}
	const t0 = int64(1_764_446_400_000_000_000)
	fh := codec.NewFrameHeader(0, 0, 1, width, height, codec.RGB8)
	pix := make([]byte, fh.DataSize)
	rng := rand.New(rand.NewPCG(1, 2))
	var s codec.State
	s.Orientation.W = 1
	var payload []byte
	for i, total := 0, int64(0); total < int64(mib)<<20; i++ {
		tc := t0 + int64(i)*1_000_000
		// A frame captured on tick i-5 arrives 4.7 ms after it: before
		// state i, in receive order, as the recorder writes.
		if i >= 5 && (i-5)%33 == 0 {
			n := (i - 5) / 33
			for y := uint32(0); y < height; y++ {
				row := pix[y*fh.Stride : (y+1)*fh.Stride]
				for x := range row {
					row[x] = byte(x/3+int(y)+n) ^ byte(rng.Uint32()&3)
				}
			}
			fc := tc - 5_000_000
			fh.Seq, fh.TNs = uint64(n), fc
			if err := w.Write(&logfmt.Record{Channel: fr, RecvWallNs: fc + 5_000_000, RecvMonoNs: int64(i-5)*1_000_000 + 4_700_000, CaptureNs: fc,
				Seq: fh.Seq, HasStamp: true, Header: codec.AppendFrameHeader(nil, &fh), Payload: pix}); err != nil {
				return err
			}
			total += int64(len(pix))
		}
		s.Seq, s.TNs, s.EstimateTNs = uint64(i), tc, tc-500_000
		s.Position.X = float64(i) * 1e-3
		payload = codec.AppendState(payload[:0], &s)
		if err := w.Write(&logfmt.Record{Channel: st, RecvWallNs: tc + 300_000, RecvMonoNs: int64(i) * 1_000_000, CaptureNs: tc,
			Seq: s.Seq, HasStamp: true, Payload: payload}); err != nil {
			return err
		}
		if i%1000 == 999 { // the recorder seals every FlushInterval (1 s)
			if err := w.Seal(); err != nil {
				return err
			}
		}
	}
	return w.Close()
}
