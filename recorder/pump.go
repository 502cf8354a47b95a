package recorder

import (
	"context"
	"time"

	"github.com/vrlog/vrlog/transport/clock"
)

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
func (r *rec) pump(ctx context.Context, next func(context.Context) ([]item, bool), hold *endHold) {
	for {
		batch, ok := next(ctx)
		if !ok {
			break
		}
		if len(batch) > 0 {
			r.lanes.put(batch)
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
		batch, ok := next(dctx)
		cancel()
		if !ok {
			if hold != nil && late < lateMax && hold.holding() && time.Now().Before(deadline) {
				continue // the writer is freeing slots: the held samples come next
			}
			return
		}
		keep, over := batch[:0], false
		for _, it := range batch {
			switch {
			case it.rec.RecvMonoNs <= end:
				keep = append(keep, it)
			case late < lateMax:
				late++
				keep = append(keep, it)
			default:
				over = true
				if it.release != nil {
					it.release()
				}
			}
		}
		if len(keep) > 0 {
			r.lanes.put(keep)
		}
		if over || (late > 0 && late >= lateMax) {
			return
		}
	}
}
