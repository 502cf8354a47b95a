package logfmt

import (
	"slices"
	"testing"
)

func TestMergeOrdersByKeyThenInput(t *testing.T) {
	var paths []string
	for k, monos := range [][]int64{{1, 4, 4, 9}, {2, 4, 8}, {}} {
		p := tempPath(t, "in.vrlog")
		w, _ := Create(p, WriterOptions{FlushInterval: -1, ChunkSize: 64})
		id, _ := w.AddChannel(Channel{Name: "c"})
		for _, m := range monos {
			w.Write(&Record{Channel: id, RecvMonoNs: m, RecvWallNs: m, Payload: []byte{byte(k)}})
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var its []*Iterator
	for _, p := range paths {
		r, _ := Open(p, ReaderOptions{})
		defer r.Close()
		its = append(its, r.Records(Filter{}))
	}
	// Input 1's clock runs 10 ahead: shift it back, as replay does.
	m := Merge(its, func(in int, r *Record) int64 {
		if in == 1 {
			return r.RecvMonoNs - 10
		}
		return r.RecvMonoNs
	})
	var keys []int64
	var ins []int
	for m.Next() {
		keys, ins = append(keys, m.Key()), append(ins, m.Input())
		if int(m.Record().Payload[0]) != m.Input() {
			t.Fatal("record of another input")
		}
	}
	if m.Err() != nil || !slices.Equal(keys, []int64{-8, -6, -2, 1, 4, 4, 9}) || !slices.Equal(ins, []int{1, 1, 1, 0, 0, 0, 0}) {
		t.Fatalf("keys %v inputs %v %v", keys, ins, m.Err())
	}
	if m.Next() {
		t.Fatal("Next after the end")
	}
	if Merge(nil, nil).Next() {
		t.Fatal("empty merge")
	}
}
