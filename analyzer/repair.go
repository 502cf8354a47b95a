package analyzer

import (
	"runtime"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// A frame's pairing across an outage of its state stream is judged by
// the outage threshold of the whole state stream (sampler.LagConfig.
// Deferred): pairings well below the threshold guessed so far are
// counted as lag as they are made, the others held to be judged at the
// end. Where the guess was not good enough (the threshold fell below a
// lag counted already, or too many pairings were held), the pairing is
// made again, on the files read so far, with the threshold known.

// judgeable checks, after each file, that every pairing can be judged
// by its state stream's outage threshold as it stands (the report's,
// when no file follows), and pairs again those that cannot (repair).
func (a *Analysis) judgeable() error {
	for _, f := range a.order {
		if f.lag == nil {
			continue
		}
		if t := a.outageOf(f.lagOf); !f.lag.Valid(t) {
			if err := a.repair(f, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// repair pairs frame channel f with its state channel again, over the
// files read since the pairing began, judging outages by threshold t
// as it pairs; a later file that moves the threshold past a judgement
// has it paired again.
func (a *Analysis) repair(f *channel, t int64) error {
	s := f.lagOf
	if f.lagSer != nil {
		f.lagSer = newLagSeries(a.opts.PlotBins, &a.span)
	}
	cfg := a.lagConfig(s.stream, f.lagSer, false)
	cfg.Deferred, cfg.OutageNs = false, func() int64 { return t }
	l := sampler.NewLagStream(cfg)
	for _, fr := range a.files[f.lagFrom:] {
		if err := a.repairFile(fr, f, l); err != nil {
			return inFile(fr.Path, err)
		}
	}
	for i, x := range s.feeds {
		if x == f.lag {
			s.feeds[i] = l
		}
	}
	f.lag, f.lagFixed = l, true
	return nil
}

// repairFile pairs the records of frame channel f and its state
// channel in the file of fr into l, as AddFile read them.
func (a *Analysis) repairFile(fr FileReport, f *channel, l *sampler.LagStream) error {
	r, err := logfmt.Open(fr.Path, logfmt.ReaderOptions{Tolerant: a.opts.Tolerant})
	if err != nil {
		return err
	}
	defer r.Close()
	if fr.apart {
		l.Break()
	}
	var ids []uint16
	chOf := map[uint16]*channel{}
	for _, c := range r.Channels() {
		if ch := a.byStream[logfmt.StreamOf(c)]; ch != nil && (ch == f || ch == f.lagOf) && !isHeartbeat(c) && !isOutcome(c) {
			ids, chOf[c.ID] = append(ids, c.ID), ch
		}
	}
	if len(ids) == 0 {
		return nil
	}
	// In the segments AddFile read, between the recording's pauses.
	from := fr.readFrom
	bounds := boundsOf(fr.pauses)
	for i := 0; i <= len(bounds); i++ {
		to := int64(0)
		if i < len(bounds) {
			to = bounds[i].at
		}
		if i > 0 {
			if b := bounds[i-1]; b.p.pairedAcross(f) || (b.end && b.p.pauses(f)) {
				l.Break()
			}
		}
		if err := a.repairSegment(r, ids, chOf, f, l, from, to); err != nil {
			return err
		}
		from = to
	}
	return nil
}

// repairSegment pairs the records of ids received in [from, to) into l
// (f's are frames, the others states).
func (a *Analysis) repairSegment(r *logfmt.Reader, ids []uint16, chOf map[uint16]*channel, f *channel, l *sampler.LagStream, from, to int64) error {
	it := r.Records(logfmt.Filter{Channels: ids, Start: from, End: to, MetaOnly: !a.opts.FullDecode, Workers: min(runtime.GOMAXPROCS(0)-1, 4)})
	defer it.Close()
	var pub string
	var s sampler.Sample
	for it.Next() {
		rec := it.Record()
		ch := chOf[rec.Channel]
		if !a.sampleOf(&s, ch, rec, 0, &pub) {
			continue
		}
		if ch == f {
			l.Frame(sampler.Stamped{TNs: s.TNs, RecvNs: rec.RecvWallNs})
		} else {
			l.State(sampler.Stamped{TNs: s.TNs, RecvNs: rec.RecvWallNs})
		}
	}
	return it.Err()
}
