package logtools

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/foxglove"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
)

// run runs the vrlog app with the log tools and returns stdout, stderr and
// the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	app := &cli.App{Name: "vrlog", Commands: Commands(), Writer: &out, ErrWriter: &errb, HideHelpCommand: true}
	code := cliutil.Execute(app, append([]string{"vrlog"}, args...))
	return out.String(), errb.String(), code
}

const t0 = int64(1_700_000_000_000_000_000)
const mono0 = int64(5_000_000_000)

// rec is a record's identity for comparisons: what must survive a copy.
type rec struct {
	Channel          string
	Wall, Mono, Capt int64
	Seq              uint64
	Stamp            bool
	Header, Payload  string
}

// makeLog writes a log of states (zenoh, 100 Hz), small frames (iceoryx2,
// 20 Hz) and a raw channel with a header, over dur, in small chunks.
func makeLog(t *testing.T, path string, dur time.Duration, chunk int) []rec {
	t.Helper()
	w, err := logfmt.Create(path, logfmt.WriterOptions{ChunkSize: chunk, FlushInterval: -1, Sync: logfmt.SyncNone,
		CreatedAt: time.Unix(0, t0), Metadata: map[string]string{"note": "logtools test", "host": "testhost", "tool": "vrlog test"}})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState,
		Compression: logfmt.Compression{Kind: logfmt.CompressionZstd}})
	fr, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame})
	raw, _ := w.AddChannel(logfmt.Channel{Name: "acme/blob", Transport: logfmt.TransportIceoryx2, Topic: "acme/blob", Schema: "acme.Blob/1"})
	names := map[uint16]string{st: "vr/r1/state", fr: "vr/r1/camera/front", raw: "acme/blob"}
	var out []rec
	write := func(r logfmt.Record) {
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec{names[r.Channel], r.RecvWallNs, r.RecvMonoNs, r.CaptureNs, r.Seq, r.HasStamp, string(r.Header), string(r.Payload)})
	}
	n := int(dur / (10 * time.Millisecond))
	for i := 0; i < n; i++ {
		tc := t0 + int64(i)*10_000_000
		s := codec.State{Seq: uint64(i), TNs: tc, EstimateTNs: tc - 2000, Orientation: codec.Quat{W: 1}, Position: codec.Vec3{X: float64(i) / 100},
			Sensors: []codec.Sensor{{ID: 1, TNs: tc - 1000}}}
		write(logfmt.Record{Channel: st, RecvWallNs: tc + 250_000, RecvMonoNs: mono0 + int64(i)*10_000_000 + 250_000, CaptureNs: tc, Seq: uint64(i), HasStamp: true,
			PublisherID: []byte("sim"), Payload: codec.AppendState(nil, &s)})
		if i%5 == 2 {
			fh := codec.NewFrameHeader(uint64(i/5), tc, 1, 16, 8, codec.Mono8)
			pix := make([]byte, fh.DataSize)
			for k := range pix {
				pix[k] = byte(k + i)
			}
			write(logfmt.Record{Channel: fr, RecvWallNs: tc + 700_000, RecvMonoNs: mono0 + int64(i)*10_000_000 + 700_000, CaptureNs: tc, Seq: uint64(i / 5), HasStamp: true,
				Header: codec.AppendFrameHeader(nil, &fh), Payload: pix})
		}
		if i%25 == 7 {
			write(logfmt.Record{Channel: raw, RecvWallNs: tc + 900_000, RecvMonoNs: mono0 + int64(i)*10_000_000 + 900_000,
				Header: []byte{0xAB, byte(i)}, Payload: []byte(fmt.Sprintf("blob %d", i))})
		}
	}
	w.AddDrops(fr, 3)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// readAll reads every record of a log in iteration order.
func readAll(t *testing.T, path string) []rec {
	t.Helper()
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	names := map[uint16]string{}
	for _, c := range r.Channels() {
		names[c.ID] = c.Name
	}
	var out []rec
	it := r.Records(logfmt.Filter{})
	for it.Next() {
		x := it.Record()
		out = append(out, rec{names[x.Channel], x.RecvWallNs, x.RecvMonoNs, x.CaptureNs, x.Seq, x.HasStamp, string(x.Header), string(x.Payload)})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func equalRecs(t *testing.T, what string, got, want []rec) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: record %d differs:\n got %+v\nwant %+v", what, i, got[i], want[i])
		}
	}
}

func TestInfo(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.vrlog")
	recs := makeLog(t, p, 2*time.Second, 8<<10)
	out, errs, code := run(t, "info", p)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	for _, want := range []string{"footer:    present", "note: logtools test", "host: testhost", "vr/r1/state", "iceoryx2", "vrsdk.Frame/1", "acme.Blob/1 (raw)", "100.00 Hz", "duration:  1.99s"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	out, _, code = run(t, "info", "--json", "--time-format", "unix", p)
	var in Info
	if err := json.Unmarshal([]byte(out), &in); err != nil || code != 0 {
		t.Fatalf("json %v code %d: %s", err, code, out)
	}
	if in.Records != uint64(len(recs)) || !in.Finished || len(in.Channels) != 3 || in.Channels[1].Drops != 3 || in.Start != codec.FormatSeconds(t0+250_000) {
		t.Fatalf("info %+v", in)
	}
	if in.Channels[0].CompressionRatio <= 1 || in.Channels[0].RateHz < 99.9 || in.Channels[0].RateHz > 100.1 {
		t.Fatalf("state channel %+v", in.Channels[0])
	}

	// An unfinished log: no footer, a hint to recover.
	b, _ := os.ReadFile(p)
	cut := filepath.Join(dir, "cut.vrlog")
	os.WriteFile(cut, b[:len(b)*2/3], 0o644)
	out, errs, code = run(t, "info", cut)
	if code != 0 || !strings.Contains(out, "footer:    MISSING") || !strings.Contains(out, "vrlog recover "+cut) || !strings.Contains(out, "torn tail") {
		t.Fatalf("unfinished log: code %d\n%s%s", code, out, errs)
	}
}

func TestCat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.vrlog")
	makeLog(t, p, time.Second, 8<<10)
	out, errs, code := run(t, "cat", p, "--channel", "vr/*/state", "--start", "0.1", "--end", "0.2", "--json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines in [0.1, 0.2) s of a 100 Hz channel:\n%s", len(lines), out)
	}
	var cr struct {
		CatRecord
		Decoded codec.State `json:"decoded"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &cr); err != nil {
		t.Fatal(err)
	}
	// elapsed counts from the session epoch (the first state, t0), as in
	// every verb.
	if cr.Channel != "vr/r1/state" || *cr.Seq != 10 || cr.Decoded.Seq != 10 || cr.Decoded.Elapsed != 0.1 {
		t.Fatalf("first record %+v", cr)
	}
	out, _, code = run(t, "cat", p, "-c", "vr/r1/state", "-n", "1", "--start", "0.1")
	if code != 0 || !strings.HasPrefix(out, "0.100250000 vr/r1/state seq=10 t=0.100000000 ") {
		t.Fatalf("text times are not elapsed: %q", out)
	}
	out, _, code = run(t, "cat", "-n", "3", "--raw", "--channel", "acme/blob", p)
	if code != 0 || strings.Count(out, "payload: ") != 3 || !strings.Contains(out, "header:  ab07") {
		t.Fatalf("raw cat code %d:\n%s", code, out)
	}
	_, errs, code = run(t, "cat", p, "--channel", "nope/*")
	if code != cliutil.ExitUsage || !strings.Contains(errs, "matches no channel") {
		t.Fatalf("unknown channel: code %d %s", code, errs)
	}
}

func TestCutMergeRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.vrlog")
	all := makeLog(t, src, 3*time.Second, 16<<10)
	a, b, m := filepath.Join(dir, "a.vrlog"), filepath.Join(dir, "b.vrlog"), filepath.Join(dir, "m.vrlog")
	if out, errs, code := run(t, "cut", src, "-o", a, "--end", "1.5"); code != 0 {
		t.Fatalf("cut a: %d %s %s", code, out, errs)
	}
	if _, errs, code := run(t, "filter", src, "-o", b, "--start", codec.FormatRFC3339(t0+250_000+1_500_000_000)); code != 0 {
		t.Fatalf("cut b: %d %s", code, errs)
	}
	ra, rb := readAll(t, a), readAll(t, b)
	if len(ra) == 0 || len(rb) == 0 || len(ra)+len(rb) != len(all) {
		t.Fatalf("cut sizes %d + %d != %d", len(ra), len(rb), len(all))
	}
	for _, x := range ra {
		if x.Wall >= t0+250_000+1_500_000_000 {
			t.Fatalf("record past --end in a: %+v", x)
		}
	}
	if out, errs, code := run(t, "merge", b, a, "-o", m); code != 0 {
		t.Fatalf("merge: %d %s %s", code, out, errs)
	}
	if out, _, code := run(t, "verify", m); code != 0 || !strings.HasPrefix(out, "OK ") {
		t.Fatalf("verify merged: %d %s", code, out)
	}
	equalRecs(t, "merge(cut, cut)", readAll(t, m), all)
	r, err := logfmt.Open(a, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	md := r.Header().Metadata
	chans := r.Channels()
	r.Close()
	if md["note"] != "logtools test" || !strings.Contains(md["vrlog.cut"], "end=") || md["vrlog.cut_from"] != src || len(chans) != 3 || chans[0].Compression.Kind != logfmt.CompressionZstd {
		t.Fatalf("cut metadata %v channels %+v", md, chans)
	}

	// Channel selection, and no overwrite without --force.
	if _, errs, code := run(t, "cut", src, "-o", a, "--channel", "acme/*"); code != cliutil.ExitUsage || !strings.Contains(errs, "--force") {
		t.Fatalf("overwrite without --force: %d %s", code, errs)
	}
	if _, errs, code := run(t, "cut", src, "-o", a, "--channel", "acme/*", "--force"); code != 0 {
		t.Fatalf("cut --force: %d %s", code, errs)
	}
	var want []rec
	for _, x := range all {
		if x.Channel == "acme/blob" {
			want = append(want, x)
		}
	}
	equalRecs(t, "cut --channel", readAll(t, a), want)
	if _, errs, code := run(t, "merge", a, a, "-o", a+".x"); code != 0 {
		t.Fatalf("merge self: %d %s", code, errs)
	}
	if got := readAll(t, a+".x"); len(got) != 2*len(want) {
		t.Fatalf("merge of a file with itself: %d records, want %d", len(got), 2*len(want))
	}
	if _, errs, code := run(t, "merge", a, b, "-o", b); code != cliutil.ExitUsage {
		t.Fatalf("merge into an input: %d %s", code, errs)
	}
}

// chunkOffsets returns the chunk index of a log.
func chunks(t *testing.T, path string) []logfmt.ChunkInfo {
	t.Helper()
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return append([]logfmt.ChunkInfo(nil), r.Chunks()...)
}

// recover keeps the source's session epoch when it drops the chunk that
// held the first state: elapsed in the copy is the source's.
func TestRecoverKeepsEpoch(t *testing.T) {
	dir := t.TempDir()
	orig, err := os.ReadFile("../../../testdata/sample.vrlog")
	if err != nil {
		t.Fatal(err)
	}
	src, bad, fixed := filepath.Join(dir, "src.vrlog"), filepath.Join(dir, "bad.vrlog"), filepath.Join(dir, "fixed.vrlog")
	os.WriteFile(src, orig, 0o644)
	epoch := func(p string) int64 {
		t.Helper()
		r, err := logfmt.Open(p, logfmt.ReaderOptions{Tolerant: true})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ns, _ := analyzer.SessionEpoch(r)
		return ns
	}
	r, err := logfmt.Open(src, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var state uint16
	for _, c := range r.Channels() {
		if c.Schema == codec.SchemaState {
			state = c.ID
		}
	}
	r.Close()
	var first logfmt.ChunkInfo // the first chunk holding a state
	for _, c := range chunks(t, src) {
		for _, cc := range c.Channels {
			if cc.Channel == state && (first.Offset == 0 || c.MinMonoNs < first.MinMonoNs) {
				first = c
			}
		}
	}
	b := append([]byte(nil), orig...)
	b[first.Offset+30] ^= 0x10 // its meta section fails its CRC: the chunk is dropped whole
	os.WriteFile(bad, b, 0o644)
	if _, errOut, code := run(t, "recover", bad, "-o", fixed); code != 0 {
		t.Fatalf("recover: exit %d: %s", code, errOut)
	}
	if n := len(chunks(t, fixed)); n != len(chunks(t, src))-1 {
		t.Fatalf("the copy has %d chunks, want the source's but the first", n)
	}
	if got, want := epoch(fixed), epoch(src); got != want {
		t.Fatalf("copy's session epoch %d, the source's %d", got, want)
	}
}

func TestRecoverAndVerify(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.vrlog")
	makeLog(t, src, 2*time.Second, 4<<10)
	orig, _ := os.ReadFile(src)
	cs := chunks(t, src)
	if len(cs) < 6 {
		t.Fatalf("want several chunks, have %d", len(cs))
	}
	all := readAll(t, src)
	// records of chunks [0, k) in iteration order: the records whose mono
	// stamp is at most the last of chunk k-1 (chunks are time-ordered here).
	prefix := func(k int) []rec {
		var out []rec
		for _, x := range all {
			if k > 0 && x.Mono <= cs[k-1].MaxMonoNs {
				out = append(out, x)
			}
		}
		return out
	}
	// the records but those of chunk k's last payload block (its last
	// channel in group order): recover salvages the rest of the chunk.
	names := map[uint16]string{}
	if r, err := logfmt.Open(src, logfmt.ReaderOptions{}); err == nil {
		for _, c := range r.Channels() {
			names[c.ID] = c.Name
		}
		r.Close()
	}
	withoutBlock := func(k int) []rec {
		lost := names[cs[k].Channels[len(cs[k].Channels)-1].Channel]
		var out []rec
		for _, x := range all {
			if x.Mono < cs[k].MinMonoNs || x.Mono > cs[k].MaxMonoNs || x.Channel != lost {
				out = append(out, x)
			}
		}
		return out
	}
	mid := len(cs) / 2
	cases := []struct {
		name    string
		damage  func([]byte) []byte
		want    []rec
		verify  int    // verify's exit code on the damaged file
		message string // in recover's report
	}{
		{"torn_last_chunk", func(b []byte) []byte { return b[:cs[len(cs)-1].Offset+40] }, prefix(len(cs) - 1), 1, "torn tail"},
		{"torn_mid_file", func(b []byte) []byte { return b[:cs[mid].Offset+cs[mid].Size()/2] }, prefix(mid), 1, "torn tail"},
		{"no_footer", func(b []byte) []byte { return b[:cs[len(cs)-1].Offset+cs[len(cs)-1].Size()] }, all, 1, "no footer"},
		{"bit_flip_payload", func(b []byte) []byte {
			b[cs[mid].Offset+cs[mid].Size()-10] ^= 0x10
			return b
		}, withoutBlock(mid), 1, "CORRUPTION: salvaged the chunk"},
		{"zeroed_tail", func(b []byte) []byte { // power loss: the last chunk's data never reached the disk
			last := cs[len(cs)-1]
			b = b[:last.Offset+last.Size()]
			clear(b[last.Offset+24+int64(last.MetaLen):])
			return append(b, make([]byte, 4096)...)
		}, prefix(len(cs) - 1), 1, "torn tail"},
		{"flipped_magic", func(b []byte) []byte { b[2] ^= 0x10; return b }, all, 1, "rebuilt (damaged, held no record)"},
		{"flipped_footer", func(b []byte) []byte { b[len(b)-40] ^= 0x10; return b }, all, 1, "rebuilt (damaged, held no record)"},
		{"intact", func(b []byte) []byte { return b }, all, 0, "nothing was damaged"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(dir, tc.name+".vrlog")
			fixed := filepath.Join(dir, tc.name+".fixed.vrlog")
			os.WriteFile(bad, tc.damage(append([]byte(nil), orig...)), 0o644)
			out, errs, code := run(t, "verify", bad)
			if code != tc.verify {
				t.Fatalf("verify damaged: code %d, want %d\n%s%s", code, tc.verify, out, errs)
			}
			if !strings.HasPrefix(tc.message, "CORRUPTION") && tc.name != "intact" {
				// Read up to the torn tail, or around the damaged
				// structure with a warning: no record lost, exit 0.
				catOut, catErrs, catCode := run(t, "cat", "--json", bad)
				if catCode != 0 || strings.Count(catOut, "\n") != len(tc.want) {
					t.Fatalf("cat: code %d, %d lines, want %d\n%s", catCode, strings.Count(catOut, "\n"), len(tc.want), catErrs)
				}
				if strings.HasPrefix(tc.name, "flipped") && strings.Count(catErrs, "cat: warning: damaged, read around it (no record lost): "+bad+": offset ") != 1 {
					t.Fatalf("cat does not warn about the damage once: %q", catErrs)
				}
				if tc.message == "torn tail" && strings.Count(catErrs, "cat: warning: "+bad+": torn tail at byte ") != 1 {
					t.Fatalf("cat does not say once that its input is torn: %q", catErrs)
				}
			}
			if tc.name == "bit_flip_payload" && !strings.Contains(out, fmt.Sprintf("chunk at offset %d ", cs[mid].Offset)) {
				t.Fatalf("verify does not name the chunk at offset %d:\n%s", cs[mid].Offset, out)
			}
			out, errs, code = run(t, "recover", bad, "-o", fixed)
			if code != 0 {
				t.Fatalf("recover: code %d\n%s%s", code, out, errs)
			}
			if said := strings.Contains(errs, "recover: warning: "); said != (tc.name != "intact") { // a missing footer too: the input was not finished
				t.Fatalf("recover's stderr on a %s input: %q", tc.name, errs)
			}
			if !strings.Contains(out, tc.message) || !strings.Contains(out, "verified") {
				t.Fatalf("recover report lacks %q:\n%s", tc.message, out)
			}
			if out, _, code := run(t, "verify", fixed); code != 0 {
				t.Fatalf("verify recovered: %d\n%s", code, out)
			}
			equalRecs(t, "recovered", readAll(t, fixed), tc.want)
			// A second recover refuses to overwrite.
			if _, _, code := run(t, "recover", bad, "-o", fixed); code != cliutil.ExitUsage {
				t.Fatalf("recover over an existing file: code %d", code)
			}
			if out, _, code := run(t, "recover", "--json", bad, "-o", fixed, "--force"); code != 0 || !strings.Contains(out, `"records_kept":`) {
				t.Fatalf("recover --json --force: %d %s", code, out)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.vrlog")
	makeLog(t, good, 500*time.Millisecond, 4<<10)
	b, _ := os.ReadFile(good)
	files := map[string][]byte{
		"empty":   {},
		"foreign": []byte("%PDF-1.7 this is not a log at all, just some bytes that go on for a while........"),
		"short":   b[:5],
		"future":  futureVersion(b),
	}
	for name, data := range files {
		p := filepath.Join(dir, name+".vrlog")
		os.WriteFile(p, data, 0o644)
		for _, args := range [][]string{{"info", p}, {"cat", p}, {"verify", p}, {"cut", p, "-o", p + ".cut"}, {"merge", p, good, "-o", p + ".m"},
			{"export", p, "--format", "mcap", "-o", p + ".mcap"}, {"export", p, "--format", "csv", "-o", p + ".csv"}, {"recover", p, "-o", p + ".rec"}} {
			out, errs, code := run(t, args...)
			if code != cliutil.ExitUsage {
				t.Errorf("%s %v: code %d, want 2\n%s%s", name, args[0], code, out, errs)
			}
			if !strings.Contains(errs, p) {
				t.Errorf("%s %v: error does not name the file: %s", name, args[0], errs)
			}
			if name == "future" && args[0] != "recover" && !strings.Contains(errs, "newer") {
				t.Errorf("future %v: %s", args[0], errs)
			}
			if name == "foreign" && !strings.Contains(errs, "offset 0") {
				t.Errorf("foreign %v: no offset: %s", args[0], errs)
			}
			// An empty or 5-byte file holds no record: no verb suggests a
			// recover, which could only say "nothing to recover".
			if (name == "empty" || name == "short") && (strings.Contains(errs, "vrlog recover") || (args[0] != "recover" && !strings.Contains(errs, "holds no record"))) {
				t.Errorf("%s %v: %s", name, args[0], errs)
			}
		}
	}
	// Not a log at all: recover says --force would search it, and finds
	// nothing with it.
	foreign := filepath.Join(dir, "foreign.vrlog")
	if _, errs, code := run(t, "recover", foreign, "-o", foreign+".rec"); code != cliutil.ExitUsage || !strings.Contains(errs, "--force") {
		t.Errorf("recover of a foreign file: %d %s", code, errs)
	}
	if _, errs, code := run(t, "recover", "--force", foreign, "-o", foreign+".rec"); code != cliutil.ExitUsage || !strings.Contains(errs, "no vrlog block") {
		t.Errorf("recover --force of a foreign file: %d %s", code, errs)
	}
	// A FIFO without a writer: every verb says what it needs, at once.
	fifo := filepath.Join(dir, "fifo.vrlog")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"info", fifo}, {"cat", fifo}, {"verify", fifo}, {"recover", fifo, "-o", fifo + ".rec"}, {"cut", fifo, "-o", fifo + ".cut"},
		{"export", fifo, "--format", "csv", "-o", fifo + ".csv"}} {
		done := make(chan string, 1)
		go func() {
			_, errs, code := run(t, args...)
			done <- fmt.Sprintf("%d %s", code, errs)
		}()
		select {
		case res := <-done:
			if !strings.HasPrefix(res, "2 ") || !strings.Contains(res, "save the stream to a file") {
				t.Errorf("%s on a FIFO: %s", args[0], res)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s blocks on a FIFO without a writer", args[0])
		}
	}
	if _, errs, code := run(t, "info", filepath.Join(dir, "missing.vrlog")); code != cliutil.ExitUsage || !strings.Contains(errs, "missing.vrlog") {
		t.Errorf("missing file: %d %s", code, errs)
	}
	if _, errs, code := run(t, "cat", good, "--bogus"); code != cliutil.ExitUsage {
		t.Errorf("unknown flag: %d %s", code, errs)
	}
	if out, _, code := run(t, "recover", "--help"); code != 0 || !strings.Contains(out, "EXIT CODES") {
		t.Errorf("help: %d %s", code, out)
	}
}

// futureVersion rewrites a log's prelude to major version 9 (with a
// correct prelude CRC: magic, major, minor, crc32c of those 12 bytes).
func futureVersion(b []byte) []byte {
	out := append([]byte(nil), b...)
	binary.LittleEndian.PutUint16(out[8:], 9)
	binary.LittleEndian.PutUint32(out[12:], crc32.Checksum(out[:12], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// expectedMsg mirrors tools/mcapcheck's expectation format.
type expectedMsg struct {
	Topic       string `json:"topic"`
	LogTime     uint64 `json:"log_time"`
	PublishTime uint64 `json:"publish_time"`
	Sequence    uint32 `json:"sequence"`
	Schema      string `json:"schema"`
	Encoding    string `json:"encoding"`
	// Fields: dotted paths into the decoded message and their values;
	// DataSHA256: the digest of its "data" field (a frame's pixels).
	Fields     map[string]any `json:"fields,omitempty"`
	DataSHA256 string         `json:"data_sha256,omitempty"`
}

func repoRoot(t *testing.T) string {
	t.Helper()
	d, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			t.Fatal("go.mod not found")
		}
		d = p
	}
}

func TestExportMCAPIndependentReader(t *testing.T) {
	root := repoRoot(t)
	py := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("the independent MCAP check needs %s with tools/mcapcheck/requirements.txt: run `make peers` "+
			"(or python3 -m venv .venv && .venv/bin/pip install -r tools/mcapcheck/requirements.txt): %v", py, err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src.vrlog")
	all := makeLog(t, src, time.Second, 8<<10)
	out := filepath.Join(dir, "out.mcap")
	if o, errs, code := run(t, "export", src, "--format", "mcap", "-o", out); code != 0 {
		t.Fatalf("export: %d %s %s", code, o, errs)
	}
	var want []expectedMsg
	perChan := map[string]uint32{}
	for _, x := range all {
		m := expectedMsg{Topic: x.Channel, LogTime: uint64(x.Wall), PublishTime: uint64(x.Wall), Sequence: perChan[x.Channel]}
		perChan[x.Channel]++
		if x.Stamp {
			m.PublishTime, m.Sequence = uint64(x.Capt), uint32(x.Seq)
		}
		switch x.Channel {
		case "vr/r1/state":
			m.Schema, m.Encoding = codec.SchemaState, "json"
			st, err := codec.DecodeState([]byte(x.Payload), 0)
			if err != nil {
				t.Fatal(err)
			}
			p := m
			p.Topic, p.Schema, p.Encoding = m.Topic+":pose", foxglove.SchemaPoseInFrame, "protobuf"
			p.Fields = map[string]any{"frame_id": "world", "timestamp.seconds": st.TNs / 1e9, "timestamp.nanos": st.TNs % 1e9,
				"pose.position.x": st.Position.X, "pose.position.y": st.Position.Y, "pose.position.z": st.Position.Z,
				"pose.orientation.x": st.Orientation.X, "pose.orientation.y": st.Orientation.Y,
				"pose.orientation.z": st.Orientation.Z, "pose.orientation.w": st.Orientation.W}
			want = append(want, p)
		case "vr/r1/camera/front":
			// Protobuf foxglove.RawImage whose pixels are the log's.
			m.Schema, m.Encoding = foxglove.SchemaRawImage, "protobuf"
			fh, err := codec.DecodeFrameHeader([]byte(x.Header), 0)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(x.Payload))
			m.DataSHA256 = hex.EncodeToString(sum[:])
			m.Fields = map[string]any{"width": fh.Width, "height": fh.Height, "step": fh.Stride, "encoding": fh.Encoding.String(),
				"frame_id": fmt.Sprintf("camera_%d", fh.CameraID), "timestamp.seconds": fh.TNs / 1e9, "timestamp.nanos": fh.TNs % 1e9}
		default:
			m.Schema, m.Encoding = foxglove.SchemaOpaque, "json"
			m.Fields = map[string]any{"schema": "acme.Blob/1", "header": base64.StdEncoding.EncodeToString([]byte(x.Header)),
				"payload": base64.StdEncoding.EncodeToString([]byte(x.Payload))}
		}
		want = append(want, m)
	}
	exp := filepath.Join(dir, "expected.json")
	b, _ := json.Marshal(map[string]any{"compression": "zstd", "messages": want})
	os.WriteFile(exp, b, 0o644)
	res, err := exec.Command(py, filepath.Join(root, "tools", "mcapcheck", "check.py"), out, exp).CombinedOutput()
	if err != nil {
		t.Fatalf("tools/mcapcheck/check.py: %v\n%s", err, res)
	}
	t.Logf("mcapcheck: %s", bytes.TrimSpace(res))

	// A window and a channel selection; refusing to overwrite.
	if _, _, code := run(t, "export", src, "--format", "mcap", "-o", out); code != cliutil.ExitUsage {
		t.Fatalf("export over an existing file: %d", code)
	}
	if o, errs, code := run(t, "export", src, "-o", out, "--force", "--channel", "vr/r1/state", "--start", "0.5", "--compression", "none"); code != 0 || !strings.Contains(o, "wrote ") {
		t.Fatalf("export --force: %d %s %s", code, o, errs)
	}
	if o, errs, code := run(t, "export", src, "-o", out, "--force", "--channel", "vr/r1/state", "--start", "0.5", "--compression", "none",
		"--pose=false"); code != 0 || !strings.Contains(o, "wrote ") {
		t.Fatalf("export --pose=false: %d %s %s", code, o, errs)
	}
	var sub []expectedMsg
	for _, m := range want {
		if m.Topic == "vr/r1/state" && m.LogTime >= uint64(t0+250_000+500_000_000) {
			sub = append(sub, m)
		}
	}
	b, _ = json.Marshal(map[string]any{"compression": "", "messages": sub})
	os.WriteFile(exp, b, 0o644)
	if res, err := exec.Command(py, filepath.Join(root, "tools", "mcapcheck", "check.py"), out, exp).CombinedOutput(); err != nil {
		t.Fatalf("windowed export: %v\n%s", err, res)
	}
}

func TestExportCSV(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.vrlog")
	all := makeLog(t, src, time.Second, 8<<10)
	outDir := filepath.Join(dir, "csv")
	if o, errs, code := run(t, "export", src, "--format", "csv", "-o", outDir, "--time-format", "elapsed", "--epoch", "log-start"); code != 0 {
		t.Fatalf("export csv: %d %s %s", code, o, errs)
	}
	ents, _ := os.ReadDir(outDir)
	if len(ents) != 3 {
		t.Fatalf("%d csv files", len(ents))
	}
	b, _ := os.ReadFile(filepath.Join(outDir, "vr_r1_state.csv"))
	// The docs name the file as export does (they said DIR/<channel>.csv).
	if doc, _ := os.ReadFile(filepath.Join(repoRoot(t), "docs", "log-tools.md")); !strings.Contains(string(doc), "`vr/r1/state` is `DIR/vr_r1_state.csv`") {
		t.Error("docs/log-tools.md does not name the CSV file of vr/r1/state as export does")
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	n := 0
	for _, x := range all {
		if x.Channel == "vr/r1/state" {
			n++
		}
	}
	if len(lines) != n+1 || !strings.HasPrefix(lines[2], "1,1,1,0.009750000,") || !strings.Contains(lines[2], ",10000000,10000000,250000,0,0,0,") {
		t.Fatalf("state csv (%d lines):\n%s\n%s", len(lines), lines[0], lines[2])
	}
	one := filepath.Join(dir, "all.csv")
	if _, errs, code := run(t, "export", src, "--format", "csv", "-o", one); code != 0 {
		t.Fatalf("single csv: %d %s", code, errs)
	}
	b, _ = os.ReadFile(one)
	if got := strings.Count(string(b), "\n"); got != len(all)+1 {
		t.Fatalf("single csv has %d lines, want %d", got, len(all)+1)
	}
}

// export --format parquet: a directory per channel; an output that is no
// directory, flags of another format, or a bad split are usage errors;
// existing files only with --force.
func TestExportParquet(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.vrlog")
	makeLog(t, src, time.Second, 8<<10)
	out := filepath.Join(dir, "pq")
	if o, errs, code := run(t, "export", src, "--format", "parquet", "-o", out, "--rows-per-file", "3"); code != 0 || !strings.Contains(errs+o, "Parquet file(s) under") {
		t.Fatalf("export parquet: %d %s %s", code, o, errs)
	}
	parts, _ := filepath.Glob(filepath.Join(out, "vr_r1_state", "part-*.parquet"))
	if len(parts) < 2 {
		t.Fatalf("state table in %d files, want it split by 3 rows", len(parts))
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-o", "-"}, 2, "writes a directory"},
		{[]string{"-o", out}, 2, "exists"},
		{[]string{"-o", out, "--rows-per-file", "0"}, 2, "want a positive number"},
		{[]string{"-o", out, "--force"}, 0, ""},
	} {
		_, errs, code := run(t, append([]string{"export", src, "--format", "parquet"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Fatalf("%v: exit %d (want %d) %s", c.args, code, c.code, errs)
		}
	}
	for _, flag := range []string{"--payloads", "--rows-per-file=10"} {
		if _, errs, code := run(t, "export", src, "--format", "csv", "-o", filepath.Join(dir, "x.csv"), flag); code != 2 || !strings.Contains(errs, "--format parquet") {
			t.Fatalf("%s with csv: exit %d %s", flag, code, errs)
		}
	}
}

// Frames large enough to be written from the mapped log's pages (not
// copied) come out of export exactly, stored raw or zstd in the log, in
// uncompressed and zstd MCAP chunks: the independent reader checks every
// CRC and the sha256 of every frame's pixels.
func TestExportMCAPLargeFrames(t *testing.T) {
	root := repoRoot(t)
	py := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("the independent MCAP check needs %s: run `make peers`: %v", py, err)
	}
	dir := t.TempDir()
	for _, logComp := range []logfmt.CompressionKind{logfmt.CompressionNone, logfmt.CompressionZstd} {
		src := filepath.Join(dir, fmt.Sprintf("frames-%d.vrlog", logComp))
		w, err := logfmt.Create(src, logfmt.WriterOptions{ChunkSize: 1 << 20, FlushInterval: -1, Sync: logfmt.SyncNone})
		if err != nil {
			t.Fatal(err)
		}
		fr, err := w.AddChannel(logfmt.Channel{Name: "cam", Transport: logfmt.TransportIceoryx2, Topic: "cam", Schema: codec.SchemaFrame,
			Compression: logfmt.Compression{Kind: logComp}})
		if err != nil {
			t.Fatal(err)
		}
		var want []expectedMsg
		for i := range 12 {
			tc := t0 + int64(i)*33_000_000
			fh := codec.NewFrameHeader(uint64(i), tc, 2, 320, 240, codec.RGB8)
			pix := make([]byte, fh.DataSize)
			for k := range pix {
				pix[k] = byte(k/7 + i*k%13)
			}
			r := logfmt.Record{Channel: fr, RecvWallNs: tc + 500_000, RecvMonoNs: mono0 + int64(i)*33_000_000, CaptureNs: tc, Seq: uint64(i),
				HasStamp: true, Header: codec.AppendFrameHeader(nil, &fh), Payload: pix}
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(pix)
			want = append(want, expectedMsg{Topic: "cam", LogTime: uint64(r.RecvWallNs), PublishTime: uint64(tc), Sequence: uint32(i),
				Schema: foxglove.SchemaRawImage, Encoding: "protobuf", DataSHA256: hex.EncodeToString(sum[:]),
				Fields: map[string]any{"width": 320, "height": 240, "step": 960, "frame_id": "camera_2"}})
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for _, comp := range []string{"none", "zstd"} {
			out := filepath.Join(dir, fmt.Sprintf("out-%d-%s.mcap", logComp, comp))
			if o, errs, code := run(t, "export", src, "--compression", comp, "-o", out); code != 0 {
				t.Fatalf("export: %d %s %s", code, o, errs)
			}
			exp := filepath.Join(dir, "expected.json")
			mc := comp
			if comp == "none" {
				mc = ""
			}
			b, _ := json.Marshal(map[string]any{"compression": mc, "messages": want})
			os.WriteFile(exp, b, 0o644)
			if res, err := exec.Command(py, filepath.Join(root, "tools", "mcapcheck", "check.py"), out, exp).CombinedOutput(); err != nil {
				t.Fatalf("log %d, chunks %s: %v\n%s", logComp, comp, err, res)
			}
		}
	}
}

// A log a writer still holds is said LIVE, with what is sound so far, and
// is not finished (exit 1), but neither damaged nor sent to recover.
func TestVerifyLiveLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.vrlog")
	f, err := outfile.CreateLive(path, outfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := logfmt.NewWriter(f, logfmt.WriterOptions{FlushInterval: -1, Sync: logfmt.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := w.AddChannel(logfmt.Channel{Name: "a", Transport: logfmt.TransportZenoh, Topic: "a"})
	for i := range 100 {
		if err := w.Write(&logfmt.Record{Channel: ch, RecvMonoNs: mono0 + int64(i), RecvWallNs: t0 + int64(i), Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil { // the live file's buffer, as the recorder's sync policy does
		t.Fatal(err)
	}
	out, errOut, code := run(t, "verify", path)
	if code != 1 || !strings.Contains(out, "LIVE "+path+": being written by PID ") || !strings.Contains(out, "1 sound chunks, 100 records so far") ||
		strings.Contains(out, "DAMAGED") || strings.Contains(out, "recover") || !strings.Contains(errOut, "still being written") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	torn := filepath.Join(filepath.Dir(path), "torn.vrlog")
	if b, err := os.ReadFile(path); err != nil { // unfinished, and no writer holds the copy: damaged
		t.Fatal(err)
	} else if err := os.WriteFile(torn, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "verify", path, torn); code != 1 || !strings.Contains(errOut, "1 of 2 files damaged, 1 still being written") {
		t.Fatalf("verify of a live and a damaged file: exit %d, %s", code, errOut)
	}
	out, _, _ = run(t, "verify", "--json", path)
	if !strings.Contains(out, `"live":"being written by PID `) || !strings.Contains(out, `"ok":false`) {
		t.Fatalf("--json: %s", out)
	}
}
