package codec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// addVectors seeds a fuzz corpus with every binary test vector.
func addVectors(f *testing.F, suffix string) {
	names, _ := filepath.Glob(filepath.Join(vectorDir, "*"+suffix))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b)
		}
	}
}

// FuzzDecodeState: never panics; every accepted buffer re-encodes to itself;
// every rejection is a DecodeError with an offset inside the buffer's layout;
// the stamp-only path agrees with the full decode.
func FuzzDecodeState(f *testing.F) {
	addVectors(f, ".bin")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeState(b, 0)
		seq, tns, serr := StateStamp(b)
		if (err == nil) != (serr == nil) {
			t.Fatalf("full decode %v, stamp decode %v", err, serr)
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(b) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		if seq != s.Seq || tns != s.TNs {
			t.Fatal("stamp path disagrees with full decode")
		}
		if re := AppendState(nil, &s); !bytes.Equal(re, b) {
			t.Fatal("re-encoding differs")
		}
		c := bytes.Clone(b)
		if err := ShiftState(c, 7); err != nil {
			t.Fatal(err)
		}
		if err := ShiftState(c, -7); err != nil || !bytes.Equal(c, b) {
			t.Fatal("restamp is not reversible")
		}
	})
}

// FuzzDecodeFrame: header and payload from one input split at a fuzzed point.
func FuzzDecodeFrame(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join(vectorDir, "*.header.bin"))
	for _, n := range names {
		h, _ := os.ReadFile(n)
		p, _ := os.ReadFile(n[:len(n)-len(".header.bin")] + ".payload.bin")
		f.Add(append(h, p...), uint16(len(h)))
	}
	f.Fuzz(func(t *testing.T, b []byte, split uint16) {
		n := min(int(split), len(b))
		h, p := b[:n], b[n:]
		fr, err := DecodeFrame(h, p, 0)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		if uint64(len(fr.Pixels)) != fr.DataSize || fr.DataSize != uint64(fr.Stride)*uint64(fr.Height) {
			t.Fatal("accepted inconsistent sizes")
		}
		if re := AppendFrameHeader(nil, &fr.FrameHeader); !bytes.Equal(re, h) {
			t.Fatal("re-encoding differs")
		}
	})
}

// FuzzTime: conversions round-trip exactly or report overflow.
func FuzzTime(f *testing.F) {
	f.Add(int64(0), "1.5")
	f.Add(int64(-1), "-0.000000001")
	f.Add(int64(1_700_000_000_123_456_789), "2023-11-14T22:13:20.123456789Z")
	f.Fuzz(func(t *testing.T, ns int64, s string) {
		if back, err := UTSToUnixNs(UnixNsToUTS(ns)); err == nil && back != ns-((ns%100)+100)%100 {
			t.Fatalf("UTS round trip %d → %d", ns, back)
		}
		if back, err := ParseSeconds(FormatSeconds(ns)); err != nil || back != ns {
			t.Fatalf("seconds round trip %d → %d, %v", ns, back, err)
		}
		if back, err := ParseRFC3339(FormatRFC3339(ns)); err != nil || back != ns {
			t.Fatalf("rfc3339 round trip %d → %d, %v", ns, back, err)
		}
		if v, err := ParseSeconds(s); err == nil {
			if back, err := ParseSeconds(FormatSeconds(v)); err != nil || back != v {
				t.Fatalf("ParseSeconds(%q) = %d does not round trip", s, v)
			}
		}
		ParseRFC3339(s)
	})
}
