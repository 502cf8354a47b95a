package hostclock

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
)

const simT0 = 1_764_446_400_000_000_000 // the simulator's clock at the first sample

// host is one recorder host of a session: its clock runs offset behind
// the simulator's (simulator minus host), it receives one stream latency
// after capture (jitter: ± every other sample), and probes each service.
type host struct {
	offset, latency, jitter time.Duration
	channel                 string
	services                []string
	monoBase                int64  // its monotonic clock's origin, in wall time
	recording               string // its files' MetaRecording, if any
}

// write records 2 s of h's stream at 100 Hz and its probes at 10 Hz, in
// monotonic order, and opens the log.
func (h host) write(t *testing.T) (*logfmt.Reader, string) {
	t.Helper()
	rs, ps := h.split(t, 1)
	return rs[0], ps[0]
}

// split writes what write does into n files, as a recorder's splits:
// consecutive records, every file with every channel.
func (h host) split(t *testing.T, n int) ([]*logfmt.Reader, []string) {
	t.Helper()
	const data = 1
	probeIDs := []uint16{}
	for i := range h.services {
		probeIDs = append(probeIDs, uint16(2+i))
	}
	var recs []logfmt.Record
	hostWall := func(sim int64) int64 { return sim - h.offset.Nanoseconds() }
	for i := range 200 {
		capture := simT0 + int64(i)*10e6
		d := h.latency
		if i%2 == 1 {
			d += h.jitter
		}
		wall := hostWall(capture) + d.Nanoseconds()
		recs = append(recs, logfmt.Record{Channel: data, RecvWallNs: wall, RecvMonoNs: wall - h.monoBase, CaptureNs: capture,
			Seq: uint64(i), HasStamp: true, Payload: []byte(fmt.Sprint(i))})
	}
	for i := range 20 {
		for _, id := range probeIDs {
			// Slower back than there, so the estimate is off by a tenth of
			// the latency; every third probe queued 1 or 2 ms both ways.
			q := time.Duration(i%3) * time.Millisecond
			pr := probe(hostWall(simT0+int64(i)*100e6), h.offset, h.latency*4/5+q, h.latency*6/5+q)
			recs = append(recs, logfmt.Record{Channel: id, RecvWallNs: pr.T4, RecvMonoNs: pr.T4 - h.monoBase,
				Payload: codec.AppendClockProbe(nil, codec.ClockProbe{T1Ns: pr.T1, T2Ns: pr.T2, T3Ns: pr.T3, T4Ns: pr.T4})})
		}
	}
	slices.SortStableFunc(recs, func(a, b logfmt.Record) int { return cmp.Compare(a.RecvMonoNs, b.RecvMonoNs) })
	dir := t.TempDir()
	var rs []*logfmt.Reader
	var ps []string
	for part := range n {
		p := filepath.Join(dir, fmt.Sprintf("host_%03d.vrlog", part))
		meta := map[string]string{}
		if h.recording != "" {
			meta[MetaRecording] = h.recording
		}
		w, err := logfmt.Create(p, logfmt.WriterOptions{FlushInterval: -1, ChunkSize: 4096, Metadata: meta})
		if err != nil {
			t.Fatal(err)
		}
		w.AddChannel(logfmt.Channel{Name: h.channel, Transport: logfmt.TransportZenoh, Topic: h.channel, Schema: "test.Sample/1"})
		for _, s := range h.services {
			w.AddChannel(logfmt.Channel{Name: "vrlog/clock/" + s, Transport: logfmt.TransportInternal, Topic: s, Schema: codec.SchemaClockProbe})
		}
		for i := part * len(recs) / n; i < (part+1)*len(recs)/n; i++ {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := logfmt.Open(p, logfmt.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		rs, ps = append(rs, r), append(ps, p)
	}
	return rs, ps
}

// Two hosts, one recording states 370 ms behind the simulator's clock
// through a slow link, one recording frames 150 ms ahead of it locally:
// merged on the simulator's clock, each host's offset comes back within
// RTT/2, records are in simulator-time order on both receive clocks, each
// host's latency is its transport's, each host's receive intervals are
// kept, and the probes stay per host with their payloads as recorded.
func TestAlignMergesOnTheSimulatorsClock(t *testing.T) {
	hosts := []host{
		{offset: 370 * time.Millisecond, latency: 50 * time.Millisecond, jitter: 8 * time.Millisecond, channel: "vr/r1/state",
			services: []string{"vr/r1/time"}, monoBase: simT0 - 3_600e9},
		{offset: -150 * time.Millisecond, latency: 300 * time.Microsecond, jitter: 100 * time.Microsecond, channel: "vr/r1/camera/front",
			services: []string{"vr/r1/time"}, monoBase: simT0 - 86_400e9},
	}
	var rs []*logfmt.Reader
	var files []string
	for _, h := range hosts {
		r, p := h.write(t)
		rs, files = append(rs, r), append(files, p)
	}
	al, err := Align(rs, files, AlignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if al.Service() != "vr/r1/time" {
		t.Fatalf("service %q", al.Service())
	}
	for i, h := range hosts {
		m := al.Model(i)
		if d := m.OffsetNs() - h.offset.Nanoseconds(); d < -m.UncertaintyNs() || d > m.UncertaintyNs() {
			t.Fatalf("host %d: offset %v ± %v, injected %v", i, time.Duration(m.OffsetNs()), time.Duration(m.UncertaintyNs()), h.offset)
		}
	}

	plan, err := logfmt.PlanMerge(rs, logfmt.MergeOptions{Apart: IsProbe, Restamp: al.Restamp})
	if err != nil {
		t.Fatal(err)
	}
	sc := al.SimClock(plan)
	p := filepath.Join(t.TempDir(), "merged.vrlog")
	w, err := logfmt.Create(p, logfmt.WriterOptions{FlushInterval: -1, Metadata: map[string]string{MetaKey: sc.Encode()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Copy(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mr, err := logfmt.Open(p, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()

	got, err := ParseSimClock(mr.Header().Metadata)
	if err != nil || got == nil || got.Service != "vr/r1/time" || len(got.Hosts) != 2 || got.Hosts[1].File != files[1] ||
		got.Hosts[0].ProbeChannel != "vrlog/clock/vr/r1/time" || got.Hosts[1].ProbeChannel != "vrlog/clock/vr/r1/time@2" ||
		got.Hosts[0].OffsetNs != al.Model(0).OffsetNs() || got.Hosts[1].Used != 10 || got.Hosts[1].Probes != 20 ||
		!slices.Equal(got.Hosts[0].Channels, []string{"vr/r1/state"}) || !slices.Equal(got.Hosts[1].Channels, []string{"vr/r1/camera/front"}) ||
		got.Hosts[0].RecoveredFrom != "" {
		t.Fatalf("metadata %+v, %v", got, err)
	}
	for i, h := range got.Hosts { // the metadata alone converts a host's stamp as its model does
		for _, w := range []int64{simT0 - 5e9, simT0, simT0 + 3_600e9} {
			if h.ToSim(w) != al.Model(i).ToSim(w) {
				t.Fatalf("host %d: metadata converts %d to %d, its model to %d", i, w, h.ToSim(w), al.Model(i).ToSim(w))
			}
		}
	}
	names := map[uint16]string{}
	for _, c := range mr.Channels() {
		names[c.ID] = c.Name
	}
	// Iterated as replay does (by the monotonic stamps): simulator time
	// order, the wall stamps too, and the two clocks one constant apart.
	lastWall, lastMono := map[string]int64{}, map[string]int64{}
	var prevWall int64
	it := mr.Records(logfmt.Filter{})
	n := 0
	for it.Next() {
		rec := it.Record()
		name := names[rec.Channel]
		if rec.RecvWallNs < prevWall {
			t.Fatalf("record %d (%s): wall %d after %d: not in simulator-time order", n, name, rec.RecvWallNs, prevWall)
		}
		if got := rec.RecvWallNs - rec.RecvMonoNs; got != sc.SimMinusMonoNs {
			t.Fatalf("record %d (%s): wall − mono = %d, want %d", n, name, got, sc.SimMinusMonoNs)
		}
		prevWall = rec.RecvWallNs
		i := slices.IndexFunc(hosts, func(h host) bool { return h.channel == name })
		if rec.HasStamp {
			h, m := hosts[i], al.Model(i)
			lat := rec.RecvWallNs - rec.CaptureNs
			if lo, hi := h.latency.Nanoseconds()-m.UncertaintyNs(), (h.latency+h.jitter).Nanoseconds()+m.UncertaintyNs(); lat < lo || lat > hi {
				t.Fatalf("%s seq %d: latency on the simulator's clock %v, want %v..%v", name, rec.Seq, time.Duration(lat), time.Duration(lo), time.Duration(hi))
			}
			if rec.Seq > 0 { // receive intervals as recorded: capture interval ± jitter
				if iv := rec.RecvMonoNs - lastMono[name]; iv != 10e6+h.jitter.Nanoseconds() && iv != 10e6-h.jitter.Nanoseconds() {
					t.Fatalf("%s seq %d: receive interval %v", name, rec.Seq, time.Duration(iv))
				}
			}
			lastMono[name] = rec.RecvMonoNs
		} else {
			cp, err := codec.DecodeClockProbe(rec.Payload)
			if err != nil {
				t.Fatal(err)
			}
			host := map[string]int{"vrlog/clock/vr/r1/time": 0, "vrlog/clock/vr/r1/time@2": 1}[name]
			if rec.RecvWallNs != al.Model(host).ToSim(cp.T4Ns) { // the record's stamp converted, its payload as recorded
				t.Fatalf("%s: payload T4 %d, record stamp %d", name, cp.T4Ns, rec.RecvWallNs)
			}
			lastWall[name] = rec.RecvWallNs
		}
		n++
	}
	if err := it.Err(); err != nil || n != 2*(200+20) || len(lastWall) != 2 {
		t.Fatalf("%d records, probe channels %v: %v", n, lastWall, err)
	}
	// The merged log's probes give each host's estimate again.
	models, err := FromLog(mr)
	if err != nil || len(models) != 2 || models[1].OffsetNs() != al.Model(1).OffsetNs() {
		t.Fatalf("models from the merged log %+v: %v", models, err)
	}

	// A merged log is not converted again, nor merged as recorded with a
	// log on its recorder's clock; parts of it merge as they are.
	if _, err := Align([]*logfmt.Reader{mr, rs[0]}, []string{p, files[0]}, AlignOptions{}); !errors.Is(err, ErrAligned) {
		t.Fatalf("aligning a merged log: %v", err)
	}
	if err := SameClock([]*logfmt.Reader{rs[0], mr}, []string{files[0], p}); !errors.Is(err, ErrMixedClocks) {
		t.Fatalf("a merged log with a recorder's: %v", err)
	} else {
		t.Log(err)
	}
	if err := SameClock([]*logfmt.Reader{mr, mr}, []string{p, p}); err != nil {
		t.Fatal(err)
	}
	if err := SameClock(rs, files); err != nil {
		t.Fatal(err)
	}
}

// What Align refuses, each naming the file.
func TestAlignErrors(t *testing.T) {
	one := host{offset: time.Millisecond, latency: time.Millisecond, channel: "vr/r1/state", services: []string{"vr/r1/time"}}
	none := one
	none.services = nil
	two := one
	two.services = []string{"vr/r1/time", "vr/r2/time"}
	other := one
	other.services = []string{"vr/r2/time"}
	r1, p1 := one.write(t)
	rn, pn := none.write(t)
	r2, p2 := two.write(t)
	ro, po := other.write(t)
	pat := func(s string) *keyexpr.Pattern { p := keyexpr.MustParse(s); return &p }

	cases := []struct {
		name    string
		rs      []*logfmt.Reader
		files   []string
		service *keyexpr.Pattern
		want    error
	}{
		{"no probes", []*logfmt.Reader{r1, rn}, []string{p1, pn}, nil, ErrNoProbes},
		{"two services", []*logfmt.Reader{r1, r2}, []string{p1, p2}, nil, ErrAmbiguous},
		{"two services match", []*logfmt.Reader{r1, r2}, []string{p1, p2}, pat("vr/*/time"), ErrAmbiguous},
		{"no service matches", []*logfmt.Reader{r1, r2}, []string{p1, p2}, pat("vr/r9/time"), ErrNoProbes},
		{"different services", []*logfmt.Reader{r1, ro}, []string{p1, po}, nil, ErrServiceMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Align(c.rs, c.files, AlignOptions{Service: c.service})
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			t.Log(err)
		})
	}
	// The service chosen: the log with two probes the one the other has.
	if al, err := Align([]*logfmt.Reader{r1, r2}, []string{p1, p2}, AlignOptions{Service: pat("vr/r1/time")}); err != nil || al.Model(1).Service != "vr/r1/time" {
		t.Fatalf("chosen by --time-service: %v", err)
	}
	if al, err := Align([]*logfmt.Reader{r2, ro}, []string{p2, po}, AlignOptions{Service: pat("vrlog/clock/vr/r2/time")}); err != nil || al.Service() != "vr/r2/time" {
		t.Fatalf("chosen by channel name: %v", err)
	}
}

// A host split into files is one host: the files of one recording (its
// MetaRecording), or the files the caller names one host, get one model
// from all their probes and one probe channel in the merge; a file of it
// without probes is converted with the others' model.
func TestAlignOneHostPerRecording(t *testing.T) {
	a := host{offset: 40 * time.Millisecond, latency: 2 * time.Millisecond, channel: "vr/r1/state", services: []string{"vr/r1/time"},
		monoBase: simT0 - 3_600e9, recording: "rec-a"}
	b := host{offset: -7 * time.Millisecond, latency: time.Millisecond, channel: "vr/r1/camera/front", services: []string{"vr/r1/time"},
		monoBase: simT0 - 7_200e9}
	ra, pa := a.split(t, 4)
	rb, pb := b.split(t, 3) // no recording id: three hosts unless named one
	// A file of host a that holds no probe: its channels declared, its
	// records the stream's only.
	noProbe := a
	noProbe.services = nil
	rn, pn := noProbe.write(t)
	rs := append(append(append([]*logfmt.Reader{}, ra...), rn), rb...)
	files := append(append(append([]string{}, pa...), pn), pb...)

	al, err := Align(rs, files, AlignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hs := al.Hosts(); !slices.Equal(hs, []int{0, 0, 0, 0, 0, 1, 2, 3}) {
		t.Fatalf("hosts by recording id: %v", hs)
	}
	names := []string{"", "", "", "", "", "b", "b", "b"}
	al, err = Align(rs, files, AlignOptions{Hosts: names})
	if err != nil {
		t.Fatal(err)
	}
	if hs := al.Hosts(); !slices.Equal(hs, []int{0, 0, 0, 0, 0, 1, 1, 1}) {
		t.Fatalf("hosts by name: %v", hs)
	}
	for i := range rs {
		m, want := al.Model(i), a.offset
		if i >= 5 {
			want = b.offset
		}
		if d := m.OffsetNs() - want.Nanoseconds(); d < -m.UncertaintyNs() || d > m.UncertaintyNs() || m.Estimate.Probes != 20 {
			t.Fatalf("input %d: offset %v ± %v from %d probes, want %v from all 20", i, time.Duration(m.OffsetNs()),
				time.Duration(m.UncertaintyNs()), m.Estimate.Probes, want)
		}
	}
	plan, err := logfmt.PlanMerge(rs, logfmt.MergeOptions{Apart: IsProbe, Hosts: al.Hosts(), Restamp: al.Restamp})
	if err != nil {
		t.Fatal(err)
	}
	sc := al.SimClock(plan)
	if len(sc.Hosts) != 2 || sc.Hosts[0].Name != "" || sc.Hosts[1].Name != "b" || !slices.Equal(sc.Hosts[0].Files, files[:5]) ||
		!slices.Equal(sc.Hosts[1].Inputs(), files[5:]) || sc.Hosts[0].ProbeChannel != "vrlog/clock/vr/r1/time" ||
		sc.Hosts[1].ProbeChannel != "vrlog/clock/vr/r1/time@2" || sc.Hosts[1].Label() != "b" || sc.Hosts[0].Label() != files[0] ||
		!slices.Equal(sc.Hosts[0].Channels, []string{"vr/r1/state"}) {
		t.Fatalf("sim clock %+v", sc)
	}
	for i := range rs {
		want := map[bool]string{false: "vrlog/clock/vr/r1/time", true: "vrlog/clock/vr/r1/time@2"}[i >= 5]
		if i == 4 {
			want = "" // no probe channel
		}
		if got := plan.Name(i, 2); got != want {
			t.Fatalf("input %d: probes on %q in the merge, want %q", i, got, want)
		}
	}

	// A host whose files hold no probe at all is named by all its files.
	_, err = Align([]*logfmt.Reader{rn, rb[0]}, []string{pn, pb[0]}, AlignOptions{})
	if !errors.Is(err, ErrNoProbes) || !strings.Contains(err.Error(), pn) {
		t.Fatalf("a host without probes: %v", err)
	}
}
