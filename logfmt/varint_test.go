package logfmt

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestVarint: the inlinable decoders agree with encoding/binary on valid,
// truncated and overlong input.
func TestVarint(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		ux, k := uvarint(b)
		wx, wk := binary.Uvarint(b)
		if (k > 0) != (wk > 0) || k > 0 && (ux != wx || k != wk) {
			t.Fatalf("uvarint(%x) = %d, %d; binary.Uvarint %d, %d", b, ux, k, wx, wk)
		}
		for pre := range 3 { // the word path, at an offset
			bb := append(make([]byte, pre), b...)
			ax, ak := uvarintWord(word8(bb, pre))
			if ak == 0 {
				ax, ak = uvarintSlow(bb[pre:])
			}
			if ak != k || (k > 0 && ax != ux) {
				t.Fatalf("uvarintWord(%x, %d) = %d, %d; uvarint %d, %d", bb, pre, ax, ak, ux, k)
			}
			if k > 0 && zigzag(ax) != int64(ux>>1)^-int64(ux&1) {
				t.Fatal("zigzag")
			}
		}
		sx, k := varint(b)
		wsx, wk := binary.Varint(b)
		if (k > 0) != (wk > 0) || k > 0 && (sx != wsx || k != wk) {
			t.Fatalf("varint(%x) = %d, %d; binary.Varint %d, %d", b, sx, k, wsx, wk)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, v := range []int64{0, 1, -1, 63, -64, 64, 1e6, -4e4, math.MaxInt64, math.MinInt64} {
		b := binary.AppendVarint(nil, v)
		check(b)
		check(b[:len(b)-1])
		check(append(b, 0x05))
	}
	for i := 0; i < 100000; i++ {
		b := make([]byte, rng.IntN(13))
		for j := range b {
			b[j] = byte(rng.Uint32())
			if rng.IntN(3) > 0 {
				b[j] |= 0x80
			}
		}
		check(b)
	}
	check([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	check([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02})
	check([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00})
}
