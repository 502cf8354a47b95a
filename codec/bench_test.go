package codec

import "testing"

// BenchmarkDecodeState: the full decode of a 200-byte state (4 sensors),
// reusing the destination; target ≥ 10 M states/s per core.
func BenchmarkDecodeState(b *testing.B) {
	buf := AppendState(nil, ptr(sampleState(4)))
	var s State
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if err := DecodeStateInto(&s, buf, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mstates/s")
}

// BenchmarkDecodeStateAlloc: the convenience form that allocates the sensors.
func BenchmarkDecodeStateAlloc(b *testing.B) {
	buf := AppendState(nil, ptr(sampleState(4)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeState(buf, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mstates/s")
}

// BenchmarkStateStamp: seq and t_ns only (record time, metadata path).
func BenchmarkStateStamp(b *testing.B) {
	buf := AppendState(nil, ptr(sampleState(4)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := StateStamp(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mstates/s")
}

// BenchmarkDecodeFrameHeader: header only, no pixel touched, 0 allocs.
func BenchmarkDecodeFrameHeader(b *testing.B) {
	buf := AppendFrameHeader(nil, ptr(NewFrameHeader(1, 2, 3, 1920, 1080, RGB8)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeFrameHeader(buf, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeState: what the simulator pays per state.
func BenchmarkEncodeState(b *testing.B) {
	s := sampleState(4)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendState(buf[:0], &s)
	}
}
