package recorder

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/livecheck"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder/output"
	"github.com/vrlog/vrlog/sampler"
	"github.com/vrlog/vrlog/schema"
)

// books is the pipeline's accounting stage and the only owner of what is
// known of each channel: its definition and number, the stamps decoded
// from its payloads, the clock offset applied, its counts and rates, the
// recorder's own losses (queue drops, iceoryx2 overflow, what the drain
// cut off) and the live checks. The writer stage calls it for every
// sample and event, on its own goroutine, and writes what the books
// decided (accounted); the books write nothing themselves.
type books struct {
	clockOffset int64
	comp        []compression
	schemas     schema.Set
	subs        *subscriptions
	watch       *livecheck.Watch // Config.Triggers' checks, watched live; nil without
	onNotice    func(string)

	chans        map[string]*channel
	order        []*channel // by number: order[i] is channel i+1
	overflows    []*overflow
	firstChannel time.Time // when the first data channel was defined
	watchSaid    bool      // the triggers that match no channel were said (tick)
	drainDrops   uint64    // records the drain's cut-off dropped
	a            accounted // take's result, reused
}

// channel is the books' view of one recorded channel.
type channel struct {
	def            logfmt.Channel
	codec          codec.Codec
	declared       *schema.Codec // a declared schema's, or zenoh timestamps' (then codec is nil)
	received       uint64        // records so far (a declared seq=count)
	stream         *sampler.Stream
	msgs           uint64
	bytes          uint64
	undecodable    uint64
	drops          uint64
	dropsMark      uint64 // the drop count at its latest zenoh record: dropSpan.lo (lostBefore)
	lastMsgs       uint64
	lastBytes      uint64
	hz, mbps       float64
	unwritten      uint64 // received while the recording was paused or idle (withheld)
	unwrittenBytes uint64
	warning        string // said once: its declaration fits few of its records (undecodable)
}

// drop is n records of a channel (its number) lost by the recorder at
// a receive stamp (0: now).
type drop struct {
	ch uint16
	n  uint64
	at int64
}

// firing is a live check that failed, and the receive stamps of the
// sample that showed it (0: the check's own, livecheck.Fired.RecvMonoNs).
type firing struct {
	f          livecheck.Fired
	mono, wall int64
}

// accounted is what the books made of one sample or event, in the order
// the output takes it.
type accounted struct {
	define  *logfmt.Channel // a new channel, first
	problem *ChannelStatus  // to report (Config.OnProblem)
	before  []drop          // losses that lie before the record
	entry   output.Entry    // the record; without one, Release (if set) hands a dropped sample back
	seen    *logfmt.Record  // the record, written or withheld, for a live view (Config.View); nil when cut off
	after   []drop          // losses that lie after it
	fired   []firing
}

func newBooks(cfg *Config, comp []compression, subs *subscriptions) *books {
	b := &books{clockOffset: cfg.ClockOffset.Nanoseconds(), comp: comp, schemas: cfg.Schemas, subs: subs, chans: map[string]*channel{}, onNotice: cfg.OnNotice}
	if len(cfg.Triggers) > 0 {
		b.watch = livecheck.NewWatch(cfg.Triggers, 0)
	}
	return b
}

// reset clears the reused result.
func (b *books) reset() *accounted {
	a := &b.a
	clear(a.before)
	clear(a.after)
	clear(a.fired)
	*a = accounted{before: a.before[:0], after: a.after[:0], fired: a.fired[:0]}
	return a
}

// fate is what becomes of a sample.
type fate uint8

const (
	written  fate = iota // it goes to the output
	withheld             // received while the recording is paused or idle: counted, not written
	cutOff               // the drain was cut off: a recorder drop
)

// take accounts for one sample: its channel, its stamps, the losses
// around it, the live checks. A sample withheld or cut off keeps its
// channel's books (its seq closes a gap) but is not to be written; one
// cut off is a recorder drop.
func (b *books) take(s *sample, how fate) *accounted {
	a := b.reset()
	ch := b.channelOf(a, s)
	b.onOurClock(s)
	ov, open := b.stamp(a, ch, s, how != cutOff)
	switch how {
	case withheld:
		ch.unwritten++
		ch.unwrittenBytes += uint64(len(s.rec.Header) + len(s.rec.Payload))
		a.seen = &s.rec
	case cutOff:
		a.before = append(a.before, drop{ch.def.ID, 1, s.rec.RecvMonoNs})
		ch.drops++
		b.drainDrops++
	case written:
		if b.watch != nil {
			b.watchRecord(a, ch, s, ov, open)
		}
		b.count(ch, s)
		a.entry = output.Entry{Record: &s.rec, Undecided: b.undecided()}
		a.seen = &s.rec
	}
	a.entry.Release = s.release // the output's once written, else handed back by the writer
	b.queueDrops(a, s, s.rec.RecvMonoNs)
	return a
}

// channelOf is s's channel, defined at its first sample; s's record
// takes its number.
func (b *books) channelOf(a *accounted, s *sample) *channel {
	ch := b.chans[s.name]
	if ch == nil {
		ch = b.define(a, s)
	}
	s.rec.Channel = ch.def.ID
	return ch
}

// onOurClock shifts s's wall stamp by the clock offset a test gives
// (Config.ClockOffset); the probes were shifted as they were taken.
func (b *books) onOurClock(s *sample) {
	if s.transport != logfmt.TransportInternal {
		s.rec.RecvWallNs += b.clockOffset
	}
}

// stamp decodes s's seq and capture stamp where its channel's codec can,
// counts them in the channel's timing (unless the sample is not kept:
// cut off), and books the overflow they reveal; it returns the channel's
// overflow and the sample's gap, if undecided.
func (b *books) stamp(a *accounted, ch *channel, s *sample, keep bool) (*overflow, *gap) {
	if ch.declared == nil && (ch.codec == nil || ch.def.Transport == logfmt.TransportInternal) { // the recorder's own: probes, pauses
		return nil, nil
	}
	rec := &s.rec
	seq, t, err := ch.stampOf(s)
	if err != nil {
		if keep {
			ch.undecodable++
			b.undecodable(a, ch, err)
		}
		return nil, nil
	}
	rec.Seq, rec.CaptureNs, rec.HasStamp = seq, t, true
	if keep {
		ch.stream.Add(sampler.Sample{Seq: seq, TNs: t, RecvWallNs: rec.RecvWallNs, RecvMonoNs: rec.RecvMonoNs, Publisher: string(rec.PublisherID)})
	}
	if s.sub == nil || s.sub.overflow == nil {
		return nil, nil
	}
	return b.bookOverflow(a, s, ch, seq) // a dropped frame's seq still closes the gap before it
}

// undecodableSaid is how many records of a declared channel must have
// failed its declaration, more than half of those received, before the
// recorder says so: a declaration that fits none of the payloads (a C
// struct of the wrong size) shows within its first records.
const undecodableSaid = 10

// undecodable says once, as a problem of the channel (Config.OnProblem)
// and in its status, that most records of a declared channel do not fit
// its declaration, with the reason of this one.
func (b *books) undecodable(a *accounted, ch *channel, err error) {
	if _, declared := ch.def.Meta[schema.MetaEncoding]; !declared || ch.warning != "" ||
		ch.undecodable < undecodableSaid || 2*ch.undecodable <= ch.received {
		return
	}
	ch.warning = fmt.Sprintf("%d of its first %d records do not fit its declared schema %s: they are written, but have no stamp or seq (%v)",
		ch.undecodable, ch.received, ch.def.Schema, err)
	a.problem = &ChannelStatus{Name: ch.def.Name, Transport: ch.def.Transport.String(), Schema: ch.def.Schema, Warning: ch.warning}
}

// count books a written record in its channel's figures.
func (b *books) count(ch *channel, s *sample) {
	ch.msgs++
	ch.bytes += uint64(len(s.rec.Header) + len(s.rec.Payload))
	if s.sub != nil {
		s.sub.last = s.name
	}
}

// define numbers a new channel from its first sample.
func (b *books) define(a *accounted, s *sample) *channel {
	ch := &channel{def: logfmt.Channel{Name: s.name, Transport: s.transport, Topic: s.topic, Schema: detectSchema(s),
		Compression: b.compression(s.name, s.topic, s.transport), Meta: s.meta}, stream: sampler.NewStream(sampler.Config{})}
	b.declare(ch, s)
	b.add(ch)
	a.define = &ch.def
	if b.watch != nil {
		b.watch.Add(&ch.def)
	}
	if b.firstChannel.IsZero() && s.transport != logfmt.TransportInternal {
		b.firstChannel = time.Now()
	}
	if w := s.meta[logfmt.MetaWarning]; w != "" {
		a.problem = &ChannelStatus{Name: s.name, Transport: s.transport.String(), Schema: ch.def.Schema, Warning: w}
	}
	return ch
}

// declare gives a new channel its declared schema (Config.Schemas: the
// message name, and the declaration in its meta), or, for an undeclared
// zenoh channel vrlog cannot decode whose first sample carries a zenoh
// timestamp or an rmw_zenoh attachment, the transport's stamps
// (schema.TransportMeta); a declaration leaves to the first sample what
// it did not name (schema.Decl.Resolve).
func (b *books) declare(ch *channel, s *sample) {
	var meta map[string]string
	if _, _, err := schema.FromChannel(&ch.def); err == nil && ch.def.Meta[schema.MetaStamp] != "" {
		// a fed channel that carries its declaration (replay --capture of a
		// declared channel): stamped as it says
		ch.declared, _, _ = schema.ForChannel(&ch.def)
		return
	}
	if d := b.schemas.Find(s.name, s.topic); d != nil {
		d = d.Resolve(&s.rec, s.hasZenohTs)
		ch.def.Schema, meta = d.Name, d.Meta()
	} else if ch.def.Schema == "" && s.transport == logfmt.TransportZenoh {
		meta = schema.TransportMeta(&s.rec, s.hasZenohTs)
	}
	if meta == nil {
		ch.codec, _ = codec.Lookup(ch.def.Schema)
		return
	}
	for k, v := range s.meta { // s.meta is shared by the subscription's samples
		meta[k] = v
	}
	ch.def.Meta = meta
	ch.declared, _, _ = schema.ForChannel(&ch.def) // compiled when parsed: it compiles
}

// stampOf reads the seq and capture stamp of s's record: a built-in
// codec's, or what the channel's declaration names.
func (ch *channel) stampOf(s *sample) (uint64, int64, error) {
	if ch.declared == nil {
		return ch.codec.Stamp(s.rec.Header, s.rec.Payload)
	}
	ch.received++
	rec := s.rec
	a := schema.Arrival{ZenohNs: s.zenohNs, HasZenohTs: s.hasZenohTs, Count: ch.received}
	if !a.HasZenohTs && rec.HasStamp { // a fed record (Config.Feed) keeps the transport stamp it was recorded with
		a.ZenohNs, a.HasZenohTs = rec.CaptureNs, true
	}
	err := ch.declared.StampRecord(&rec, a)
	return rec.Seq, rec.CaptureNs, err
}

// add numbers ch: the next number, from 1, which is also its id in every
// output's file (they define channels in this order).
func (b *books) add(ch *channel) {
	b.chans[ch.def.Name] = ch
	b.order = append(b.order, ch)
	ch.def.ID = uint16(len(b.order))
}

// fail accounts for a channel that could not be opened (a channel error
// in the log), or reports a transient failure with only a warning.
func (b *books) fail(f *failure) *accounted {
	a := b.reset()
	if _, dup := b.chans[f.name]; dup {
		return a
	}
	cs := ChannelStatus{Name: f.name, Transport: f.transport.String(), Schema: f.schema,
		Error: f.meta[logfmt.MetaError], Warning: f.meta[logfmt.MetaWarning]}
	if cs.Error != "" {
		ch := &channel{def: logfmt.Channel{Name: f.name, Transport: f.transport, Topic: f.topic, Schema: f.schema,
			Compression: b.compression(f.name, f.topic, f.transport), Meta: f.meta}, stream: sampler.NewStream(sampler.Config{})}
		b.add(ch)
		a.define = &ch.def
	}
	a.problem = &cs
	return a
}

// compression picks a channel's compression: the last match wins, else
// the transport's default (Config.Compression).
func (b *books) compression(name, topic string, t logfmt.Transport) logfmt.Compression {
	c := logfmt.Compression{Kind: logfmt.CompressionLZ4}
	if t == logfmt.TransportIceoryx2 {
		c = logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}
	}
	for _, cc := range b.comp {
		if cc.every || cc.pat.Match(name) || cc.pat.Match(topic) {
			c = cc.c
		}
	}
	return c
}

// detectSchema names the codec of a new channel from its first sample.
func detectSchema(s *sample) string {
	if s.schema != "" {
		return s.schema
	}
	return codec.DetectSchema(s.rec.Header, s.rec.Payload)
}

// queueDrops books the drops of s's subscription's native queue counted
// by the end of the batch it ended (sample.dropsAfter), right after its
// record (received at atMono): the queue drops what arrives while it is
// full, after the samples it holds, so that is where the loss lies in
// time and in the log, and a snapshot counts it in the window its seq gap
// is in. Booked when the counter is read instead, the loss would land
// before the records still queued (seconds of them when the disk falls
// behind), in an earlier window.
func (b *books) queueDrops(a *accounted, s *sample, atMono int64) {
	si := s.sub
	if si == nil || s.dropsAfter <= si.seen {
		return
	}
	if ch := b.chans[s.name]; ch != nil {
		a.after = append(a.after, drop{ch.def.ID, s.dropsAfter - si.seen, atMono})
		ch.drops += s.dropsAfter - si.seen
		si.seen = s.dropsAfter
	}
}

// lostBefore is how many samples of ch the recorder may have lost since
// ch's previous record, so that the live checks do not take its loss for
// the publisher's skip or outage (livecheck.Watch.Record): for iceoryx2,
// what the subscriber dropped right before the sample, or all of a gap
// across a hold (safe overflow replaced it: see overflow); for zenoh, what
// the subscription dropped meanwhile, on any of its channels (it counts
// them together), so at most that many.
func lostBefore(s *sample, ch *channel) uint64 {
	switch {
	case s.sub == nil:
		return 0
	case s.afterHold:
		return ^uint64(0)
	case s.transport == logfmt.TransportIceoryx2:
		return uint64(s.droppedBefore)
	}
	lost := s.drops.hi - min(s.drops.hi, ch.dropsMark)
	ch.dropsMark = s.drops.lo
	return lost
}

// watchRecord runs the live checks on s's record: a gap the overflow
// left undecided (open) is held on it until its drain ends, and the gaps
// the overflow decided as the publisher's are judged now.
func (b *books) watchRecord(a *accounted, ch *channel, s *sample, ov *overflow, open *gap) {
	var fired []livecheck.Fired
	if open != nil {
		fired, open.held = b.watch.RecordUndecided(&ch.def, &s.rec, lostBefore(s, ch))
	} else {
		fired = b.watch.Record(&ch.def, &s.rec, lostBefore(s, ch))
	}
	if ov != nil {
		fired = append(fired, b.releaseGaps(ov)...)
	}
	for _, f := range fired {
		a.fired = append(a.fired, firing{f, s.rec.RecvMonoNs, s.rec.RecvWallNs})
	}
}

// releaseGaps judges the held checks of the gaps o decided as the
// publisher's.
func (b *books) releaseGaps(o *overflow) []livecheck.Fired {
	var fired []livecheck.Fired
	for _, h := range o.takeReleased() {
		if b.watch != nil {
			fired = append(fired, b.watch.Release(h)...)
		}
	}
	return fired
}

// bookOverflow counts the samples iceoryx2 may have overwritten in the
// subscriber's buffer before s (see overflow) as the channel's drops; it
// returns the channel's overflow and the sample's gap, if undecided.
func (b *books) bookOverflow(a *accounted, s *sample, ch *channel, seq uint64) (*overflow, *gap) {
	o := s.sub.overflow[s.name]
	if o == nil {
		o = newOverflow(s.sub.buffer)
		s.sub.overflow[s.name] = o
		b.overflows = append(b.overflows, o)
	}
	n, open := o.add(string(s.rec.PublisherID), seq, s.drain, s.drainIndex, s.droppedBefore, s.prevDrainLen, s.afterHold, s.rec.RecvMonoNs)
	if n > 0 {
		a.before = append(a.before, drop{ch.def.ID, n, o.takeLostAt()}) // at the sample after the gap, not at the one that decided it
		ch.drops += n
	}
	return o, open
}

// undecided is the receive stamp of the earliest iceoryx2 seq gap not
// yet decided as the recorder's loss or the publisher's skip (see
// overflow: a drain later), 0 if none (output.Entry.Undecided).
func (b *books) undecided() int64 {
	var at int64
	for _, o := range b.overflows {
		if u := o.undecided(); u > 0 && (at == 0 || u < at) {
			at = u
		}
	}
	return at
}

// end accounts for a subscription's stream ending: the overflow of its
// drains still open (drains: its publishers' last drains, or nil).
func (b *books) end(si *subInfo, drains map[string]drainEnd) *accounted {
	a := b.reset()
	b.endOverflow(a, si, drains)
	return a
}

func (b *books) endOverflow(a *accounted, si *subInfo, drains map[string]drainEnd) {
	final := func(pub string) (uint64, uint32) { e := drains[pub]; return e.drain, e.n }
	for name, o := range si.overflow {
		if n := o.end(final); n > 0 {
			if ch := b.chans[name]; ch != nil {
				a.after = append(a.after, drop{ch.def.ID, n, o.takeLostAt()})
				ch.drops += n
			}
		}
		for _, f := range b.releaseGaps(o) {
			a.fired = append(a.fired, firing{f: f}) // stamped at their records
		}
	}
}

// close accounts, once every stream is over, for what the subscribers'
// drop counters counted after their last batches (queueDrops) and the
// overflow the streams' ends did not decide.
func (b *books) close() *accounted {
	a := b.reset()
	subs := b.subs.all()
	for _, si := range subs {
		d := si.dropped()
		if d <= si.seen {
			continue
		}
		if ch := b.chans[si.last]; ch != nil {
			a.after = append(a.after, drop{ch.def.ID, d - si.seen, 0})
			ch.drops += d - si.seen
			si.seen = d
		}
	}
	for _, si := range subs {
		b.endOverflow(a, si, nil)
	}
	return a
}

// unwatchedAfter is how long after its first channel a recording's
// channels are taken as known: zenoh keys and iceoryx2 services found in
// the first moments (the service poll, the first samples).
const unwatchedAfter = 2 * time.Second

// tick is the books' share of the writer's tick: the per-second rates,
// streams that stopped fire max-outage (Watch.Silent), and once the
// channels are known the triggers that match none are said (OnNotice),
// at once rather than when the recording ends.
func (b *books) tick() []firing {
	for _, ch := range b.order {
		msgs, bytes := ch.msgs+ch.unwritten, ch.bytes+ch.unwrittenBytes // received, also while paused or idle
		ch.hz, ch.mbps = float64(msgs-ch.lastMsgs), float64(bytes-ch.lastBytes)/1e6
		ch.lastMsgs, ch.lastBytes = msgs, bytes
	}
	if b.watch == nil {
		return nil
	}
	var fired []firing
	for _, f := range b.watch.Silent() {
		fired = append(fired, firing{f: f})
	}
	if !b.watchSaid && !b.firstChannel.IsZero() && time.Since(b.firstChannel) >= unwatchedAfter {
		b.watchSaid = true
		if b.onNotice != nil {
			for _, u := range b.watch.Unwatched() {
				b.onNotice(u + " (so far: the recording ends with exit 1 unless one appears)")
			}
		}
	}
	return fired
}

// deadline is when the first silence of a stream would cross its live
// max-outage line (monotonic), if no sample of it comes before; ok is
// false when none can.
func (b *books) deadline() (mono int64, ok bool) {
	if b.watch == nil {
		return 0, false
	}
	return b.watch.Deadline()
}

// silentAt judges the streams' silences at now (the lanes are empty:
// every record received until then was taken): a silence fires max-outage
// as soon as it crosses its line, while the stream is still silent.
func (b *books) silentAt(mono, wall int64) []firing {
	if b.watch == nil {
		return nil
	}
	b.watch.Tick(mono, wall+b.clockOffset)
	var fired []firing
	for _, f := range b.watch.Silent() {
		fired = append(fired, firing{f: f})
	}
	return fired
}

// channels is every channel's figures (the heartbeat aside: the
// recording's own marks, not a channel it captured).
func (b *books) channels() []ChannelStatus {
	out := make([]ChannelStatus, 0, len(b.order))
	for _, ch := range b.order {
		if ch.def.Name == HeartbeatChannel {
			continue
		}
		sum := ch.stream.Summary()
		out = append(out, ChannelStatus{Name: ch.def.Name, Transport: ch.def.Transport.String(), Schema: ch.def.Schema,
			Msgs: ch.msgs, Bytes: ch.bytes, Hz: ch.hz, MBps: ch.mbps, Skipped: sum.Skipped, Restarts: sum.RestartCount,
			Undecodable: ch.undecodable, Drops: ch.drops, Unwritten: ch.unwritten, Error: ch.def.Meta[logfmt.MetaError],
			Warning: strings.Join(slices.DeleteFunc([]string{ch.def.Meta[logfmt.MetaWarning], ch.warning}, func(w string) bool { return w == "" }), "; ")})
	}
	return out
}
