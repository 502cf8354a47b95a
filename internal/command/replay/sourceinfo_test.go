//go:build cgo

package replay

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// rawRec is one record of a raw zenoh channel: who published it, its
// sequence number, and its index in the original log (the payload).
type rawRec struct {
	id  string
	sn  uint64
	idx int
}

// writeRawLog writes 2 s of a raw zenoh channel at 100 Hz whose records
// carry source info with the seq facts a real publisher produces: a gap of
// 3 at 0.5 s, a duplicate at 0.9 s, and a publisher restart at 1.2 s (a new
// publisher id, sequence numbers from 0).
func writeRawLog(t *testing.T, key string) (string, []rawRec) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.vrlog")
	w, err := logfmt.Create(path, logfmt.WriterOptions{ChunkSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := w.AddChannel(logfmt.Channel{Name: key, Transport: logfmt.TransportZenoh, Topic: key,
		Meta: map[string]string{"zenoh.encoding": "application/octet-stream"}})
	first := append(bytes.Repeat([]byte{0xa5}, 16), 3, 0, 0, 0) // 16-byte zenoh id, entity 3
	second := []byte{0x5a, 0x17, 9, 0, 0, 0}                    // 2-byte zenoh id, entity 9
	id, sn := first, uint64(40)
	var recs []rawRec
	const t0, mono0 = int64(1_764_446_400_000_000_000), int64(7_000_000_000_000)
	for i := 0; i < 200; i++ {
		switch i {
		case 50:
			sn += 3
		case 90:
			sn-- // published twice
		case 120:
			id, sn = second, 0
		}
		at := int64(i) * 1e7
		rec := logfmt.Record{Channel: ch, RecvWallNs: t0 + at, RecvMonoNs: mono0 + at, PublisherID: id, PublisherSN: sn, HasPubSN: true,
			Payload: binary.LittleEndian.AppendUint32(nil, uint32(i))}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rawRec{string(id), sn, i})
		sn++
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, recs
}

// rerecord records key with the real recorder (listening on a loopback
// port) while replay publishes path into it with args; it returns the new
// log and the replay's summary.
func rerecord(t *testing.T, path, key string, args ...string) (string, replayResult) {
	t.Helper()
	ep := "tcp/127.0.0.1:" + strconv.Itoa(freePort(t))
	out := filepath.Join(t.TempDir(), "again.vrlog")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := recorder.Run(ctx, recorder.Config{Output: out, ZenohKeys: []string{key}, ProbeInterval: -1,
			Zenoh: zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true}})
		done <- err
	}()
	r := runReplay(t, append([]string{"--json", "--quiet", "--no-multicast-scouting", "--connect", ep, "--delay", "1.5", "--linger", "1s"},
		append(args, path)...)...)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("record: %v", err)
	}
	if r.code != 0 {
		t.Fatalf("replay exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return out, r
}

// readRaw reads the channel's records back as (publisher, sn, index).
func readRaw(t *testing.T, path string) []rawRec {
	t.Helper()
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []rawRec
	var data []uint16 // not the recorder's heartbeats
	for _, c := range r.Channels() {
		if c.Transport != logfmt.TransportInternal {
			data = append(data, c.ID)
		}
	}
	it := r.Records(logfmt.Filter{Channels: data})
	for it.Next() {
		rec := it.Record()
		if !rec.HasPubSN || len(rec.Payload) != 4 {
			t.Fatalf("record without source info or foreign payload: %+v", rec)
		}
		out = append(out, rawRec{string(rec.PublisherID), rec.PublisherSN, int(binary.LittleEndian.Uint32(rec.Payload))})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// seqFacts is what the analysis says of a raw channel's sequence.
func seqFacts(t *testing.T, path, key string) *analyzer.ChannelReport {
	t.Helper()
	rep, err := analyzer.AnalyzeFiles([]string{path}, analyzer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Channel(key)
	if c == nil || c.Kind != analyzer.KindRaw {
		t.Fatalf("no raw channel %s: %+v", key, rep.Channels)
	}
	return c
}

// A raw channel's only seq is the zenoh source info. Replayed over real
// zenoh and recorded again by the real recorder, it shows the original's
// seq facts (its skip, duplicate and restart); with injected drops and an
// injected restart, exactly those are added.
func TestReplayedRawChannelKeepsSeqFacts(t *testing.T) {
	key := fmt.Sprintf("vrtest/%d/%d/diag", os.Getpid(), time.Now().UnixNano())
	orig, recs := writeRawLog(t, key)
	a := seqFacts(t, orig, key)
	if a.Skipped != 3 || a.Duplicates != 1 || a.RestartCount != 1 || !a.Restarts[0].PublisherChange {
		t.Fatalf("the original's facts: %+v", a)
	}

	again, _ := rerecord(t, orig, key)
	if got := readRaw(t, again); !slices.Equal(got, recs) {
		t.Fatalf("re-recorded source info differs from the original:\n got %v\nwant %v", got, recs)
	}
	b := seqFacts(t, again, key)
	if b.Count != a.Count || b.Skipped != a.Skipped || b.SkipEvents != a.SkipEvents || b.Duplicates != a.Duplicates ||
		b.RestartCount != a.RestartCount || b.Reorders != a.Reorders || fmt.Sprint(skipSeqs(b)) != fmt.Sprint(skipSeqs(a)) ||
		b.Restarts[0].LastSeq != a.Restarts[0].LastSeq || b.Restarts[0].Seq != a.Restarts[0].Seq || !b.Restarts[0].PublisherChange {
		t.Fatalf("re-recorded facts differ:\n got %+v\nwant %+v", b, a)
	}

	// Drops, and a restart at 0.8 s: the sn counts from 0 there, until the
	// recorded restart at 1.2 s, after which the records are as recorded.
	faulty, r := rerecord(t, orig, key, "--inject", "drop=0.1", "--inject", "restart=0.8", "--seed", "5")
	got := readRaw(t, faulty)
	sum := r.channel(t, key)
	if uint64(len(got)) != sum.Sent || sum.Sent+sum.Dropped != uint64(len(recs)) || sum.Dropped < 5 {
		t.Fatalf("%d re-recorded, summary %+v", len(got), sum)
	}
	base, based := uint64(0), false
	for i, g := range got {
		o := recs[g.idx]
		if i > 0 && g.idx <= got[i-1].idx {
			t.Fatalf("record %d out of order", g.idx)
		}
		want := o.sn
		if g.idx >= 80 && g.idx < 120 {
			if !based {
				base, based = o.sn, true // the first kept record at or after 0.8 s
			}
			want -= base
		}
		if g.id != o.id || g.sn != want {
			t.Fatalf("record %d: sn %d, want %d", g.idx, g.sn, want)
		}
	}
	// The expected facts, counted from the kept records: each dropped
	// record inside a run is one more skipped sample.
	var skipped uint64
	for i := 1; i < len(got); i++ {
		if p, q := got[i-1], got[i]; p.id == q.id && q.sn > p.sn+1 {
			skipped += q.sn - p.sn - 1
		}
	}
	c := seqFacts(t, faulty, key)
	if c.Skipped != skipped || c.Skipped <= a.Skipped || c.RestartCount != a.RestartCount+1 {
		t.Fatalf("with drop and restart: skipped %d (want %d, original %d), restarts %d (want %d)",
			c.Skipped, skipped, a.Skipped, c.RestartCount, a.RestartCount+1)
	}
	t.Logf("original: %d skipped, %d restart(s); replayed with %d injected drops and a restart: %d skipped, %d restarts",
		a.Skipped, a.RestartCount, sum.Dropped, c.Skipped, c.RestartCount)
}

func skipSeqs(c *analyzer.ChannelReport) [][2]uint64 {
	var out [][2]uint64
	for _, s := range c.Skips {
		out = append(out, [2]uint64{s.LastSeq, s.Seq})
	}
	return out
}
