package recorder

import (
	"testing"

	"github.com/vrlog/vrlog/logfmt"
)

// States (zenoh) are stored LZ4 and frames (iceoryx2) zstd-1 unless a
// --compression pattern says otherwise; the last match wins.
func TestChannelCompression(t *testing.T) {
	lz4 := logfmt.Compression{Kind: logfmt.CompressionLZ4}
	zstd1 := logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}
	none := logfmt.Compression{}
	for _, tc := range []struct {
		cfg          []ChannelCompression
		state, frame logfmt.Compression
	}{
		{nil, lz4, zstd1},
		{[]ChannelCompression{{Pattern: "vr/*/camera/*", Compression: none}}, lz4, none},
		{[]ChannelCompression{{Compression: zstd1}, {Pattern: "vr/*/camera/*", Compression: lz4}}, zstd1, lz4},
	} {
		comp, err := compileCompression(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		b := &books{comp: comp}
		if got := b.compression("vr/r1/state", "vr/r1/state", logfmt.TransportZenoh); got != tc.state {
			t.Errorf("%+v: state stored %v, want %v", tc.cfg, got, tc.state)
		}
		if got := b.compression("vr/r1/camera/front", "vr/r1/camera/front", logfmt.TransportIceoryx2); got != tc.frame {
			t.Errorf("%+v: frame stored %v, want %v", tc.cfg, got, tc.frame)
		}
	}
}
