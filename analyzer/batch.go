package analyzer

import (
	"runtime"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// The metadata-only analysis reads records in batches, column by
// column (logfmt.Iterator.NextBatch), and books each as add does,
// without a Record per record: analyze's hottest loop.

// eachBatch adds every record of the data channels, metadata only.
func (a *Analysis) eachBatch(r *logfmt.Reader, ids []*channel, dataIDs []uint16) error {
	if len(dataIDs) == 0 {
		return nil
	}
	it := r.Records(logfmt.Filter{Channels: dataIDs, Start: a.readFrom, End: a.readTo, MetaOnly: true, Workers: min(runtime.GOMAXPROCS(0)-1, 4)})
	defer it.Close()
	var b logfmt.MetaBatch
	var rec logfmt.Record
	for it.NextBatch(&b) {
		a.batches++
		for i := range b.Len {
			c := b.Channel[i]
			if int(c) >= len(ids) || ids[c] == nil {
				continue
			}
			ch := ids[c]
			if ch.react != nil { // a response log's: add's whole path
				b.Record(i, &rec)
				a.add(ch, &rec)
				continue
			}
			a.addAt(ch, &b, i)
		}
	}
	return it.Err()
}

// addAt is add (with sampleOf and storedSample) for record i of b, of a
// channel that is not a response log's. With the books inline, the
// sample goes to them on the stack.
func (a *Analysis) addAt(ch *channel, b *logfmt.MetaBatch, i int) {
	ch.rep.Count++
	ch.rep.Bytes += uint64(b.Bytes[i])
	if k := b.PublisherKey(i); k != ch.pubKey || a.batches != ch.pubBatch { // the same id as the record before, or compared
		ch.pubKey, ch.pubBatch = k, a.batches
		if pub := b.PublisherID(i); string(pub) != ch.pub { // compared without allocating
			ch.pub = string(pub)
		}
	}
	wall, mono := b.RecvWallNs[i], b.RecvMonoNs[i]
	var s sampler.Sample
	if ch.raw {
		seq := ch.rep.Count
		if b.Flags[i]&logfmt.MetaPubSN != 0 {
			seq = b.PublisherSN[i]
		}
		s = sampler.Sample{Seq: seq, TNs: wall, RecvMonoNs: mono, Publisher: ch.pub} // no latency without a capture stamp
	} else {
		if b.Flags[i]&logfmt.MetaStamp == 0 {
			ch.rep.Undecodable++
			if ch.badMono == 0 {
				ch.badMono = mono
			}
			return
		}
		s = sampler.Sample{Seq: b.Seq[i], TNs: b.CaptureNs[i], RecvWallNs: wall, RecvMonoNs: mono, Publisher: ch.pub}
		if !ch.timing.Latency { // a capture clock of unknown epoch, or the receive stamp itself
			s.RecvWallNs = 0
		}
		if !a.epState && ch.kind == KindState {
			a.offerEpoch(stateEpoch(s.TNs, ch.rep.Name))
		}
	}
	if a.books.todo == nil {
		a.books.keepSample(ch, s, wall)
		return
	}
	*a.books.next(ch) = s
	a.books.push(wall)
}
