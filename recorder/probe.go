package recorder

import (
	"context"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/clock"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// probe asks every time service for its stamps once per ProbeInterval and
// records the four-stamp exchange on an internal channel per service.
func (src *sources) probe(ctx context.Context, sess *zenoh.Session) {
	t := time.NewTicker(src.cfg.ProbeInterval)
	defer t.Stop()
	for {
		for _, key := range src.cfg.TimeKeys {
			t1 := clock.WallNow() + src.cfg.ClockOffset.Nanoseconds()
			replies, err := sess.Get(ctx, key, nil, min(src.cfg.ProbeInterval, 500*time.Millisecond))
			if err != nil {
				continue
			}
			var got []sample
			for _, rep := range replies {
				tr, err := codec.DecodeTimeReply(rep.Payload)
				if rep.Err || err != nil {
					continue
				}
				t4 := rep.RecvWallNs
				if t4 == 0 {
					t4 = clock.WallNow()
				}
				t4 += src.cfg.ClockOffset.Nanoseconds()
				p := codec.ClockProbe{T1Ns: t1, T2Ns: tr.T2Ns, T3Ns: tr.T3Ns, T4Ns: t4}
				got = append(got, sample{name: "vrlog/clock/" + rep.Key, transport: logfmt.TransportInternal, topic: rep.Key,
					schema: codec.SchemaClockProbe, rec: logfmt.Record{RecvWallNs: t4, RecvMonoNs: rep.RecvMonoNs, Payload: codec.AppendClockProbe(nil, p)}})
			}
			if !src.send(ctx, batch{samples: got}) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
