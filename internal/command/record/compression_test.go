package record

import (
	"testing"

	"github.com/vrlog/vrlog/logfmt"
)

func TestParseCompression(t *testing.T) {
	for _, tc := range []struct {
		in      string
		pattern string
		want    logfmt.Compression
	}{
		{"lz4", "", logfmt.Compression{Kind: logfmt.CompressionLZ4}},
		{"vr/*/state=lz4", "vr/*/state", logfmt.Compression{Kind: logfmt.CompressionLZ4}},
		{"none", "", logfmt.Compression{}},
		{"zstd", "", logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}},
		{"a/b=zstd-3", "a/b", logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 3}},
	} {
		got, err := parseCompression(tc.in)
		if err != nil || got.Pattern != tc.pattern || got.Compression != tc.want {
			t.Errorf("%q: %+v, %v; want %q %v", tc.in, got, err, tc.pattern, tc.want)
		}
	}
	for _, bad := range []string{"lz5", "zstd-5", "lz4-1", "a//b=lz4"} {
		if _, err := parseCompression(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
