package recorder

import (
	"context"
	"time"

	"github.com/vrlog/vrlog/transport/clock"
)

// drainWait is how long, once the recording is over, a subscription waits
// for more of what it had received by then.
const drainWait = 20 * time.Millisecond

// pump hands the batches next receives to the writer until ctx ends, then
// what the subscription had received before the end (stamped before it),
// so that stopping a recording loses nothing it took from a transport;
// samples stamped after the end are handed back unrecorded. next reports
// false when its subscriber has nothing more (ctx ended, closed). Sends
// block: the writer takes batches until every receiver is done, also after
// a failure (it then hands their memory back).
func (r *rec) pump(ctx context.Context, next func(context.Context) ([]item, bool)) {
	for {
		batch, ok := next(ctx)
		if !ok {
			break
		}
		if len(batch) > 0 {
			r.in <- batch
		}
	}
	end := clock.MonoNow()
	for {
		dctx, cancel := context.WithTimeout(context.Background(), drainWait)
		batch, ok := next(dctx)
		cancel()
		if !ok {
			return
		}
		keep, late := batch[:0], false
		for _, it := range batch {
			if it.rec.RecvMonoNs <= end {
				keep = append(keep, it)
			} else if late = true; it.release != nil {
				it.release()
			}
		}
		if len(keep) > 0 {
			r.in <- keep
		}
		if late {
			return
		}
	}
}
