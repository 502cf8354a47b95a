package analyzer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

// docType is one field's type in docs/analyze-report.md's JSON layout.
type docType struct {
	base     string // string, integer, number, boolean, or an object's name
	list     bool   // [base]
	nullable bool   // "… or null"
}

// docLayout reads the doc's JSON layout: object name → field → type.
func docLayout(t *testing.T) map[string]map[string]docType {
	t.Helper()
	f, err := os.Open("../docs/analyze-report.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layout := map[string]map[string]docType{}
	var obj string
	in := false
	field := regexp.MustCompile("`([a-z0-9_]+)`")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## JSON layout"
			obj = ""
		case in && strings.HasPrefix(line, "### "):
			obj = strings.Fields(line)[1]
			layout[obj] = map[string]docType{}
		case in && obj != "" && strings.HasPrefix(line, "| `"):
			cells := strings.Split(line, "|")
			if len(cells) < 4 {
				t.Fatalf("doc: %s: bad row %q", obj, line)
			}
			ty := parseDocType(t, strings.TrimSpace(cells[2]))
			for _, m := range field.FindAllStringSubmatch(cells[1], -1) {
				layout[obj][m[1]] = ty
			}
		}
	}
	if len(layout) < 10 || len(layout["report"]) < 10 || len(layout["channel"]) < 20 {
		t.Fatalf("doc: JSON layout not found or incomplete: %v", layout)
	}
	return layout
}

func parseDocType(t *testing.T, s string) docType {
	var d docType
	if b, ok := strings.CutSuffix(s, " or null"); ok {
		d.nullable, s = true, b
	}
	if b, ok := strings.CutPrefix(s, "["); ok {
		d.list, s = true, strings.TrimSuffix(b, "]")
	}
	d.base = strings.Trim(s, "*")
	if d.base == "" || strings.ContainsAny(d.base, " []") {
		t.Fatalf("doc: type %q", s)
	}
	return d
}

// checker walks a report's JSON against the layout.
type checker struct {
	t      *testing.T
	layout map[string]map[string]docType
	seen   map[string]bool // objects met, and "obj.field=null" / "obj.field=value"
}

func (c *checker) object(path, obj string, v any) {
	fields, ok := c.layout[obj]
	if !ok {
		c.t.Fatalf("%s: the doc has no object %q", path, obj)
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.t.Errorf("%s: want a %s object, got %T", path, obj, v)
		return
	}
	c.seen[obj] = true
	for name, ty := range fields {
		x, present := m[name]
		if !present {
			c.t.Errorf("%s.%s: documented, missing from the JSON", path, name)
			continue
		}
		c.value(path+"."+name, ty, x)
		if x == nil {
			c.seen[obj+"."+name+"=null"] = true
		} else {
			c.seen[obj+"."+name+"=value"] = true
		}
	}
	for name := range m {
		if _, ok := fields[name]; !ok {
			c.t.Errorf("%s.%s: in the JSON, not documented in the %s table", path, name, obj)
		}
	}
}

func (c *checker) value(path string, ty docType, x any) {
	if x == nil {
		if !ty.nullable {
			c.t.Errorf("%s: null, documented as %+v", path, ty)
		}
		return
	}
	if ty.list {
		xs, ok := x.([]any)
		if !ok {
			c.t.Errorf("%s: want a list, got %T", path, x)
			return
		}
		for i, e := range xs {
			c.value(path+"["+strconv.Itoa(i)+"]", docType{base: ty.base}, e)
		}
		return
	}
	switch ty.base {
	case "string":
		_, ok := x.(string)
		c.want(ok, path, "a string", x)
	case "boolean":
		_, ok := x.(bool)
		c.want(ok, path, "a boolean", x)
	case "number":
		_, ok := x.(json.Number)
		c.want(ok, path, "a number", x)
	case "integer":
		n, ok := x.(json.Number)
		if ok {
			_, err := n.Int64()
			ok = err == nil
		}
		c.want(ok, path, "an integer", x)
	default:
		c.object(path, ty.base, x)
	}
}

func (c *checker) want(ok bool, path, what string, x any) {
	if !ok {
		c.t.Errorf("%s: want %s, got %T %v", path, what, x, x)
	}
}

// TestJSONMatchesDoc checks the JSON of real reports against the layout in
// docs/analyze-report.md, field by field: every documented field is present
// with its documented type (null only where documented), every field present
// is documented, and every documented object and nullable field is met.
func TestJSONMatchesDoc(t *testing.T) {
	layout := docLayout(t)
	dir := t.TempDir()
	var reports []*Report

	// The sample, gated and compared with a baseline it is worse than.
	sample, err := AnalyzeFiles([]string{"../testdata/sample.vrlog"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	better, _ := AnalyzeFiles([]string{"../testdata/sample.vrlog"}, Options{})
	for i := range better.Channels {
		better.Channels[i].Skipped = 0
	}
	sample.ApplyChecks(Thresholds{MaxSkips: []Limit{{Value: 0}}, MinRate: []Limit{{Value: 1}}, MaxLagMs: []Limit{{Value: 100}}})
	sample.CompareBaseline(better, Tolerances{Default: 0.1})
	reports = append(reports, sample)

	// The sample with a corrupt chunk, read with --tolerant.
	b, _ := os.ReadFile("../testdata/sample.vrlog")
	r, err := logfmt.Open("../testdata/sample.vrlog", logfmt.ReaderOptions{})
	if err != nil || len(r.Chunks()) < 2 {
		t.Fatalf("sample: %v", err)
	}
	ck := r.Chunks()[1]
	r.Close()
	b[ck.Offset+ck.Size()-int64(ck.DataLen)-int64(ck.MetaLen)/2] ^= 0x40
	flipped := filepath.Join(dir, "flipped.vrlog")
	os.WriteFile(flipped, b, 0o644)
	tolerant, err := AnalyzeFiles([]string{flipped}, Options{Tolerant: true})
	if err != nil || len(tolerant.Files[0].SkippedChunks) == 0 {
		t.Fatalf("tolerant: %v %+v", err, tolerant)
	}
	reports = append(reports, tolerant)

	// A raw channel, a channel the recorder could not open, and two probes
	// (a clock without a drift interval).
	// Its header says it is a snapshot, triggered by a fault and extended
	// by a signal.
	edge := filepath.Join(dir, "edge.vrlog")
	md := map[string]string{}
	(&logfmt.Snapshot{Triggers: []logfmt.SnapshotTrigger{{Cause: "max-skips diag: 2 (limit ≤ 0): off by 2", WallNs: 1e18 + 2e8, MonoNs: 1 + 2e8, CaptureNs: 1e18 + 2e8},
		{Cause: "signal SIGUSR1", WallNs: 1e18 + 3e8, MonoNs: 1 + 3e8}}, TriggerCount: 2, Before: time.Second, After: time.Second,
		FromWallNs: 1e18, ToWallNs: 1e18 + 13e8, FromMonoNs: 1, ToMonoNs: 1 + 13e8, Short: "the recording started 0.8 s before the trigger"}).AddTo(md)
	w, err := logfmt.Create(edge, logfmt.WriterOptions{Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := w.AddChannel(logfmt.Channel{Name: "diag", Transport: logfmt.TransportZenoh, Topic: "diag"})
	w.AddChannel(logfmt.Channel{Name: "cam", Transport: logfmt.TransportIceoryx2, Topic: "cam", Schema: codec.SchemaFrame,
		Meta: map[string]string{logfmt.MetaError: "iceoryx2: create subscriber on \"cam\": ExceedsMaxSupportedSubscribers"}})
	probe, _ := w.AddChannel(logfmt.Channel{Name: "vrlog/clock/t", Transport: logfmt.TransportInternal, Topic: "t", Schema: codec.SchemaClockProbe})
	for i := int64(0); i < 5; i++ {
		w.Write(&logfmt.Record{Channel: raw, RecvWallNs: 1e18 + i*1e8, RecvMonoNs: 1 + i*1e8, HasPubSN: true, PublisherSN: uint64(i * i),
			PublisherID: []byte{1, 2, 3, 4, 5}, Payload: []byte("x")})
	}
	for i := int64(0); i < 2; i++ {
		p := codec.ClockProbe{T1Ns: 1e18 + i, T2Ns: 1e18 + i + 5, T3Ns: 1e18 + i + 6, T4Ns: 1e18 + i + 10}
		w.Write(&logfmt.Record{Channel: probe, RecvWallNs: 1e18 + i, RecvMonoNs: 1 + i, Payload: codec.AppendClockProbe(nil, p)})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	er, err := AnalyzeFiles([]string{edge}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reports = append(reports, er)

	// Two snapshots of one recording, apart in time.
	whole, tr := writeSession(t, synth.Default())
	start := synth.Default().Start.UnixNano()
	s1, s2 := filepath.Join(dir, "s1.vrlog"), filepath.Join(dir, "s2.vrlog")
	cutSnapshot(t, whole, s1, "rec", start+1e9, start+4e9, tr.EpochNs)
	cutSnapshot(t, whole, s2, "rec", start+25e9, start+29e9, tr.EpochNs)
	two, err := AnalyzeFiles([]string{s1, s2}, Options{})
	if err != nil || len(two.NotCaptured) != 1 {
		t.Fatalf("two snapshots: %v, %+v", err, two)
	}
	reports = append(reports, two)

	// A response log (replay --capture), gated on its reaction.
	resp, err := AnalyzeFiles([]string{responseLog(t)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reports = append(reports, resp)
	// One stopped while a lockstep step waited: its last trigger cut.
	stopped, err := AnalyzeFiles([]string{cutResponseLog(t, 5, nil)}, Options{PartialReplay: true})
	if err != nil || stopped.Reaction[0].CutSeq == nil {
		t.Fatalf("stopped: %v %+v", err, stopped.Reaction)
	}
	reports = append(reports, stopped)

	// A log merged onto the simulator's clock: hosts, and its probes kept
	// out of clock.
	merged := filepath.Join(dir, "merged.vrlog")
	sc := hostclock.SimClock{Service: "t", Hosts: []hostclock.Host{{File: "a.vrlog", ProbeChannel: "vrlog/clock/t", OffsetNs: 5, Probes: 2, Used: 1}}}
	w, _ = logfmt.Create(merged, logfmt.WriterOptions{Metadata: map[string]string{hostclock.MetaKey: sc.Encode()}})
	probe, _ = w.AddChannel(logfmt.Channel{Name: "vrlog/clock/t", Transport: logfmt.TransportInternal, Topic: "t", Schema: codec.SchemaClockProbe})
	w.Write(&logfmt.Record{Channel: probe, RecvWallNs: 1e18, RecvMonoNs: 1, Payload: codec.AppendClockProbe(nil, codec.ClockProbe{T1Ns: 1, T2Ns: 5, T3Ns: 6, T4Ns: 10})})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mr, err := AnalyzeFiles([]string{merged}, Options{})
	if err != nil || mr.ReceiveClock != "simulator" || len(mr.Hosts) != 1 || mr.Clock != nil {
		t.Fatalf("merged: %v %+v", err, mr)
	}
	reports = append(reports, mr)
	// With a log as recorded: mixed clocks, refused as merge refuses them.
	if _, err := AnalyzeFiles([]string{merged, edge}, Options{}); !errors.Is(err, hostclock.ErrMixedClocks) || !strings.Contains(err.Error(), merged) {
		t.Fatalf("mixed clocks: %v, want hostclock.ErrMixedClocks naming the files", err)
	}

	// An empty log: no channels, no clock.
	empty := filepath.Join(dir, "empty.vrlog")
	w, _ = logfmt.Create(empty, logfmt.WriterOptions{})
	w.Close()
	e, err := AnalyzeFiles([]string{empty}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reports = append(reports, e)

	c := &checker{t: t, layout: layout, seen: map[string]bool{}}
	for i, rep := range reports {
		js, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		c.object("report"+strconv.Itoa(i), "report", v)
	}
	var missed []string
	for obj, fields := range layout {
		if !c.seen[obj] {
			missed = append(missed, obj)
		}
		for name, ty := range fields {
			if ty.nullable && !(c.seen[obj+"."+name+"=null"] && c.seen[obj+"."+name+"=value"]) {
				missed = append(missed, obj+"."+name+" (null and not null)")
			}
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("the reports never showed: %v", missed)
	}
}
