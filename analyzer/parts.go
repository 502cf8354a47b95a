package analyzer

import (
	"cmp"
	"maps"
	"runtime"
	"slices"
	"sync"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// A log's data records are read in parts, by receive time, each part
// with books of its own (on a core of its own when there are several);
// the parts' books are then merged in order, as if one had kept them
// all (sampler.Stream.Merge, sampler.LagSeam). The parts are the log's
// (partsOf), not the machine's: the report is the same on one core as
// on many. Where a seam does not merge (a duplicate or reordered sample
// at it, a frame far behind its states), the rest of the log is read
// again after the part before it, on one core, as if it had not been
// split: the report is still the log's.

// tally is one channel's books over one part of a log.
type tally struct {
	ch          *channel
	base        uint64 // the channel's records before the part (a raw channel's seq counts them)
	count       uint64
	bytes       uint64
	undecodable uint64
	badMono     int64  // receive stamp of the part's first undecodable record (Analysis.whyUndecodable)
	pub         string // last publisher identity, reused while it does not change
	// pubKey and pubBatch place pub in the batch it was last compared in
	// (readBatches): a record of that batch with the same key has it too.
	pubKey, pubBatch uint64
	stream           *sampler.Stream
	lag              *sampler.LagStream   // a frame channel's pairing with its state channel
	lagSer           *lagSeries           // that pairing over time, for plots
	feeds            []*sampler.LagStream // a state channel's: the pairings it feeds
	series           *series
}

// part is the reading of one part of a log: the records received in
// [from, to) (RecvMonoNs; 0 unbounded), into tallies of its own
// (indexed by channel id), or the channels' own for the first part.
type part struct {
	a        *Analysis
	from, to int64
	ids      []*tally
	records  map[*channel]uint64 // the index's count of each channel's records in the part
	batches  uint64              // metadata batches read, for tally.pubBatch
	epoch    int64               // the first state sample's capture stamp, if haveEp
	epochCh  string              // and its channel
	haveEp   bool
}

// Bounds on a log's parts: at least minPartRecords data records each
// (Options.partRecords in tests), at most maxParts.
const (
	minPartRecords = 1 << 17
	maxParts       = 4
)

// mainPart is the part of a log read into the channels' own books,
// from the first records read.
func (a *Analysis) mainPart(ids []*channel, from, to int64) *part {
	p := &part{a: a, from: from, to: to, ids: make([]*tally, len(ids))}
	for id, ch := range ids {
		if ch != nil {
			p.ids[id] = &tally{ch: ch, base: ch.rep.Count, pub: ch.pub, stream: ch.stream, lag: ch.lag, lagSer: ch.lagSer, feeds: ch.feeds, series: ch.series}
		}
	}
	return p
}

// laterPart is a part after the first, with books of its own.
func (a *Analysis) laterPart(ids []*channel, from, to int64, before map[*channel]uint64) *part {
	p := &part{a: a, from: from, to: to, ids: make([]*tally, len(ids))}
	tallies := map[*channel]*tally{}
	for id, ch := range ids {
		if ch == nil {
			continue
		}
		t := &tally{ch: ch, base: ch.rep.Count + before[ch], stream: sampler.NewStream(ch.stream.Config())}
		if ch.series != nil {
			t.series = newSeries(a.opts.PlotBins)
		}
		p.ids[id], tallies[ch] = t, t
	}
	frameOf := map[*sampler.LagStream]*channel{} // a main pairing's frame channel
	for f, t := range tallies {
		if f.lag != nil {
			frameOf[f.lag] = f
			if f.lagSer != nil {
				t.lagSer = newLagSeries(a.opts.PlotBins, &a.span)
			}
			t.lag = sampler.NewLagStream(a.lagConfig(tallies[f.lagOf].stream, t.lagSer, true))
		}
	}
	for s, t := range tallies { // in the order of the channel's own feeds
		for _, l := range s.feeds {
			t.feeds = append(t.feeds, tallies[frameOf[l]].lag)
		}
	}
	return p
}

// partsOf splits r's data records into parts to read apart, by receive
// time at chunk boundaries, in proportion to their records; one part
// (nil) where it does not pay or the books would not merge: a short
// log, one without an index or with a torn tail, --tolerant (chunks
// skipped), a snapshot read from an overlap or a paused recording's
// segments, a response log (the
// reaction is kept in order), a lag pairing with a side in another file,
// with a window of every state or judged by a threshold already
// (repair), or plots without a capture span (their bins start at the
// first sample). Seams are where no chunk overlaps in time. before gives, per part, each channel's
// records in the parts before it.
func (a *Analysis) partsOf(r *logfmt.Reader, ids []*channel) (seams []int64, before []map[*channel]uint64) {
	if a.opts.Tolerant || a.readFrom != 0 || a.readTo != 0 || a.opts.LagWindow < 0 || !r.Indexed() || r.TornTail() != nil ||
		(a.opts.PlotBins > 0 && a.span == [2]int64{}) {
		return nil, nil
	}
	inFile := map[*channel]bool{}
	for _, ch := range ids {
		if ch != nil {
			inFile[ch] = true
		}
	}
	for ch := range inFile {
		if ch.react != nil || (ch.lag != nil && (!inFile[ch.lagOf] || ch.lagFixed)) {
			return nil, nil
		}
		for _, f := range a.order {
			if f.lagOf == ch && !inFile[f] {
				return nil, nil
			}
		}
	}
	data := func(c uint16) *channel {
		if int(c) < len(ids) && ids[c] != nil && ids[c].kind != KindProbe {
			return ids[c]
		}
		return nil
	}
	chunks := slices.Clone(r.Chunks())
	slices.SortStableFunc(chunks, func(x, y logfmt.ChunkInfo) int { return cmp.Compare(x.MinMonoNs, y.MinMonoNs) })
	var total uint64
	for _, c := range chunks {
		for _, cc := range c.Channels {
			if data(cc.Channel) != nil {
				total += uint64(cc.Records)
			}
		}
	}
	minPart := uint64(minPartRecords)
	if a.opts.partRecords > 0 {
		minPart = uint64(a.opts.partRecords)
	}
	n := min(total/minPart, maxParts)
	if n < 2 {
		return nil, nil
	}
	seen, counts := uint64(0), map[*channel]uint64{}
	var maxMono int64
	for i, c := range chunks {
		if i > 0 && c.MinMonoNs > maxMono && seen*n >= total*uint64(len(seams)+1) && c.MinMonoNs > 0 {
			seams, before = append(seams, c.MinMonoNs), append(before, maps.Clone(counts))
			if uint64(len(seams)) == n-1 {
				break
			}
		}
		maxMono = max(maxMono, c.MaxMonoNs)
		for _, cc := range c.Channels {
			if ch := data(cc.Channel); ch != nil {
				seen += uint64(cc.Records)
				counts[ch] += uint64(cc.Records)
			}
		}
	}
	return seams, before
}

// readData reads the data channels of r (ids, by channel id) into the
// channels' books: in parts (partsOf) read side by side and merged, or
// in one.
func (a *Analysis) readData(r *logfmt.Reader, ids []*channel, dataIDs []uint16) error {
	if len(dataIDs) == 0 {
		return nil
	}
	seams, before := a.partsOf(r, ids)
	main := a.mainPart(ids, a.readFrom, a.readTo)
	if len(seams) == 0 {
		main.reserve(r, nil)
		err := a.readPart(r, main, dataIDs, min(runtime.GOMAXPROCS(0)-1, 4))
		a.fold(main)
		return err
	}
	parts := []*part{main}
	for k, seam := range seams {
		parts[k].to = seam
		parts = append(parts, a.laterPart(ids, seam, 0, before[k]))
	}
	for k, p := range parts {
		var next map[*channel]uint64
		if k+1 < len(parts) {
			next = before[k]
		}
		var prev map[*channel]uint64
		if k > 0 {
			prev = before[k-1]
		}
		p.reserve(r, partCounts(ids, r, next, prev))
	}
	// As many parts at once as cores; loaders for the cores to spare.
	cores := runtime.GOMAXPROCS(0)
	workers := min(max(cores/len(parts)-1, 0), 4)
	errs := make([]error, len(parts))
	sem := make(chan struct{}, min(cores, len(parts)))
	var wg sync.WaitGroup
	for k, p := range parts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[k] = a.readPart(r, p, dataIDs, workers)
		})
	}
	wg.Wait()
	for _, err := range errs { // the first in the log's order, as one reading meets it
		if err != nil {
			return err
		}
	}
	for k := 1; k < len(parts); k++ {
		if !a.mergePart(parts[0], parts[k]) {
			// The rest of the log again, after the parts merged.
			a.reread += len(parts) - k
			parts[0].to = 0
			parts[0].from = parts[k].from
			read := r.BytesRead()
			err := a.readPart(r, parts[0], dataIDs, min(cores-1, 4))
			a.readAgain = r.BytesRead() - read // what the parts not merged read
			a.fold(parts[0])
			return err
		}
	}
	a.fold(parts[0])
	return nil
}

// partCounts is each channel's records in a part: those before the next
// seam (all, for the last part) less those before the part's own.
func partCounts(ids []*channel, r *logfmt.Reader, next, prev map[*channel]uint64) map[*channel]uint64 {
	out := map[*channel]uint64{}
	for _, ch := range ids {
		if ch == nil {
			continue
		}
		n := uint64(0)
		if next != nil {
			n = next[ch]
		} else {
			for _, c := range r.Channels() {
				if int(c.ID) < len(ids) && ids[c.ID] == ch {
					n += r.StatsOf(c.ID).Records
				}
			}
		}
		out[ch] = n - prev[ch]
	}
	return out
}

// reserve prepares p's books for its records (counts by channel; nil:
// the file's).
func (p *part) reserve(r *logfmt.Reader, counts map[*channel]uint64) {
	for id, t := range p.ids {
		if t == nil || t.ch.kind == KindProbe {
			continue
		}
		n := r.StatsOf(uint16(id)).Records
		if counts != nil {
			n = counts[t.ch]
		}
		if n := int(min(n, 1<<26)); n > 0 {
			t.stream.Reserve(n)
			if t.lag != nil {
				t.lag.Reserve(n)
			}
		}
	}
}

// readPart reads part p of r's data records (dataIDs), loading chunks
// ahead on workers goroutines.
func (a *Analysis) readPart(r *logfmt.Reader, p *part, dataIDs []uint16, workers int) error {
	it := r.Records(logfmt.Filter{Channels: dataIDs, Start: p.from, End: p.to, MetaOnly: !a.opts.FullDecode, Workers: workers})
	defer it.Close()
	if !a.opts.FullDecode {
		return p.readBatches(it)
	}
	for it.Next() {
		rec := it.Record()
		if int(rec.Channel) < len(p.ids) && p.ids[rec.Channel] != nil {
			p.add(p.ids[rec.Channel], rec)
		}
	}
	return it.Err()
}

// mergePart merges the books of q, the part after p's, into p's, if
// every channel's seam merges; false, with nothing merged, if one does
// not.
func (a *Analysis) mergePart(p, q *part) bool {
	seams := map[*tally]*sampler.LagSeam{}
	for id, t := range p.ids {
		if t == nil {
			continue
		}
		u := q.ids[id]
		if !t.stream.Mergeable(u.stream) {
			return false
		}
		if t.lag != nil {
			sm, ok := t.lag.Seam(u.lag)
			if !ok {
				return false
			}
			seams[t] = sm
		}
	}
	for id, t := range p.ids {
		u := q.ids[id]
		if t == nil {
			continue
		}
		first := u.stream.First()
		ev, _ := t.stream.Merge(u.stream)
		if t.series != nil {
			t.series.merge(u.series, first, ev)
		}
		if sm := seams[t]; sm != nil {
			sm.Join()
			if t.lagSer != nil {
				t.lagSer.merge(u.lagSer)
			}
		}
		t.count += u.count
		t.bytes += u.bytes
		t.undecodable += u.undecodable
		if t.badMono == 0 {
			t.badMono = u.badMono
		}
		if u.count > 0 {
			t.pub = u.pub
		}
	}
	if !p.haveEp && q.haveEp {
		p.epoch, p.epochCh, p.haveEp = q.epoch, q.epochCh, true
	}
	return true
}

// fold adds the first part's counts and epoch, its books merged, to
// the analysis.
func (a *Analysis) fold(p *part) {
	for _, t := range p.ids {
		if t == nil {
			continue
		}
		ch := t.ch
		ch.rep.Count += t.count
		ch.rep.Bytes += t.bytes
		ch.rep.Undecodable += t.undecodable
		if ch.badMono == 0 {
			ch.badMono = t.badMono
		}
		ch.pub = t.pub
	}
	if p.haveEp && !a.epState { // the first state sample: the session epoch (offerEpoch)
		a.offerEpoch(stateEpoch(p.epoch, p.epochCh))
	}
}

// The metadata-only analysis reads records in batches, column by
// (logfmt.Iterator.NextBatch), and books each as add does,
// without a Record per record: analyze's hottest loop.

// readBatches adds every record of the iteration, metadata only.
func (p *part) readBatches(it *logfmt.Iterator) error {
	var b logfmt.MetaBatch
	var rec logfmt.Record
	for it.NextBatch(&b) {
		p.batches++
		for i := range b.Len {
			c := b.Channel(i)
			if int(c) >= len(p.ids) || p.ids[c] == nil {
				continue
			}
			t := p.ids[c]
			if t.ch.react != nil { // a response log's: add's whole path
				b.Record(i, &rec)
				p.add(t, &rec)
				continue
			}
			p.addAt(t, &b, i)
		}
	}
	return it.Err()
}

// add accounts for one data record of t's channel.
func (p *part) add(t *tally, r *logfmt.Record) {
	ch := t.ch
	t.count++
	t.bytes += uint64(r.HeaderLen + r.PayloadLen)
	if ch.react != nil {
		ch.react.add(r)
	}
	var s sampler.Sample
	if !p.a.sampleOf(&s, ch, r, t.base+t.count, &t.pub) {
		t.undecodable++
		return
	}
	if ch.kind == KindState && !p.haveEp {
		p.epoch, p.epochCh, p.haveEp = s.TNs, ch.rep.Name, true
	}
	t.keep(s, r.RecvWallNs, p.a.span)
}

// addAt is add (with sampleOf and storedSample) for record i of b, of a
// channel that is not a response log's.
func (p *part) addAt(t *tally, b *logfmt.MetaBatch, i int) {
	ch := t.ch
	t.count++
	t.bytes += uint64(b.Bytes(i))
	if k := b.PublisherKey(i); k != t.pubKey || p.batches != t.pubBatch { // the same id as the record before, or compared
		t.pubKey, t.pubBatch = k, p.batches
		if pub := b.PublisherID(i); string(pub) != t.pub { // compared without allocating
			t.pub = string(pub)
		}
	}
	wall, mono := b.RecvWallNs(i), b.RecvMonoNs(i)
	var s sampler.Sample
	if ch.raw {
		seq := t.base + t.count
		if b.Flags(i)&logfmt.MetaPubSN != 0 {
			seq = b.PublisherSN(i)
		}
		s = sampler.Sample{Seq: seq, TNs: wall, RecvMonoNs: mono, Publisher: t.pub} // no latency without a capture stamp
	} else {
		if b.Flags(i)&logfmt.MetaStamp == 0 {
			t.undecodable++
			if t.badMono == 0 {
				t.badMono = mono
			}
			return
		}
		s = sampler.Sample{Seq: b.Seq(i), TNs: b.CaptureNs(i), RecvWallNs: wall, RecvMonoNs: mono, Publisher: t.pub}
		if !ch.timing.Latency { // a capture clock of unknown epoch, or the receive stamp itself
			s.RecvWallNs = 0
		}
		if !p.haveEp && ch.kind == KindState {
			p.epoch, p.epochCh, p.haveEp = s.TNs, ch.rep.Name, true
		}
	}
	t.keep(s, wall, p.a.span)
}

// keep books sample s of t's channel, of a record received at recv.
func (t *tally) keep(s sampler.Sample, recv int64, span [2]int64) {
	ev := t.stream.Add(s)
	if t.lag != nil {
		t.lag.Frame(sampler.Stamped{TNs: s.TNs, RecvNs: recv})
	}
	for _, l := range t.feeds {
		l.State(sampler.Stamped{TNs: s.TNs, RecvNs: recv})
	}
	if t.series != nil {
		t.series.add(span, s, ev)
	}
}
