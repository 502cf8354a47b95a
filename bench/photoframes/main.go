// Command photoframes writes a camera log from a photograph, for choosing
// export's default compression on realistic frames (docs/log-tools.md):
// 10 s of 1 kHz states and 30 Hz 1280×720 RGB frames (raw in the log),
// each frame the photo panned by a few pixels, with sensor noise of ±N
// (0: a rendered image, as a simulator publishes; 2: a camera's).
//
//	go run ./bench/photoframes -photo some.jpg -noise 2 -o /var/tmp/photo.vrlog
package main

import (
	"flag"
	"fmt"
	"image/jpeg"
	"math/rand/v2"
	"os"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

func main() {
	photo := flag.String("photo", "", "a JPEG photograph")
	noise := flag.Int("noise", 0, "sensor noise, ± per byte")
	out := flag.String("o", "", "output log (overwritten)")
	flag.Parse()
	if err := run(*photo, *noise, *out); err != nil {
		fmt.Fprintln(os.Stderr, "photoframes:", err)
		os.Exit(1)
	}
}

func run(photo string, noise int, out string) error {
	const width, height = 1280, 720
	f, err := os.Open(photo)
	if err != nil {
		return err
	}
	img, err := jpeg.Decode(f)
	f.Close()
	if err != nil {
		return err
	}
	b := img.Bounds()
	src := make([]byte, width*height*3)
	for y := range height {
		for x := range width {
			r, g, bl, _ := img.At(b.Min.X+x*b.Dx()/width, b.Min.Y+y*b.Dy()/height).RGBA()
			o := (y*width + x) * 3
			src[o], src[o+1], src[o+2] = byte(r>>8), byte(g>>8), byte(bl>>8)
		}
	}
	w, err := logfmt.Create(out, logfmt.WriterOptions{FlushInterval: -1, Sync: logfmt.SyncNone, ChunkSize: 8 << 20, Overwrite: true})
	if err != nil {
		return err
	}
	st, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState,
		Compression: logfmt.Compression{Kind: logfmt.CompressionLZ4}})
	fr, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame})
	const t0 = int64(1_764_446_400_000_000_000)
	fh := codec.NewFrameHeader(0, 0, 1, width, height, codec.RGB8)
	pix := make([]byte, fh.DataSize)
	rng := rand.New(rand.NewPCG(1, 2))
	var s codec.State
	var payload []byte
	for i := range 10_000 {
		tc := t0 + int64(i)*1_000_000
		s.Seq, s.TNs = uint64(i), tc
		payload = codec.AppendState(payload[:0], &s)
		if err := w.Write(&logfmt.Record{Channel: st, RecvWallNs: tc + 300_000, RecvMonoNs: int64(i) * 1_000_000, CaptureNs: tc, Seq: s.Seq, HasStamp: true, Payload: payload}); err != nil {
			return err
		}
		if i%1000 == 999 {
			if err := w.Seal(); err != nil {
				return err
			}
		}
		if i%33 != 0 {
			continue
		}
		n := i / 33
		pan := (n % 40) * 3
		for k := range pix {
			v := int(src[(k+pan)%len(src)]) + rng.IntN(2*noise+1) - noise
			pix[k] = byte(min(max(v, 0), 255))
		}
		fh.Seq, fh.TNs = uint64(n), tc
		if err := w.Write(&logfmt.Record{Channel: fr, RecvWallNs: tc + 5_000_000, RecvMonoNs: int64(i)*1_000_000 + 4_700_000, CaptureNs: tc,
			Seq: fh.Seq, HasStamp: true, Header: codec.AppendFrameHeader(nil, &fh), Payload: pix}); err != nil {
			return err
		}
	}
	return w.Close()
}
