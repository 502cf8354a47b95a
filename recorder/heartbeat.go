package recorder

import (
	"context"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/clock"
)

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
func (r *rec) heartbeat(ctx context.Context, every time.Duration) {
	beat := func() []item {
		return []item{{name: HeartbeatChannel, topic: HeartbeatChannel, transport: logfmt.TransportInternal, schema: codec.SchemaHeartbeat,
			rec: logfmt.Record{RecvWallNs: clock.WallNow() + r.cfg.ClockOffset.Nanoseconds(), RecvMonoNs: clock.MonoNow()}}}
	}
	if every <= 0 { // a log writer without timed flushes
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if r.send(ctx, beat()) {
				continue
			}
		case <-ctx.Done():
		}
		r.lanes.put(beat()) // the stop
		return
	}
}
