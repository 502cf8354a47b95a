package recorder

import (
	"context"
	"fmt"
	"strings"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// subscribeZenoh subscribes to key and hands what it receives to the
// lanes until ctx ends.
func (src *sources) subscribeZenoh(ctx context.Context, sess *zenoh.Session, key string) error {
	sub, err := sess.Subscribe(key, zenoh.SubscriberOptions{QueueBytes: src.cfg.QueueBytes / 2})
	if err != nil {
		return fmt.Errorf("zenoh subscribe %q: %w", key, err)
	}
	si := &subInfo{name: key, dropped: sub.Dropped, budget: newBudget(src.cfg.QueueBytes / 2)}
	src.subs.add(si)
	src.wg.Add(1)
	go func() {
		defer src.wg.Done()
		defer sub.Close()
		var buf []zenoh.Sample
		var before uint64 // the subscription's drops before the previous Receive
		src.pump(ctx, func(ctx context.Context) ([]sample, bool) {
			was := sub.Dropped()
			got, err := sub.Receive(ctx, buf[:0])
			if err != nil {
				return nil, false // ctx done or subscriber closed
			}
			buf = got
			drops := dropSpan{lo: before, hi: sub.Dropped()}
			before = was
			b := make([]sample, 0, len(got))
			held := 0
			for i := range got {
				s := &got[i]
				if s.Kind != zenoh.KindPut || strings.HasPrefix(s.Key, "@") {
					continue
				}
				if src.cfg.OnZenohSample != nil {
					src.cfg.OnZenohSample(s)
				}
				n := len(s.Payload) + len(s.Attachment)
				held += n
				sm := sample{name: s.Key, transport: logfmt.TransportZenoh, topic: s.Key, sub: si, drops: drops,
					rec:     logfmt.Record{RecvWallNs: s.RecvWallNs, RecvMonoNs: s.RecvMonoNs, Header: s.Attachment, Payload: s.Payload},
					release: func() { si.budget.put(n) }}
				if s.HasSource {
					sm.rec.PublisherID, sm.rec.PublisherSN, sm.rec.HasPubSN = s.SourceID, s.SourceSN, true
				}
				if s.HasTimestamp {
					sm.zenohNs, sm.hasZenohTs = s.Timestamp.UnixNano(), true
				}
				if s.Encoding != "" {
					sm.meta = map[string]string{"zenoh.encoding": s.Encoding, "zenoh.subscription": key}
				}
				b = append(b, sm)
			}
			if len(b) > 0 {
				b[len(b)-1].dropsAfter = drops.hi
			}
			// Room on the way to the writer: meanwhile the native queue
			// holds what arrives, and drops (counted) when full.
			si.budget.take(held)
			return b, true
		}, nil)
	}()
	return nil
}
