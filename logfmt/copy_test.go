package logfmt

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

func readNames(t *testing.T, path string) (recs []string, r *Reader) {
	t.Helper()
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	it := r.Records(Filter{})
	for it.Next() {
		c, _ := r.Channel(it.Record().Channel)
		recs = append(recs, c.Name)
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	return recs, r
}

func TestCopyAndMergeGiveBackTheLog(t *testing.T) {
	path, all := selectLog(t)
	src, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	start, _ := src.Start()
	// Cut at 0.5 s into two halves, then merge them.
	var halves []string
	for i, win := range [][2]string{{"", "0.5"}, {"0.5", ""}} {
		w, _ := ParseWindow(win[0], win[1], "")
		sel, err := src.Select(Select{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		p := tempPath(t, "half.vrlog")
		out, err := Create(p, WriterOptions{FlushInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		st, err := Copy(out, src, sel)
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, rec := range all {
			if (i == 0) == (rec.RecvWallNs < start+500e6) {
				n++
			}
		}
		if st.Records != uint64(n) || st.Channels != 4 {
			t.Fatalf("half %d: %+v, want %d records", i, st, n)
		}
		halves = append(halves, p)
	}
	var rs []*Reader
	for _, p := range halves {
		r, _ := Open(p, ReaderOptions{})
		defer r.Close()
		if r.StatsOf(3).Drops != 0 {
			t.Fatal("a windowed cut kept the whole recording's drops")
		}
		rs = append(rs, r)
	}
	p := tempPath(t, "merged.vrlog")
	out, _ := Create(p, WriterOptions{FlushInterval: -1})
	st, err := MergeCopy(out, rs)
	if err != nil || out.Close() != nil {
		t.Fatal(err)
	}
	if st.Records != uint64(len(all)) || st.Channels != 4 || len(st.Renamed) != 0 {
		t.Fatalf("%+v", st)
	}
	got, mr := readNames(t, p)
	defer mr.Close()
	want, sr := readNames(t, path)
	defer sr.Close()
	if !slices.Equal(got, want) {
		t.Fatal("merge(cut, cut) differs from the log")
	}

	// A whole-log copy keeps the drops; merging a log with itself renames
	// nothing (same streams) and doubles the records and drops.
	sel, _ := src.Select(Select{Channels: []string{"front"}})
	p = tempPath(t, "front.vrlog")
	out, _ = Create(p, WriterOptions{FlushInterval: -1})
	if _, err := Copy(out, src, sel); err != nil || out.Close() != nil {
		t.Fatal(err)
	}
	fr, _ := Open(p, ReaderOptions{})
	defer fr.Close()
	if len(fr.Channels()) != 1 || fr.Channels()[0].ID != 1 || fr.StatsOf(1).Drops != 7 {
		t.Fatalf("copy of one channel: %+v %+v", fr.Channels(), fr.StatsOf(1))
	}
	p = tempPath(t, "twice.vrlog")
	out, _ = Create(p, WriterOptions{FlushInterval: -1})
	st, err = MergeCopy(out, []*Reader{src, fr})
	if err != nil || out.Close() != nil {
		t.Fatal(err)
	}
	tw, _ := Open(p, ReaderOptions{})
	defer tw.Close()
	if st.Channels != 4 || tw.StatsOf(3).Drops != 14 || tw.StatsOf(3).Records != 40 {
		t.Fatalf("%+v %+v", st, tw.StatsOf(3))
	}
}

func TestMergeRenamesADifferentStreamOfTheSameName(t *testing.T) {
	mk := func(topic string) string {
		p := tempPath(t, "m.vrlog")
		w, _ := Create(p, WriterOptions{FlushInterval: -1})
		id, _ := w.AddChannel(Channel{Name: "cam", Topic: topic})
		w.Write(&Record{Channel: id, RecvMonoNs: 1, RecvWallNs: 1})
		w.Close()
		return p
	}
	a, _ := Open(mk("a"), ReaderOptions{})
	b, _ := Open(mk("b"), ReaderOptions{})
	defer a.Close()
	defer b.Close()
	out, _ := Create(tempPath(t, "o.vrlog"), WriterOptions{FlushInterval: -1})
	st, err := MergeCopy(out, []*Reader{a, b})
	out.Close()
	if err != nil || len(st.Renamed) != 1 || st.Renamed[0] != (Renamed{Input: 1, From: "cam", To: "cam@2"}) {
		t.Fatalf("%+v %v", st, err)
	}
}

// Channels kept apart stay one per input even when they are the same
// stream (a later input's renamed and marked Apart); a restamp changes the
// records before they are ordered, and the plan names every channel
// before anything is written.
func TestMergePlanKeepsApartAndRestamps(t *testing.T) {
	mk := func(walls ...int64) string {
		p := tempPath(t, "m.vrlog")
		w, _ := Create(p, WriterOptions{FlushInterval: -1})
		probe, _ := w.AddChannel(Channel{Name: "probe", Topic: "t", Schema: "p"})
		data, _ := w.AddChannel(Channel{Name: "data", Topic: "d"})
		w.AddDrops(data, 1)
		for _, wall := range walls {
			w.Write(&Record{Channel: data, RecvWallNs: wall, RecvMonoNs: wall, Payload: []byte{byte(wall)}})
		}
		w.Write(&Record{Channel: probe, RecvWallNs: walls[0], RecvMonoNs: walls[0]})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, _ := Open(mk(10, 20, 30), ReaderOptions{})
	b, _ := Open(mk(105, 115, 125), ReaderOptions{}) // its clock runs 100 ahead
	defer a.Close()
	defer b.Close()
	plan, err := PlanMerge([]*Reader{a, b}, MergeOptions{
		Apart:   func(c Channel) bool { return c.Name == "probe" },
		Restamp: func(in int, r *Record) { r.RecvWallNs -= int64(in) * 100; r.RecvMonoNs -= int64(in) * 100 },
	})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Name(0, 1) != "probe" || plan.Name(1, 1) != "probe@2" || plan.Name(1, 2) != "data" || plan.Name(1, 9) != "" {
		t.Fatalf("names %q %q %q", plan.Name(0, 1), plan.Name(1, 1), plan.Name(1, 2))
	}
	if rn := plan.Renamed(); len(rn) != 1 || rn[0] != (Renamed{Input: 1, From: "probe", To: "probe@2", Apart: true}) {
		t.Fatalf("renamed %+v", rn)
	}
	p := tempPath(t, "o.vrlog")
	out, _ := Create(p, WriterOptions{FlushInterval: -1})
	st, err := plan.Copy(out)
	if err != nil || out.Close() != nil || st.Records != 8 || st.Channels != 3 {
		t.Fatalf("%+v %v", st, err)
	}
	r, err := Open(p, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var walls []int64
	var payloads []byte
	data := uint16(0)
	it := r.Records(Filter{})
	for it.Next() {
		if c, _ := r.Channel(it.Record().Channel); c.Name == "data" {
			data = c.ID
			walls, payloads = append(walls, it.Record().RecvWallNs), append(payloads, it.Record().Payload[0])
		}
	}
	// Ordered by the restamped stamps: the inputs interleave.
	if !slices.Equal(walls, []int64{5, 10, 15, 20, 25, 30}) || !slices.Equal(payloads, []byte{105, 10, 115, 20, 125, 30}) {
		t.Fatalf("walls %v payloads %v", walls, payloads)
	}
	if it.Err() != nil || r.StatsOf(data).Drops != 2 {
		t.Fatalf("drops %d, %v", r.StatsOf(data).Drops, it.Err())
	}
}

// A renamed channel whose new name is taken is an error, not a collision
// in the output.
func TestMergePlanRenameTaken(t *testing.T) {
	mk := func(names ...string) *Reader {
		p := tempPath(t, "m.vrlog")
		w, _ := Create(p, WriterOptions{FlushInterval: -1})
		for _, n := range names {
			id, _ := w.AddChannel(Channel{Name: n, Topic: n + "/" + p})
			w.Write(&Record{Channel: id, RecvMonoNs: 1, RecvWallNs: 1})
		}
		w.Close()
		r, err := Open(p, ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	if _, err := PlanMerge([]*Reader{mk("cam", "cam@2"), mk("cam")}, MergeOptions{}); err == nil {
		t.Fatal("cam@2 renamed onto an existing cam@2")
	} else {
		t.Log(err)
	}
}

// Copy and a merge that load chunks ahead (Selection.Workers,
// MergeOptions.Workers) write the records they write without, and a write
// error that stops them early stops the loaders too (goleak at exit).
func TestCopyAndMergeReadAhead(t *testing.T) {
	path := workersLog(t)
	src, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	write := func(workers int, merge bool) []Record {
		p := tempPath(t, "out.vrlog")
		out, err := Create(p, WriterOptions{FlushInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		if merge {
			plan, err := PlanMerge([]*Reader{src, src}, MergeOptions{Workers: workers})
			if err == nil {
				_, err = plan.Copy(out)
			}
			if err != nil {
				t.Fatal(err)
			}
		} else {
			sel, err := src.Select(Select{})
			if err != nil {
				t.Fatal(err)
			}
			sel.Workers = workers
			if _, err := Copy(out, src, sel); err != nil {
				t.Fatal(err)
			}
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		recs, err, _ := iterate(t, p, ReaderOptions{}, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	for _, merge := range []bool{false, true} {
		want := write(0, merge)
		if got := write(2, merge); !reflect.DeepEqual(got, want) || len(want) < 20_000 {
			t.Fatalf("merge %v: %d records with read-ahead, %d without", merge, len(got), len(want))
		}
	}

	// A sink that fails once the header and a chunk or two are written:
	// the copies stop in their record loops, read-ahead running.
	for _, merge := range []bool{false, true} {
		w, err := NewWriter(&failAfter{n: 32 << 10}, WriterOptions{FlushInterval: -1, ChunkSize: 8 << 10})
		if err != nil {
			t.Fatal(err)
		}
		var st CopyStats
		if merge {
			plan, _ := PlanMerge([]*Reader{src, src}, MergeOptions{Workers: 2})
			st, err = plan.Copy(w)
		} else {
			sel, _ := src.Select(Select{})
			sel.Workers = 2
			st, err = Copy(w, src, sel)
		}
		if err == nil || st.Records == 0 {
			t.Fatalf("merge %v: %d records, err %v; want a write error after some", merge, st.Records, err)
		}
		if w.Close() == nil { // stops the writer's goroutines
			t.Fatal("Close of a failed writer: no error")
		}
	}
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errors.New("sink full")
	}
	f.n -= len(p)
	return len(p), nil
}

// A sample two inputs recorded (two recorders of one stream) is merged
// once: the second copy, from another input, is left out and counted;
// a sample sent twice and recorded twice by one input is kept twice (the
// publisher's duplicate), as are records with nothing to tell them apart
// and samples of another publisher. With Hosts, the channels kept apart
// are one per host.
func TestMergeLeavesOutSecondCopies(t *testing.T) {
	type rec struct {
		wall, capture int64
		seq           uint64
		pub           string
	}
	mk := func(recs []rec, bare int) *Reader {
		p := tempPath(t, "m.vrlog")
		w, _ := Create(p, WriterOptions{FlushInterval: -1})
		probe, _ := w.AddChannel(Channel{Name: "probe", Topic: "t", Schema: "p"})
		s, _ := w.AddChannel(Channel{Name: "s", Topic: "s"})
		raw, _ := w.AddChannel(Channel{Name: "raw", Topic: "raw"})
		for _, r := range recs {
			w.Write(&Record{Channel: s, RecvWallNs: r.wall, RecvMonoNs: r.wall, CaptureNs: r.capture, Seq: r.seq, HasStamp: true, PublisherID: []byte(r.pub)})
		}
		for i := range bare {
			w.Write(&Record{Channel: raw, RecvWallNs: int64(i), RecvMonoNs: int64(i), Payload: []byte{1}})
		}
		w.Write(&Record{Channel: probe, RecvWallNs: 1, RecvMonoNs: 1})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := Open(p, ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	a := mk([]rec{{10, 1, 1, "P"}, {20, 2, 2, "P"}, {21, 2, 2, "P"}, {30, 3, 3, "P"}}, 3)
	b := mk([]rec{{12, 1, 1, "P"}, {23, 2, 2, "P"}, {32, 3, 3, "P"}, {33, 3, 3, "Q"}, {40, 4, 4, "P"},
		{30 + DedupWindow, 1, 1, "P"}}, 3) // seq 1 again, long after: another sample
	c := mk(nil, 0) // the same host as a
	plan, err := PlanMerge([]*Reader{a, b, c}, MergeOptions{Apart: func(c Channel) bool { return c.Name == "probe" }, Hosts: []int{0, 1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Name(0, 1) != "probe" || plan.Name(2, 1) != "probe" || plan.Name(1, 1) != "probe@2" {
		t.Fatalf("probes %q %q %q", plan.Name(0, 1), plan.Name(1, 1), plan.Name(2, 1))
	}
	p := tempPath(t, "o.vrlog")
	out, _ := Create(p, WriterOptions{FlushInterval: -1})
	st, err := plan.Copy(out)
	if err != nil || out.Close() != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Duplicates, []Duplicates{{Channel: "s", Records: 3}}) || st.Records != 7+6+3 {
		t.Fatalf("%+v", st)
	}
	r, err := Open(p, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []int64
	it := r.Records(Filter{})
	for it.Next() {
		if ch, _ := r.Channel(it.Record().Channel); ch.Name == "s" {
			got = append(got, it.Record().RecvWallNs)
		}
	}
	if want := []int64{10, 20, 21, 30, 33, 40, 30 + DedupWindow}; !slices.Equal(got, want) {
		t.Fatalf("merged receive stamps %v, want %v", got, want)
	}
}
