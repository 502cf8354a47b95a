package replayer

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
)

// twoFiles writes a state channel split over two files (even seqs in a, odd
// in b, as two recorders on one host would see them) plus, in b, a frame
// channel whose records arrive 3 ms after capture, and a probe channel.
// File b's monotonic clock has another origin; the wall clocks agree. The
// files name one recording (hostclock.MetaRecording), which is what lets
// their receive clocks be joined; meta adds to both files' metadata.
func twoFiles(t *testing.T, meta ...map[string]string) (a, b string) {
	dir := t.TempDir()
	a, b = filepath.Join(dir, "a.vrlog"), filepath.Join(dir, "b.vrlog")
	t0 := int64(1_764_446_400_000_000_000)
	for k, path := range []string{a, b} {
		md := map[string]string{hostclock.MetaRecording: "rec-1"}
		if k < len(meta) {
			maps.Copy(md, meta[k])
		}
		w, err := logfmt.Create(path, logfmt.WriterOptions{ChunkSize: 1024, Metadata: md})
		if err != nil {
			t.Fatal(err)
		}
		monoOrigin := int64(1e12) + int64(k)*7e11 // b's monotonic differs from a's by 700 s
		sc, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState})
		var fc, pc uint16
		if k == 1 {
			fc, _ = w.AddChannel(logfmt.Channel{Name: "vr/r1/cam", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/cam", Schema: codec.SchemaFrame})
			pc, _ = w.AddChannel(logfmt.Channel{Name: "probe", Transport: logfmt.TransportInternal, Topic: "t", Schema: codec.SchemaClockProbe})
		}
		for i := k; i < 100; i += 2 {
			c := t0 + int64(i)*10e6
			s := codec.State{Seq: uint64(i), TNs: c}
			recv := c + 1e6
			if err := w.Write(&logfmt.Record{Channel: sc, RecvWallNs: recv, RecvMonoNs: recv - t0 + monoOrigin, CaptureNs: c, Seq: uint64(i), HasStamp: true,
				Payload: codec.AppendState(nil, &s)}); err != nil {
				t.Fatal(err)
			}
			if k == 1 && i%5 == 1 {
				h := codec.NewFrameHeader(uint64(i), c-5e6, 1, 1, 1, codec.Mono8)
				fr := c + 3e6 - 5e6 // captured 5 ms before the state, received 3 ms after capture
				w.Write(&logfmt.Record{Channel: fc, RecvWallNs: fr, RecvMonoNs: fr - t0 + monoOrigin, CaptureNs: c - 5e6, Seq: uint64(i), HasStamp: true,
					Header: codec.AppendFrameHeader(nil, &h), Payload: []byte{1}})
				w.Write(&logfmt.Record{Channel: pc, RecvWallNs: recv, RecvMonoNs: recv - t0 + monoOrigin, Payload: codec.AppendClockProbe(nil, codec.ClockProbe{})})
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

func passKeys(t *testing.T, s *session) (keys []int64, chans []int, names []string) {
	err := s.src.Pass(context.Background(), func(r *player.Rec) bool {
		keys, chans = append(keys, r.Key), append(chans, r.Channel)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range s.outs {
		names = append(names, o.Name)
	}
	return
}

func TestMergeFilesByReceiveTime(t *testing.T) {
	a, b := twoFiles(t)
	s, err := open(&Config{Files: []string{a, b}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	keys, chans, names := passKeys(t, s)
	if !slices.Equal(names, []string{"vr/r1/state", "vr/r1/cam"}) {
		t.Fatalf("outputs %v (the probe must not be one; the state channel of both files is one output)", names)
	}
	if len(keys) != 100+10 || !slices.IsSorted(keys) {
		t.Fatalf("%d records, sorted %v", len(keys), slices.IsSorted(keys))
	}
	// The states interleave across the files: every 10 ms.
	var st []int64
	for i, k := range keys {
		if chans[i] == 0 {
			st = append(st, k)
		}
	}
	for i := 1; i < len(st); i++ {
		if d := st[i] - st[i-1]; d != 10e6 {
			t.Fatalf("state %d: %d ns after the previous", i, d)
		}
	}
}

func TestCaptureClockAndWindow(t *testing.T) {
	a, b := twoFiles(t)
	w, err := logfmt.ParseWindow("0.1", "0.3", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := open(&Config{Files: []string{a, b}, Clock: ClockCapture, Window: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	keys, chans, _ := passKeys(t, s)
	t0 := int64(1_764_446_400_000_000_000)
	if s.logStart != t0 {
		t.Fatalf("log start %d", s.logStart)
	}
	for i, k := range keys {
		if k < t0+100e6 || k >= t0+300e6 {
			t.Fatalf("key %d outside the window", k-t0)
		}
		if chans[i] == 0 && (k-t0)%10e6 != 0 {
			t.Fatalf("state key %d is not its capture time", k-t0)
		}
	}
	if len(keys) != 20+2 { // states 10..29, frames 11 and 21
		t.Fatalf("%d records in [0.1, 0.3) s", len(keys))
	}
}

func TestChannelsAndRemap(t *testing.T) {
	a, b := twoFiles(t)
	set, _ := keyexpr.ParseSet([]string{"vr/*/state"})
	m, _ := keyexpr.ParseRemap("vr/r1/**=sim/**")
	s, err := open(&Config{Files: []string{a, b}, Channels: set, Remaps: []*keyexpr.Remap{m}, Prefix: "test/"}, []bool{false})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if len(s.outs) != 1 || s.outs[0].Topic != "test/sim/state" {
		t.Fatalf("outputs %+v", s.outs)
	}
	set, _ = keyexpr.ParseSet([]string{"vr/*/state", "vr/r9/**"})
	_, err = open(&Config{Files: []string{a, b}, Channels: set}, nil)
	if err == nil || !strings.Contains(err.Error(), `"vr/r9/**" matches no data channel (there are: vr/r1/state, vr/r1/cam)`) {
		t.Fatalf("a --channel matching nothing: %v", err)
	}
	m, _ = keyexpr.ParseRemap("vr/r9/**=x/**")
	_, err = open(&Config{Files: []string{a}, Remaps: []*keyexpr.Remap{m}}, []bool{false})
	if err == nil || !strings.Contains(err.Error(), "matches no replayed channel") {
		t.Fatalf("a --remap matching nothing: %v", err)
	}
}

// Two hosts' logs are refused as merge and analyze refuse them (one rule:
// hostclock.OneReceiveClock), naming both files: their receive clocks are
// not one clock.
func TestFilesOfSeveralHostsRefused(t *testing.T) {
	a, b := twoFiles(t, map[string]string{hostclock.MetaHost: "sim-host", hostclock.MetaRecording: "ra"},
		map[string]string{hostclock.MetaHost: "cam-host", hostclock.MetaRecording: "rb"})
	_, err := open(&Config{Files: []string{a, b}}, nil)
	if !errors.Is(err, ErrInput) || !errors.Is(err, hostclock.ErrSeveralRecorders) || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
		t.Fatalf("two hosts' logs: %v, want ErrInput and hostclock.ErrSeveralRecorders naming both files", err)
	}
}
