package parquetexport

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// Any header and payload, under any registered schema: the decoded
// columns get one value each or none (the record did not decode), never
// a panic.
func FuzzDecoded(f *testing.F) {
	st := codec.State{Seq: 1, TNs: 2, Sensors: []codec.Sensor{{ID: 1, TNs: 3}}}
	h := codec.NewFrameHeader(1, 2, 3, 4, 5, codec.RGB8)
	f.Add([]byte{}, codec.AppendState(nil, &st))
	f.Add(codec.AppendFrameHeader(nil, &h), make([]byte, 60))
	f.Add([]byte{}, codec.AppendClockProbe(nil, codec.ClockProbe{T1Ns: 1, T2Ns: 2, T3Ns: 3, T4Ns: 4}))
	f.Add([]byte{}, codec.AppendTimeReply(nil, codec.TimeReply{T2Ns: 1, T3Ns: 2}))
	f.Add([]byte("VRFR"), []byte("VRST\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, header, payload []byte) {
		for schema, d := range registry {
			b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(d.Fields(), nil))
			ok := d.Append(b.Fields(), &logfmt.Record{Header: header, Payload: payload})
			want := 0
			if ok {
				want = 1
			}
			for i, fb := range b.Fields() {
				if fb.Len() != want {
					t.Fatalf("%s: decoded %v, column %d has %d values", schema, ok, i, fb.Len())
				}
			}
			b.Release()
		}
	})
}
