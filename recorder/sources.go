package recorder

import (
	"context"
	"sync"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/clock"
)

// sources are the pipeline's first stage: a goroutine per subscription
// (zenoh.go, iceoryx.go), the clock probes (probe.go), the heartbeat and
// a feed receive records and hand them to the lanes as samples, and the
// events of their channels (a failure, a stream's end) as batches of
// their own. They never look downstream: what becomes of a sample is the
// books' and the writer's.
type sources struct {
	cfg        *Config
	lanes      *lanes
	subs       *subscriptions
	discovered sync.Map // iceoryx2 services already subscribed
	wg         sync.WaitGroup
}

// subscriptions are every subscription's drop counters, which the books
// read once the streams are over (books.bookDrops).
type subscriptions struct {
	mu  sync.Mutex
	set map[*subInfo]bool
}

func (s *subscriptions) add(si *subInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		s.set = map[*subInfo]bool{}
	}
	s.set[si] = true
}

// all lists the subscriptions (receivers may still add to them).
func (s *subscriptions) all() []*subInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*subInfo, 0, len(s.set))
	for si := range s.set {
		out = append(out, si)
	}
	return out
}

// send hands a batch to the writer; false when the recording is over.
func (src *sources) send(ctx context.Context, b batch) bool { return src.lanes.send(ctx, b) }

// drainWait is how long, once the recording is over, a subscription waits
// for more of what it had received by then.
const drainWait = 20 * time.Millisecond

// holdWait bounds how long, once the recording is over, a held
// subscription waits for the samples it left in the service's buffer.
const holdWait = 5 * time.Second

// endHold is what a subscription that holds samples in its service's
// buffer (iceoryx2.Subscriber.SetHold) tells pump for the end of the
// recording: whether samples wait there now, and how many the buffer holds.
type endHold struct {
	holding func() bool
	buffer  int
}

// pump hands the batches next receives to the writer until ctx ends, then
// what the subscription had received before the end (stamped before it),
// so that stopping a recording loses nothing it took from a transport;
// samples stamped after the end are handed back unrecorded, except, on a
// held subscription, the buffer's worth that waited in the service's
// buffer (published before the end, held there because the recorder was
// behind: written, so that every sample published before the end is in
// the log or counted as a drop). next reports false when its subscriber
// has nothing more (ctx ended, closed). Sends block: the writer takes
// batches until every receiver is done, also after a failure (it then
// hands their memory back).
func (src *sources) pump(ctx context.Context, next func(context.Context) ([]sample, bool), hold *endHold) {
	for {
		got, ok := next(ctx)
		if !ok {
			break
		}
		if len(got) > 0 {
			src.lanes.put(batch{samples: got})
		}
	}
	end := clock.MonoNow()
	lateMax, deadline := 0, time.Now().Add(holdWait)
	if hold != nil {
		lateMax = hold.buffer
	}
	late := 0
	for {
		dctx, cancel := context.WithTimeout(context.Background(), drainWait)
		got, ok := next(dctx)
		cancel()
		if !ok {
			if hold != nil && late < lateMax && hold.holding() && time.Now().Before(deadline) {
				continue // the writer is freeing slots: the held samples come next
			}
			return
		}
		keep, over := got[:0], false
		for _, s := range got {
			switch {
			case s.rec.RecvMonoNs <= end:
				keep = append(keep, s)
			case late < lateMax:
				late++
				keep = append(keep, s)
			default:
				over = true
				if s.release != nil {
					s.release()
				}
			}
		}
		if len(keep) > 0 {
			src.lanes.put(batch{samples: keep})
		}
		if over || (late > 0 && late >= lateMax) {
			return
		}
	}
}

// HeartbeatChannel is the internal channel on which the recorder marks,
// every FlushInterval and once more when it stops receiving, that it was
// recording: the span of the recording itself, which the data channels'
// own first and last samples cannot tell. A stream that dies before the
// recording ends thus leaves a silence up to the last heartbeat, and
// analyze reports it as an outage (docs/log-format.md §5). A kill -9
// loses at most the heartbeats of the unsealed last FlushInterval.
const HeartbeatChannel = "vrlog/recorder"

// heartbeat sends an empty record on HeartbeatChannel every interval and
// when ctx ends (not at the start: the channels a recording finds first
// keep the first ids). The last one waits for the writer, which drains its
// input until every sender is done.
func (src *sources) heartbeat(ctx context.Context, every time.Duration) {
	beat := func() batch {
		return batch{samples: []sample{{name: HeartbeatChannel, topic: HeartbeatChannel, transport: logfmt.TransportInternal, schema: codec.SchemaHeartbeat,
			rec: logfmt.Record{RecvWallNs: clock.WallNow() + src.cfg.ClockOffset.Nanoseconds(), RecvMonoNs: clock.MonoNow()}}}}
	}
	if every <= 0 { // a log writer without timed flushes
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if src.send(ctx, beat()) {
				continue
			}
		case <-ctx.Done():
		}
		src.lanes.put(beat()) // the stop
		return
	}
}

// Feed hands the recorder records it did not receive itself, written like
// received ones with the stamps they carry: replay --capture writes the
// records it released to the controller into the response log this way,
// so stimulus and response share one log and one clock. A Feed runs on
// its own goroutine until it returns; add reports false once the
// recording is over.
type Feed func(ctx context.Context, add func(Fed) bool)

// Fed is one fed record and the channel it belongs to (created on its
// first record, like a received channel).
type Fed struct {
	Name, Topic string
	Transport   logfmt.Transport
	Schema      string
	Meta        map[string]string
	Record      logfmt.Record
}

// feed runs the feed, if any.
func (src *sources) feed(ctx context.Context) {
	f := src.cfg.Feed
	if f == nil {
		return
	}
	src.wg.Add(1)
	go func() {
		defer src.wg.Done()
		f(ctx, func(x Fed) bool {
			return src.send(ctx, batch{samples: []sample{{name: x.Name, transport: x.Transport, topic: x.Topic, schema: x.Schema, meta: x.Meta, rec: x.Record}}})
		})
	}()
}

func matchAny(ps []keyexpr.Pattern, s string) bool {
	for _, p := range ps {
		if p.Match(s) {
			return true
		}
	}
	return false
}
