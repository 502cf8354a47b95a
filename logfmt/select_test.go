package logfmt

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/keyexpr"
)

// selectLog writes states (every 10 ms on r1 and r2), frames (every 50 ms)
// and a probe over one second, wall = 1.7e18 + mono.
func selectLog(t *testing.T) (string, []Record) {
	t.Helper()
	path := tempPath(t, "sel.vrlog")
	w, err := Create(path, WriterOptions{ChunkSize: 1024, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := w.AddChannel(Channel{Name: "vr/r1/state", Topic: "vr/r1/state", Transport: TransportZenoh})
	s2, _ := w.AddChannel(Channel{Name: "vr/r2/state", Topic: "vr/r2/state", Transport: TransportZenoh})
	fr, _ := w.AddChannel(Channel{Name: "front", Topic: "vr/r1/camera/front", Transport: TransportIceoryx2})
	pr, _ := w.AddChannel(Channel{Name: "vrlog/clock/vr/r1/time", Topic: "vr/r1/time", Transport: TransportInternal})
	var all []Record
	for i := 0; i < 100; i++ {
		mono := int64(1e9 + i*10e6)
		for _, ch := range []uint16{s1, s2, fr, pr} {
			if (ch == fr && i%5 != 0) || (ch == pr && i%50 != 0) {
				continue
			}
			r := Record{Channel: ch, RecvMonoNs: mono + int64(ch), RecvWallNs: 1_700_000_000e9 + mono + int64(ch), Payload: []byte{byte(i)}}
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
			all = append(all, r)
		}
	}
	w.AddDrops(fr, 7)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, all
}

func names(r *Reader, cs []Channel) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestSelectChannels(t *testing.T) {
	path, _ := selectLog(t)
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		sel  Select
		want []string
	}{
		{Select{}, []string{"vr/r1/state", "vr/r2/state", "front", "vrlog/clock/vr/r1/time"}},
		{Select{DataOnly: true}, []string{"vr/r1/state", "vr/r2/state", "front"}},
		{Select{Channels: []string{"vr/*/state"}}, []string{"vr/r1/state", "vr/r2/state"}},
		{Select{Channels: []string{"vr/r1/**"}}, []string{"vr/r1/state", "front", "vrlog/clock/vr/r1/time"}}, // by topic too
		{Select{Channels: []string{"vr/r1/**"}, DataOnly: true}, []string{"vr/r1/state", "front"}},
		{Select{Channels: []string{"3", "vr/r2/state"}}, []string{"vr/r2/state", "front"}},
		{Select{Channels: []string{"**/time"}}, []string{"vrlog/clock/vr/r1/time"}},
	} {
		sel, err := r.Select(c.sel)
		if err != nil {
			t.Fatalf("%+v: %v", c.sel, err)
		}
		if got := names(r, sel.Channels); !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.sel.Channels, got, c.want)
		}
	}
	_, err = r.Select(Select{Channels: []string{"vr/*/state", "vr/r9/state"}})
	var nm *keyexpr.NoMatchError
	if !errors.As(err, &nm) || nm.Pattern != "vr/r9/state" || !strings.Contains(err.Error(), "vr/r1/state, vr/r2/state, front") {
		t.Fatalf("no match: %v", err)
	}
	if _, err := r.Select(Select{Channels: []string{"**/time"}, DataOnly: true}); !errors.Is(err, keyexpr.ErrNoMatch) ||
		!strings.Contains(err.Error(), "no data channel") {
		t.Fatalf("an internal channel selected as data: %v", err)
	}
	if _, err := r.Select(Select{Channels: []string{"vr/r1*"}}); !errors.Is(err, keyexpr.ErrSyntax) {
		t.Fatalf("bad pattern: %v", err)
	}
	if s := r.StatsOf(3); s.Drops != 7 || s.Channel != 3 || r.StatsOf(99).Records != 0 {
		t.Fatalf("StatsOf: %+v", s)
	}
	if c, err := r.Channel(3); err != nil || c.Name != "front" {
		t.Fatalf("Channel: %v %v", c, err)
	}
	if _, err := r.Channel(9); !errors.Is(err, ErrUnknownChannel) {
		t.Fatal("Channel(9)")
	}
}

func TestSelectWindowOnTheWallClock(t *testing.T) {
	path, all := selectLog(t)
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start, ok := r.Start()
	if !ok || start != 1_700_000_000e9+1e9+1 {
		t.Fatalf("Start %d", start)
	}
	w, _ := ParseWindow("0.2", "0.5", "")
	sel, err := r.Select(Select{Channels: []string{"vr/r1/state", "front"}, Window: w})
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, rec := range all {
		if (rec.Channel == 1 || rec.Channel == 3) && rec.RecvWallNs >= start+200e6 && rec.RecvWallNs < start+500e6 {
			want = append(want, rec.RecvWallNs)
		}
	}
	var got []int64
	it := r.Read(sel)
	for it.Next() {
		got = append(got, it.Record().RecvWallNs)
	}
	if it.Err() != nil || !slices.Equal(got, want) || len(got) != 30+6 {
		t.Fatalf("%d records %v, want %d", len(got), it.Err(), len(want))
	}
	for _, win := range [][2]string{{"1.5", ""}, {"", "-1"}, {"2030-01-01T00:00:00Z", ""}} {
		w, _ := ParseWindow(win[0], win[1], "")
		if _, err := r.Select(Select{Window: w}); !errors.Is(err, ErrOutsideLog) {
			t.Errorf("window %v outside the log: %v", win, err)
		}
	}
	if empty := (&Selection{}); r.Read(empty).Next() {
		t.Fatal("an empty selection read something")
	}
}
