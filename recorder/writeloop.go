package recorder

import (
	"context"
	"strings"
	"time"

	"github.com/vrlog/vrlog/logfmt"
)

// writeState is the writer goroutine's own: the small records waiting
// while it works through bulk ones (lanes), where the last record written
// lies in time, and the drain's cut-off.
type writeState struct {
	pending    []item         // small records waiting, in arrival order
	since      time.Time      // when the first of them arrived
	names      map[string]int // pending records per channel
	wrote      bool           // lastMono and lastBulk are set
	lastMono   int64
	lastBulk   bool
	failed     error // the first write error: the rest is handed back
	cut        bool  // the drain was cut off: the rest is dropped and counted
	drainDrops uint64
}

// write is the single owner of the log: it takes the receivers' batches
// from both lanes (small records first, see lanes), numbers channels,
// decodes stamps, keeps the bookkeeping and hands records to the sink.
// Once the recording is over it writes what the receivers had received,
// for at most DrainTimeout (cutOff).
func (r *rec) write(ctx context.Context, cancel context.CancelFunc) error {
	if r.start.IsZero() {
		r.start = time.Now()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var manual <-chan logfmt.SnapshotTrigger
	if r.cfg.Snapshot != nil {
		manual = r.cfg.Snapshot.Manual
	}
	w := &r.w
	w.names = map[string]int{}
	small, bulk := r.lanes.small, r.lanes.bulk
	for small != nil || bulk != nil {
		if len(w.pending) > 0 && len(bulk) == 0 {
			r.writeSmall(cancel) // no backlog: small records go at once
		}
		select {
		case t := <-manual:
			r.snap.trigger(trigger{SnapshotTrigger: t, slug: slug(strings.ToLower(t.Cause))})
		case t := <-r.trig:
			r.snap.trigger(t)
		case batch, ok := <-small:
			if !ok {
				small = nil
				continue
			}
			r.queueSmall(batch)
		case batch, ok := <-bulk:
			if !ok {
				bulk = nil
				continue
			}
			for i := range batch {
				r.waitRoom(small, cancel)
				r.takeSmall(small)
				if len(w.pending) > 0 && (w.names[batch[i].name] > 0 || time.Since(w.since) >= r.lanes.wait) {
					r.writeSmall(cancel) // the channel's earlier records, or states that waited long enough
				}
				r.put(cancel, &batch[i], true)
			}
		case <-tick.C:
			r.watchTick()
			if err := r.out.tick(); err != nil && w.failed == nil {
				w.failed = err
				cancel()
			}
			r.status()
		}
	}
	r.writeSmall(cancel)
	r.bookDrops()
	r.mu.Lock()
	for s := range r.subs {
		r.endOverflow(s, nil) // what the streams' ends did not decide
	}
	r.mu.Unlock()
	return w.failed
}

// queueSmall adds a batch of the small lane to the records waiting.
func (r *rec) queueSmall(batch []item) {
	w := &r.w
	if len(w.pending) == 0 {
		w.since = time.Now()
	}
	for i := range batch {
		w.names[batch[i].name]++
	}
	w.pending = append(w.pending, batch...)
}

// takeSmall queues what waits in the small lane now, without blocking.
func (r *rec) takeSmall(small <-chan []item) {
	for {
		select {
		case batch, ok := <-small:
			if !ok {
				return
			}
			r.queueSmall(batch)
		default:
			return
		}
	}
}

// waitRoom waits while a bulk record would wait inside the log writer for
// earlier chunks' compression (seconds, at a slow zstd level), writing the
// small records that arrive meanwhile and sealing them ahead: they never
// wait for the frames.
func (r *rec) waitRoom(small <-chan []item, cancel context.CancelFunc) {
	w := &r.w
	for w.failed == nil && !r.cutOff() && r.out.busy() {
		select {
		case batch, ok := <-small:
			if ok {
				r.queueSmall(batch)
			}
		case <-time.After(time.Millisecond):
		}
		if len(w.pending) > 0 && time.Since(w.since) >= r.lanes.wait {
			r.writeSmall(cancel)
			if err := r.out.seal(true); err != nil && w.failed == nil {
				w.failed = err
				cancel()
			}
		}
	}
}

// writeSmall writes the small records waiting.
func (r *rec) writeSmall(cancel context.CancelFunc) {
	w := &r.w
	for i := range w.pending {
		r.put(cancel, &w.pending[i], false)
	}
	clear(w.pending) // their payloads are not kept alive by the slice
	w.pending = w.pending[:0]
	clear(w.names)
}

// put writes one item of the bulk or the small lane: sealing the open
// chunk first where the lanes switch while bulk records wait or with a
// jump in time (lanes), or,
// after the drain was cut off, counting it as a drop; after a write
// failure it only hands the item's memory back, so receivers can stop.
func (r *rec) put(cancel context.CancelFunc, it *item, bulk bool) {
	w := &r.w
	if w.failed != nil {
		if it.release != nil {
			it.release()
		}
		return
	}
	keep := !r.cutOff()
	if keep && !it.failed && it.drainEnds == nil {
		behind := len(r.lanes.bulk) > 0
		if w.wrote && bulk != w.lastBulk && (behind || time.Duration(abs(it.rec.RecvMonoNs-w.lastMono)) > sealJump) {
			if err := r.out.seal(!w.lastBulk); err != nil { // small records sealed ahead of the frames' chunks
				w.failed = err
				cancel()
				if it.release != nil {
					it.release()
				}
				return
			}
		}
		w.wrote, w.lastBulk, w.lastMono = true, bulk, it.rec.RecvMonoNs
	}
	if err := r.writeOne(it, keep); err != nil {
		w.failed = err
		cancel()
	}
}

// cutOff reports whether the drain is over: the recording ended more than
// DrainTimeout ago (never with a negative DrainTimeout). From then on,
// what the receivers hand over is dropped and counted, so that the
// recorder stops in bounded time and its accounting stays exact.
func (r *rec) cutOff() bool {
	if r.w.cut || r.cfg.DrainTimeout < 0 {
		return r.w.cut
	}
	end := r.ended.Load()
	if end != 0 && time.Since(time.Unix(0, end)) >= r.cfg.DrainTimeout {
		r.w.cut = true
	}
	return r.w.cut
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
