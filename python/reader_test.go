// Package python holds the Go side of the Python reader's tests: the
// Python package (vrlog/, written from docs/log-format.md and
// docs/wire-format.md alone) must read every log exactly as the Go reader
// does, on the golden logs, the sample, and logs the Go writer makes here
// with every feature of the format, whole, cut and damaged.
package python

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
)

// job is one read of a log, by both readers (tests/dump.py's job).
type job struct {
	File        string   `json:"file"`
	Tolerant    bool     `json:"tolerant,omitempty"`
	IgnoreIndex bool     `json:"ignore_index,omitempty"`
	MetaOnly    bool     `json:"meta_only,omitempty"`
	NoNumpy     bool     `json:"no_numpy,omitempty"`
	Channels    []uint16 `json:"channels,omitempty"`
	Start       *int64   `json:"start,omitempty"`
	End         *int64   `json:"end,omitempty"`
	Clock       string   `json:"clock,omitempty"`
}

// dump is what a reader read (tests/dump.py's output).
type dump struct {
	Version   []int             `json:"version"`
	Created   int64             `json:"created_wall_ns"`
	Metadata  map[string]string `json:"metadata"`
	Indexed   bool              `json:"indexed"`
	TornTail  int64             `json:"torn_tail"`
	Warnings  []int64           `json:"warnings"`
	Skipped   []int64           `json:"skipped"`
	Channels  []dchan           `json:"channels"`
	Chunks    []dchunk          `json:"chunks"`
	Stats     []dstats          `json:"stats"`
	Writer    *dwriter          `json:"writer"`
	Records   []drec            `json:"records"`
	Error     string            `json:"error,omitempty"`
	ErrOffset int64             `json:"error_offset,omitempty"`
}

type dchan struct {
	ID          uint16            `json:"id"`
	Name        string            `json:"name"`
	Transport   string            `json:"transport"`
	Topic       string            `json:"topic"`
	Schema      string            `json:"schema"`
	Compression string            `json:"compression"`
	Level       int               `json:"level"`
	Meta        map[string]string `json:"meta"`
}

type dchunk struct {
	Offset   int64           `json:"offset"`
	MetaLen  uint32          `json:"meta_len"`
	DataLen  uint32          `json:"data_len"`
	Records  uint32          `json:"records"`
	Sorted   bool            `json:"sorted"`
	MinMono  int64           `json:"min_mono_ns"`
	MaxMono  int64           `json:"max_mono_ns"`
	MinWall  int64           `json:"min_wall_ns"`
	MaxWall  int64           `json:"max_wall_ns"`
	Channels []dchunkChannel `json:"channels"`
}

type dchunkChannel struct {
	Channel uint16 `json:"channel"`
	Records uint32 `json:"records"`
	Raw     uint32 `json:"raw_bytes"`
	Stored  uint32 `json:"stored_bytes"`
}

type dstats struct {
	Channel      uint16 `json:"channel"`
	Records      uint64 `json:"records"`
	Raw          uint64 `json:"raw_bytes"`
	Stored       uint64 `json:"stored_bytes"`
	Drops        uint64 `json:"drops"`
	FirstMono    int64  `json:"first_mono_ns"`
	LastMono     int64  `json:"last_mono_ns"`
	FirstWall    int64  `json:"first_wall_ns"`
	LastWall     int64  `json:"last_wall_ns"`
	HasCapture   bool   `json:"has_capture"`
	FirstCapture int64  `json:"first_capture_ns"`
	LastCapture  int64  `json:"last_capture_ns"`
}

type dwriter struct {
	Records      uint64 `json:"records"`
	Chunks       uint64 `json:"chunks"`
	Raw          uint64 `json:"raw_bytes"`
	BytesWritten int64  `json:"bytes_written"`
	Drops        uint64 `json:"drops"`
}

type drec struct {
	Channel     uint16  `json:"channel"`
	Wall        int64   `json:"recv_wall_ns"`
	Mono        int64   `json:"recv_mono_ns"`
	Capture     *int64  `json:"capture_ns"`
	Seq         *uint64 `json:"seq"`
	PublisherID *string `json:"publisher_id"`
	PublisherSN *uint64 `json:"publisher_sn"`
	HeaderLen   int     `json:"header_len"`
	PayloadLen  int     `json:"payload_len"`
	HeaderSHA   *string `json:"header_sha256"`
	PayloadSHA  *string `json:"payload_sha256"`
}

func sum(b []byte) *string {
	s := sha256.Sum256(b)
	h := hex.EncodeToString(s[:])
	return &h
}

// goDump reads j with the Go reader.
func goDump(j job) dump {
	fail := func(err error) dump {
		var ce *logfmt.CorruptionError
		if errors.As(err, &ce) {
			return dump{Error: err.Error(), ErrOffset: ce.Offset}
		}
		return dump{Error: err.Error(), ErrOffset: -1}
	}
	r, err := logfmt.Open(j.File, logfmt.ReaderOptions{Tolerant: j.Tolerant, IgnoreIndex: j.IgnoreIndex})
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	d := dump{Metadata: r.Header().Metadata, Created: r.Header().CreatedWallNs, Indexed: r.Indexed(), TornTail: -1,
		Version: []int{int(r.Header().VersionMajor), int(r.Header().VersionMinor)}, Warnings: []int64{}, Skipped: []int64{}, Records: []drec{},
		Channels: []dchan{}, Chunks: []dchunk{}, Stats: []dstats{}}
	if d.Metadata == nil {
		d.Metadata = map[string]string{}
	}
	f := logfmt.Filter{Channels: j.Channels, MetaOnly: j.MetaOnly}
	if j.Clock != "wall" {
		if j.Start != nil {
			f.Start = *j.Start
		}
		if j.End != nil {
			f.End = *j.End
		}
	}
	it := r.Records(f)
	for it.Next() {
		rec := it.Record()
		if j.Clock == "wall" && ((j.Start != nil && rec.RecvWallNs < *j.Start) || (j.End != nil && rec.RecvWallNs >= *j.End)) {
			continue
		}
		x := drec{Channel: rec.Channel, Wall: rec.RecvWallNs, Mono: rec.RecvMonoNs, HeaderLen: rec.HeaderLen, PayloadLen: rec.PayloadLen}
		if rec.HasStamp {
			c, s := rec.CaptureNs, rec.Seq
			x.Capture, x.Seq = &c, &s
		}
		if rec.PublisherID != nil {
			h := hex.EncodeToString(rec.PublisherID)
			x.PublisherID = &h
		}
		if rec.HasPubSN {
			sn := rec.PublisherSN
			x.PublisherSN = &sn
		}
		if !j.MetaOnly {
			x.HeaderSHA, x.PayloadSHA = sum(rec.Header), sum(rec.Payload)
		}
		d.Records = append(d.Records, x)
	}
	if err := it.Err(); err != nil {
		return fail(err)
	}
	if tt := r.TornTail(); tt != nil {
		d.TornTail = tt.Offset
	}
	for _, ce := range r.Warnings() {
		d.Warnings = append(d.Warnings, ce.Offset)
	}
	for _, ce := range r.SkippedChunks() {
		d.Skipped = append(d.Skipped, ce.Offset)
	}
	for _, c := range r.Channels() {
		meta := c.Meta
		if meta == nil {
			meta = map[string]string{}
		}
		d.Channels = append(d.Channels, dchan{c.ID, c.Name, c.Transport.String(), c.Topic, c.Schema, c.Compression.Kind.String(), c.Compression.Level, meta})
	}
	for _, c := range r.Chunks() {
		dc := dchunk{Offset: c.Offset, MetaLen: c.MetaLen, DataLen: c.DataLen, Records: c.Records, Sorted: c.Sorted,
			MinMono: c.MinMonoNs, MaxMono: c.MaxMonoNs, MinWall: c.MinWallNs, MaxWall: c.MaxWallNs, Channels: []dchunkChannel{}}
		for _, cc := range c.Channels {
			dc.Channels = append(dc.Channels, dchunkChannel{cc.Channel, cc.Records, cc.RawBytes, cc.StoredBytes})
		}
		d.Chunks = append(d.Chunks, dc)
	}
	for _, s := range r.Stats() {
		d.Stats = append(d.Stats, dstats{s.Channel, s.Records, s.RawBytes, s.StoredBytes, s.Drops, s.FirstMonoNs, s.LastMonoNs,
			s.FirstWallNs, s.LastWallNs, s.HasCapture, s.FirstCaptureNs, s.LastCaptureNs})
	}
	if w := r.WriterStats(); w != nil {
		d.Writer = &dwriter{w.Records, w.Chunks, w.RawBytes, w.BytesWritten, w.Drops}
	}
	return d
}

// pyDump reads the jobs with the Python reader (one interpreter for all).
func pyDump(t *testing.T, jobs []job) []dump {
	t.Helper()
	in, _ := json.Marshal(jobs)
	cmd := exec.Command(peertest.Python(t), filepath.Join("tests", "dump.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tests/dump.py: %v\n%s\n(the venv needs the reader: make peers installs ./python[numpy,pandas])", err, stderr.String())
	}
	var ds []dump
	if err := json.Unmarshal(out, &ds); err != nil {
		t.Fatal(err)
	}
	if len(ds) != len(jobs) {
		t.Fatalf("%d dumps for %d jobs", len(ds), len(jobs))
	}
	return ds
}

// compare runs every job through both readers and reports the differences.
// A strict read that fails must fail at the same offset in both; the Go
// reader streams records up to the error, the Python one raises first, so
// their records are not compared then.
func compare(t *testing.T, jobs []job) {
	t.Helper()
	py := pyDump(t, jobs)
	for i, j := range jobs {
		g, p := goDump(j), py[i]
		name := fmt.Sprintf("%s %+v", filepath.Base(j.File), j)
		if (g.Error != "") != (p.Error != "") || g.ErrOffset != p.ErrOffset {
			t.Errorf("%s:\n  go error %q (offset %d)\n  py error %q (offset %d)", name, g.Error, g.ErrOffset, p.Error, p.ErrOffset)
			continue
		}
		if g.Error != "" {
			continue
		}
		if len(g.Records) != len(p.Records) {
			t.Errorf("%s: go read %d records, python %d", name, len(g.Records), len(p.Records))
		}
		for k := range min(len(g.Records), len(p.Records)) {
			if !reflect.DeepEqual(g.Records[k], p.Records[k]) {
				gj, _ := json.Marshal(g.Records[k])
				pj, _ := json.Marshal(p.Records[k])
				t.Errorf("%s: record %d differs:\n  go %s\n  py %s", name, k, gj, pj)
				break
			}
		}
		g.Records, p.Records = nil, nil
		if d := diff("", asJSON(g), asJSON(p)); d != "" {
			t.Errorf("%s: the log's description differs: %s", name, d)
		}
	}
}

func asJSON(v any) any {
	b, _ := json.Marshal(v)
	var x any
	json.Unmarshal(b, &x)
	return x
}

// diff names the first place where two JSON values differ ("" if none).
func diff(path string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		for k := range x {
			if d := diff(path+"."+k, x[k], y[k]); d != "" {
				return d
			}
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				return fmt.Sprintf("%s.%s: go has none, python %v", path, k, y[k])
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := range min(len(x), len(y)) {
			if d := diff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i]); d != "" {
				return d
			}
		}
		if len(x) != len(y) {
			return fmt.Sprintf("%s: go has %d elements, python %d", path, len(x), len(y))
		}
		return ""
	}
	if reflect.DeepEqual(a, b) {
		return ""
	}
	return fmt.Sprintf("%s: go %v, python %v", path, a, b)
}

// modes are the ways each whole log is read.
func modes(path string, mid int64, ids []uint16) []job {
	end := mid + 2e8
	return []job{
		{File: path}, {File: path, IgnoreIndex: true}, {File: path, MetaOnly: true}, {File: path, NoNumpy: true},
		{File: path, IgnoreIndex: true, MetaOnly: true, NoNumpy: true},
		{File: path, Channels: ids}, {File: path, Start: &mid}, {File: path, Start: &mid, End: &end, Channels: ids[:1]},
		{File: path, Start: &mid, End: &end, Clock: "wall"},
	}
}

// rich writes a log with every feature the format has: four channels of
// each compression, stamps and none, negative stamps and a wrapping seq,
// publisher ids that change, zenoh sequence numbers with gaps, transport
// headers, records out of order inside a chunk and chunks that overlap,
// the wall clock jumping against the monotonic one, recorder drops.
func rich(t *testing.T, path string, metaComp logfmt.Compression, n int) (midMono, midWall int64) {
	w, err := logfmt.Create(path, logfmt.WriterOptions{Metadata: map[string]string{"note": "python cross-check", "host": "test"},
		CreatedAt: time.Unix(0, 1_700_000_000_000_000_000), ChunkSize: 48 << 10, FlushInterval: -1, MetaCompression: &metaComp})
	if err != nil {
		t.Fatal(err)
	}
	add := func(c logfmt.Channel) uint16 {
		id, err := w.AddChannel(c)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	stateComp := logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}
	if metaComp.Kind == logfmt.CompressionLZ4 {
		stateComp = metaComp // as the recorder stores states
	}
	state := add(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState,
		Compression: stateComp, Meta: map[string]string{"zenoh.encoding": "application/octet-stream"}})
	frame := add(logfmt.Channel{Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame})
	raw := add(logfmt.Channel{Name: "raw,odd \"name\"", Transport: logfmt.TransportZenoh, Topic: "x/**", Compression: logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 3}})
	probe := add(logfmt.Channel{Name: "vrlog/clock", Transport: logfmt.TransportInternal, Schema: codec.SchemaClockProbe})
	rng := rand.New(rand.NewPCG(1, 2))
	mono, off := int64(-5_000_000), int64(1_700_000_000_000_000_000)
	seq := uint64(math.MaxUint64 - 40)
	var sn uint64 = 7
	pub := []byte("publisher-A")
	write := func(r *logfmt.Record) {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		mono += 1_000_000 + rng.Int64N(50_000)
		if i == n/2 {
			off -= 3_000_000_000 // NTP step back
			pub = []byte("publisher-B, restarted")
			midMono, midWall = mono, mono+off
		}
		if i == n*7/10 {
			w.Flush()
			mono -= 40_000_000 // the next chunk starts before the last one ended: they overlap
		}
		st := codec.State{Seq: seq, TNs: mono + off - 2_000_000 - int64(i%7)*1000, EstimateTNs: mono + off - 5_000_000,
			Position: codec.Vec3{X: float64(i), Y: math.NaN(), Z: -1e-300}, Orientation: codec.Quat{W: 1},
			Sensors: make([]codec.Sensor, i%5)}
		if i%400 == 17 {
			st.TNs = -st.TNs // a negative capture stamp
		}
		rec := &logfmt.Record{Channel: state, RecvMonoNs: mono, RecvWallNs: mono + off, CaptureNs: st.TNs, Seq: st.Seq, HasStamp: true,
			PublisherID: pub, PublisherSN: sn, HasPubSN: i%3 != 0, Payload: codec.AppendState(nil, &st)}
		if i%250 == 11 {
			rec.Seq += 3 // a skip
		}
		write(rec)
		seq++
		sn += 1 + uint64(i%11/10)
		if i%10 == 3 {
			// Frames arrive a little out of order: the chunk is not sorted.
			h := codec.NewFrameHeader(uint64(i/10), mono+off-8_000_000, 1, 40, 30, codec.RGB8)
			px := make([]byte, 40*30*3)
			for k := range px {
				px[k] = byte(rng.Uint32())
			}
			write(&logfmt.Record{Channel: frame, RecvMonoNs: mono - 300_000, RecvWallNs: mono - 300_000 + off, CaptureNs: h.TNs, Seq: h.Seq,
				HasStamp: true, PublisherID: []byte{0x4e, 0x2e, byte(i / 1000)}, Header: codec.AppendFrameHeader(nil, &h), Payload: px})
		}
		if i%37 == 5 {
			var hdr []byte
			if i%2 == 1 {
				hdr = []byte{byte(i)}
			}
			write(&logfmt.Record{Channel: raw, RecvMonoNs: mono, RecvWallNs: mono + off, Header: hdr, Payload: bytes.Repeat([]byte("raw"), i%50)})
		}
		if i%500 == 0 {
			p := codec.ClockProbe{T1Ns: mono + off - 500, T2Ns: mono + off + 2_000_000, T3Ns: mono + off + 2_000_100, T4Ns: mono + off}
			write(&logfmt.Record{Channel: probe, RecvMonoNs: mono, RecvWallNs: mono + off, Payload: codec.AppendClockProbe(nil, p)})
			w.AddDrops(frame, uint64(i/500))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return midMono, midWall
}

// writeChunks writes one chunk per list of receive stamps.
func writeChunks(t *testing.T, path string, chunks [][]int64) {
	w, err := logfmt.Create(path, logfmt.WriterOptions{CreatedAt: time.Unix(0, 1), FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := w.AddChannel(logfmt.Channel{Name: "a", Transport: logfmt.TransportZenoh, Topic: "a"})
	for c, monos := range chunks {
		for k, m := range monos {
			if err := w.Write(&logfmt.Record{Channel: id, RecvMonoNs: m, RecvWallNs: m, Payload: []byte{byte(c), byte(k)}}); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// overlapping writes a log whose chunks all overlap in time, more of them
// than a reader merges at once (MaxMergeChunks 64).
func overlapping(t *testing.T, path string) {
	w, err := logfmt.Create(path, logfmt.WriterOptions{CreatedAt: time.Unix(0, 1), ChunkSize: 1 << 20, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := w.AddChannel(logfmt.Channel{Name: "a", Transport: logfmt.TransportZenoh, Topic: "a"})
	for c := range 100 {
		for k := range 5 {
			m := int64(c*10 + k)
			if k == 4 {
				m = 1_000_000 + int64(c)
			}
			if err := w.Write(&logfmt.Record{Channel: id, RecvMonoNs: m, RecvWallNs: m + 5, Payload: []byte{byte(c), byte(k)}}); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestGoldenAndSample(t *testing.T) {
	var jobs []job
	for _, f := range []string{"../testdata/logfmt/golden-v1.vrlog", "../testdata/logfmt/golden-v1-zstd.vrlog",
		"../testdata/logfmt/golden-v1.1.vrlog", "../testdata/logfmt/golden-v1.1-lz4.vrlog", "../testdata/sample.vrlog"} {
		r, err := logfmt.Open(f, logfmt.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cs := r.Chunks()
		mid := (cs[0].MinMonoNs + cs[len(cs)-1].MaxMonoNs) / 2
		r.Close()
		jobs = append(jobs, modes(f, mid, []uint16{1, 3})...)
	}
	compare(t, jobs)
}

func TestGoWriterLogs(t *testing.T) {
	dir := t.TempDir()
	var jobs []job
	for i, mc := range []logfmt.Compression{{Kind: logfmt.CompressionZstd, Level: 1}, {Kind: logfmt.CompressionNone}, {Kind: logfmt.CompressionLZ4}} {
		p := filepath.Join(dir, fmt.Sprintf("rich%d.vrlog", i))
		mid, _ := rich(t, p, mc, 3000)
		jobs = append(jobs, modes(p, mid, []uint16{2, 4})...)
	}
	p := filepath.Join(dir, "overlap.vrlog")
	overlapping(t, p)
	jobs = append(jobs, job{File: p}, job{File: p, IgnoreIndex: true}, job{File: p, NoNumpy: true})
	// Chunks whose ranges only touch are not merged: equal stamps come out
	// chunk by chunk, in time order of the chunks.
	p = filepath.Join(dir, "touching.vrlog")
	writeChunks(t, p, [][]int64{{10, 20}, {5, 10}, {10, 10, 11}})
	jobs = append(jobs, job{File: p}, job{File: p, NoNumpy: true})
	compare(t, jobs)
}

// richBytes writes a rich log of 1200 states in a temp dir and returns the
// dir, the log's bytes and its chunks (for copies to cut and damage).
func richBytes(t *testing.T) (string, []byte, []logfmt.ChunkInfo) {
	dir := t.TempDir()
	src := filepath.Join(dir, "rich.vrlog")
	rich(t, src, logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}, 1200)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	r, err := logfmt.Open(src, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return dir, b, r.Chunks()
}

// Cut anywhere (an interrupted recording): both readers find the same torn
// tail and read the same records before it.
func TestCutLogs(t *testing.T) {
	dir, b, cs := richBytes(t)
	cuts := []int64{int64(len(b)) - 1, int64(len(b)) - 24, cs[3].Offset, cs[3].Offset + 10, cs[3].Offset + 30, cs[len(cs)/2].Offset + int64(cs[len(cs)/2].MetaLen) + 100}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 6 {
		cuts = append(cuts, 16+rng.Int64N(int64(len(b))-16))
	}
	var jobs []job
	for i, n := range cuts {
		p := filepath.Join(dir, fmt.Sprintf("cut%d.vrlog", i))
		if err := os.WriteFile(p, b[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job{File: p}, job{File: p, MetaOnly: true})
	}
	// A zero-filled tail (a filesystem after power loss).
	p := filepath.Join(dir, "zeros.vrlog")
	os.WriteFile(p, append(append([]byte(nil), b[:cs[5].Offset+40]...), make([]byte, 5000)...), 0o644)
	jobs = append(jobs, job{File: p})
	// Power loss: the last chunks' headers and meta sections reached the
	// disk, their data and the page after them did not (one chunk, then
	// two: the torn tail starts at the first of them). And a write cut
	// short inside a chunk's meta section, zeros for the rest of it.
	last := len(cs) - 1
	for name, d := range map[string][]byte{
		"zeroed-tail":     zeroData(b[:cs[last].Offset+cs[last].Size()], cs[last]),
		"zeroed-two":      zeroData(zeroData(b[:cs[last].Offset+cs[last].Size()], cs[last]), cs[last-1]),
		"short-written":   shortWritten(b, cs[last]),
		"short-in-middle": shortWritten(b[:cs[last].Offset], cs[last-3]),
	} {
		p := filepath.Join(dir, name+".vrlog")
		if err := os.WriteFile(p, append(d, make([]byte, 4096)...), 0o644); err != nil {
			t.Fatal(err)
		}
		if g := goDump(job{File: p}); g.Error != "" || g.TornTail < 0 || len(g.Warnings) > 0 {
			t.Errorf("%s: the Go reader gives error %q, torn tail %d, warnings %v: not a torn tail", name, g.Error, g.TornTail, g.Warnings)
		}
		jobs = append(jobs, job{File: p}, job{File: p, MetaOnly: true}, job{File: p, Tolerant: true, NoNumpy: true})
	}
	compare(t, jobs)
}

// zeroData returns a copy of b with the data section of chunk c zeroed.
func zeroData(b []byte, c logfmt.ChunkInfo) []byte {
	d := append([]byte(nil), b...)
	clear(d[c.Offset+24+int64(c.MetaLen) : c.Offset+c.Size()])
	return d
}

// shortWritten returns b up to chunk c, whose bytes end halfway through
// its meta section and are zeros from there to the chunk's end.
func shortWritten(b []byte, c logfmt.ChunkInfo) []byte {
	d := append([]byte(nil), b[:c.Offset+c.Size()]...)
	clear(d[c.Offset+24+int64(c.MetaLen)/2:])
	return d
}

// rewriteChunk returns a copy of b with the chunk c replaced by what edit
// makes of its meta section and data section, its lengths and CRCs fixed
// up: damage that only a reader checking the content finds. The chunks
// after it move, so the copy ends where the chunks do (no footer).
func rewriteChunk(b []byte, c logfmt.ChunkInfo, end int64, edit func(meta, data []byte) ([]byte, []byte)) []byte {
	at := c.Offset + 24
	meta, data := edit(append([]byte(nil), b[at:at+int64(c.MetaLen)]...), append([]byte(nil), b[at+int64(c.MetaLen):c.Offset+c.Size()]...))
	h := append([]byte(nil), b[c.Offset:at]...)
	binary.LittleEndian.PutUint32(h[8:], uint32(len(meta)))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(data)))
	binary.LittleEndian.PutUint32(h[16:], crc32c(meta))
	binary.LittleEndian.PutUint32(h[20:], crc32c(h[:20]))
	return bytes.Join([][]byte{b[:c.Offset], h, meta, data, b[c.Offset+c.Size() : end]}, nil)
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// A zstd frame that declares size bytes of content (none if size < 0)
// and holds blocks.
func zstdFrame(size int, blocks []byte) []byte {
	f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50} // magic; no size, no checksum; 1 MiB window
	if size >= 0 {
		f[4] = 0x80 // a 4-byte content size follows the window
		f = binary.LittleEndian.AppendUint32(f, uint32(size))
	}
	return append(f, blocks...)
}

// rleBlocks are zstd RLE blocks of 128 KiB, 4 bytes each, that inflate
// to n bytes (a multiple of 128 KiB): a decompression bomb.
func rleBlocks(n int) []byte {
	var b []byte
	for left := n; left > 0; left -= 128 << 10 {
		h := uint32(128<<10)<<3 | 1<<1
		if left <= 128<<10 {
			h |= 1 // last block
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 'A')
	}
	return b
}

// compressedBlocks are zstd compressed blocks that decode to 1 MiB: a
// frame of them that declares less is found out only by decoding it with
// the declared length as the limit.
func compressedBlocks(t *testing.T) []byte {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false), zstd.WithSingleSegment(false), zstd.WithWindowSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	src := make([]byte, 1<<20)
	for i := range src {
		src[i] = "vrlog frames "[i%13] ^ byte(i>>12)
	}
	f := enc.EncodeAll(src, nil)
	var h zstd.Header
	if err := h.Decode(f); err != nil || h.HasCheckSum {
		t.Fatalf("zstd header: %v %+v", err, h)
	}
	return f[h.HeaderSize:]
}

// lyingChunk stores the zstd frame that lie makes for a raw length as the
// chunk c's record metadata (meta) or as its first payload block, whose
// raw length the chunk declares as it was: every CRC is right, only the
// lie is left.
func lyingChunk(b []byte, c logfmt.ChunkInfo, end int64, meta bool, lie func(raw uint32) []byte) []byte {
	return rewriteChunk(b, c, end, func(m, data []byte) ([]byte, []byte) {
		ng := int(binary.LittleEndian.Uint16(m[4:]))
		if meta {
			frame := lie(binary.LittleEndian.Uint32(m[40:]))
			m = append(m[:48+72*ng], frame...)
			m[6] = 1 // zstd
			binary.LittleEndian.PutUint32(m[44:], uint32(len(frame)))
			return m, data
		}
		g := m[48 : 48+72]
		frame := lie(binary.LittleEndian.Uint32(g[12:]))
		stored := binary.LittleEndian.Uint32(g[16:])
		g[2] = 1 // zstd
		binary.LittleEndian.PutUint32(g[16:], uint32(len(frame)))
		binary.LittleEndian.PutUint32(g[20:], crc32c(frame))
		return m, append(frame, data[stored:]...)
	})
}

// Damage in the middle: a strict read fails at the same offset in both, a
// tolerant one skips the same chunks and reads the same records.
func TestDamagedLogs(t *testing.T) {
	dir, b, cs := richBytes(t)
	c := cs[len(cs)/2]
	flips := map[string]int64{
		"payload":      c.Offset + 24 + int64(c.MetaLen) + int64(c.DataLen) - 5,
		"meta section": c.Offset + 24 + 60,
		"block header": c.Offset + 9,
		"sync":         cs[2].Offset,
	}
	// Damage that costs no record, read around by a strict reader too,
	// with a warning: the prelude, the header block (its meta section; a
	// length, where no footer locates the chunks), the footer, the trailer.
	footerAt := cs[len(cs)-1].Offset + cs[len(cs)-1].Size()
	readAround := map[string]int64{
		"magic":        3,
		"prelude crc":  13,
		"header block": 16 + 24 + 3,
		"header crc":   16 + 22,
		"trailer":      int64(len(b)) - 3,
		"footer":       int64(len(b)) - 24 - 30,
		"footer head":  footerAt + 9,
	}
	var jobs []job
	// add reads the file d in every mode; readAround says whether a strict
	// read of it must succeed with a warning, or fail.
	add := func(name string, d []byte, readAround bool) {
		p := filepath.Join(dir, name+".vrlog")
		if err := os.WriteFile(p, d, 0o644); err != nil {
			t.Fatal(err)
		}
		strict := job{File: p}
		if g := goDump(strict); readAround != (g.Error == "" && len(g.Warnings) > 0 && g.TornTail < 0) {
			t.Errorf("%s: the Go reader gives error %q, warnings %v, torn tail %d: not the damage meant", name, g.Error, g.Warnings, g.TornTail)
		}
		jobs = append(jobs, strict, job{File: p, Tolerant: true}, job{File: p, Tolerant: true, MetaOnly: true},
			job{File: p, IgnoreIndex: true}, job{File: p, Tolerant: true, IgnoreIndex: true}, job{File: p, Tolerant: true, NoNumpy: true})
	}
	flipped := func(b []byte, at int64) []byte {
		d := append([]byte(nil), b...)
		d[at] ^= 0x40
		return d
	}
	for name, at := range flips {
		add(name, flipped(b, at), false)
	}
	for name, at := range readAround {
		add(name, flipped(b, at), true)
	}
	unindexed := b[:footerAt]
	for name, at := range map[string]int64{"header length, no footer": 16 + 9, "header sync, no footer": 16 + 1} {
		add(name, flipped(unindexed, at), true)
	}
	// A zstd frame that inflates beyond the raw length its chunk declares,
	// as record metadata and as a payload block: a 1 GiB bomb that declares
	// no size, or the raw length (found by walking its block headers), and
	// compressed blocks that declare the raw length (found by decoding).
	inflating := compressedBlocks(t)
	for name, lie := range map[string]func(raw uint32) []byte{
		"bomb":           func(uint32) []byte { return zstdFrame(-1, rleBlocks(1<<30)) },
		"declared bomb":  func(raw uint32) []byte { return zstdFrame(int(raw), rleBlocks(1<<30)) },
		"inflating":      func(raw uint32) []byte { return zstdFrame(int(raw), inflating) },
		"declaring more": func(raw uint32) []byte { return zstdFrame(int(raw)+1, rleBlocks(1<<30)) },
	} {
		add(name+" in metadata", lyingChunk(b, c, footerAt, true, lie), false)
		add(name+" in payload", lyingChunk(b, c, footerAt, false, lie), false)
	}
	// A chunk that holds no record: not written, but not malformed either.
	empty := make([]byte, 48)
	empty[7] = 1 // sorted
	h := binary.LittleEndian.AppendUint32([]byte("VRBK\x03\x00\x00\x00"), uint32(len(empty)))
	h = binary.LittleEndian.AppendUint32(h, 0)
	h = binary.LittleEndian.AppendUint32(h, crc32c(empty))
	h = binary.LittleEndian.AppendUint32(h, crc32c(h))
	p := filepath.Join(dir, "empty chunk.vrlog")
	if err := os.WriteFile(p, bytes.Join([][]byte{b[:cs[0].Offset], h, empty, unindexed[cs[0].Offset:]}, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, job{File: p}, job{File: p, MetaOnly: true}, job{File: p, NoNumpy: true})
	compare(t, jobs)
}

// Files that are not logs, or not logs this reader reads: both readers
// refuse them at the same offset.
func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	golden, err := os.ReadFile("../testdata/logfmt/golden-v1.vrlog")
	if err != nil {
		t.Fatal(err)
	}
	future := append([]byte(nil), golden...)
	future[8] = 2
	binary.LittleEndian.PutUint32(future[12:], crc32.Checksum(future[:12], crc32.MakeTable(crc32.Castagnoli)))
	badCRC := append([]byte(nil), golden...)
	badCRC[13] ^= 1
	var jobs []job
	// Its first 40 bytes overwritten: no valid block after the prelude.
	overwritten := append(bytes.Repeat([]byte("x"), 40), golden[40:]...)
	for name, b := range map[string][]byte{"empty": nil, "magic-only": golden[:5], "prelude-only": golden[:16],
		"foreign": []byte("PK\x03\x04 a zip, not a log"), "future": future, "bad-crc": badCRC,
		"zeros": make([]byte, 8192), "overwritten": overwritten} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		jobs = append(jobs, job{File: p})
	}
	// Not regular files: a FIFO without a writer (opening it would block)
	// and a directory.
	fifo := filepath.Join(dir, "fifo.vrlog")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, job{File: fifo}, job{File: dir})
	compare(t, jobs)
}
