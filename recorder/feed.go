package recorder

import (
	"context"
	"sync"

	"github.com/vrlog/vrlog/logfmt"
)

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

// startFeed runs the feed, if any, and then reports the start (every
// subscription declared) to OnStart.
func (r *rec) startFeed(ctx context.Context, wg *sync.WaitGroup) {
	if f := r.cfg.Feed; f != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ctx, func(x Fed) bool {
				return r.send(ctx, []item{{name: x.Name, transport: x.Transport, topic: x.Topic, schema: x.Schema, meta: x.Meta, rec: x.Record}})
			})
		}()
	}
	if r.cfg.OnStart != nil {
		r.cfg.OnStart()
	}
}
