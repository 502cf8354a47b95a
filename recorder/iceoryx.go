package recorder

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/iceoryx2"
)

// serviceMeta is a service's channel meta (docs/transports.md) and the
// schema its types name.
func serviceMeta(info iceoryx2.ServiceInfo) (meta map[string]string, schema string) {
	meta = info.Types.ToMeta()
	for k, v := range info.Config.ToMeta() {
		meta[k] = v
	}
	if info.Types.UserHeader.TypeName == codec.FrameHeaderTypeName {
		schema = codec.SchemaFrame
	}
	return meta, schema
}

// failed stores a service that matched the selection but could not be
// opened as a channel error (logfmt.MetaError) and reports it: it is never
// skipped in silence.
func (src *sources) failed(ctx context.Context, node *iceoryx2.Node, service string, err error) {
	src.discovered.Store(service, true) // reported once, not retried every poll
	meta, schema := map[string]string{}, ""
	if info, derr := node.ServiceDetails(service); derr == nil {
		meta, schema = serviceMeta(info)
	}
	meta[logfmt.MetaError] = err.Error()
	src.send(ctx, batch{failed: &failure{name: service, transport: logfmt.TransportIceoryx2, topic: service, meta: meta, schema: schema}})
}

func (src *sources) subscribeIceoryx(ctx context.Context, node *iceoryx2.Node, service string) error {
	// Lent samples: each frame is copied once out of shared memory into a
	// slot of the subscriber, written from there and handed back; the
	// slots bound the subscription's memory (QueueBytes).
	sub, err := node.Subscribe(service, iceoryx2.SubscriberOptions{BufferSize: src.cfg.IceoryxBuffer, Lend: true,
		QueueLen: 1 << 16, QueueBytes: src.cfg.QueueBytes})
	if err != nil {
		return err // the transport names the service
	}
	src.discovered.Store(service, true)
	info := sub.Info()
	meta, schema := serviceMeta(info)
	got := sub.BufferSize()
	meta[metaIoxBuffer] = strconv.Itoa(got)
	if want := max(src.cfg.IceoryxBuffer, MinIceoryxBuffer); got < want {
		effect := "overwrites the oldest, which then shows as a seq gap"
		if so := info.Config.SafeOverflow; so != nil && !*so {
			effect = "is held up until the recorder takes them (the service has no safe overflow)"
		}
		meta[logfmt.MetaWarning] = fmt.Sprintf("iceoryx2 subscriber buffer %d (the service's subscriber_max_buffer_size; the recorder wants %d): "+
			"a publisher that sends more than %d samples while the recorder polls (every 200 µs) %s", got, want, got, effect)
	}
	var hold *endHold
	if so := info.Config.SafeOverflow; schema == codec.SchemaFrame && so != nil && *so {
		// Frames carry a seq: with no room, leave them to the service's
		// safe overflow, whose losses the drains locate exactly (overflow),
		// rather than take and drop them, which mixes the two kinds of
		// loss in one seq gap.
		sub.SetHold(true)
		hold = &endHold{holding: sub.Holding, buffer: got}
	}
	si := &subInfo{name: service, dropped: sub.Dropped, last: service, buffer: got, overflow: map[string]*overflow{}}
	src.subs.add(si)
	src.wg.Add(1)
	go func() {
		defer src.wg.Done()
		defer sub.Close() // lent samples stay valid until released
		var buf []iceoryx2.Sample
		pubs := map[string]bool{}
		src.pump(ctx, func(ctx context.Context) ([]sample, bool) {
			got, err := sub.Receive(ctx, buf[:0])
			if err != nil {
				return nil, false
			}
			buf = got
			dropped := sub.Dropped()
			b := make([]sample, len(got))
			for i := range got {
				s := got[i]
				b[i] = sample{name: service, transport: logfmt.TransportIceoryx2, topic: service, meta: meta, schema: schema, sub: si,
					rec: logfmt.Record{RecvWallNs: s.RecvWallNs, RecvMonoNs: s.RecvMonoNs, PublisherID: s.PublisherID,
						Header: s.UserHeader, Payload: s.Payload},
					release: func() { sub.Release(&s) },
					drain:   s.Drain, drainIndex: s.DrainIndex, droppedBefore: s.DroppedBefore, prevDrainLen: s.PrevDrainLen, afterHold: s.AfterHold}
				pubs[string(s.PublisherID)] = true
			}
			if len(b) > 0 {
				b[len(b)-1].dropsAfter = dropped
			}
			return b, true
		}, hold)
		ends := map[string]drainEnd{}
		for pub := range pubs {
			d, n := sub.DrainLen([]byte(pub))
			ends[pub] = drainEnd{d, n}
		}
		src.lanes.put(batch{end: &streamEnd{name: service, sub: si, drains: ends}})
	}()
	return nil
}

// discover subscribes to iceoryx2 pub-sub services as they appear: every
// service with --all, those matching a pattern, and named services that did
// not exist at the start.
func (src *sources) discover(ctx context.Context, node *iceoryx2.Node, pending []string, patterns []keyexpr.Pattern) {
	t := time.NewTicker(src.cfg.ServicePoll)
	defer t.Stop()
	// open subscribes to a service; one that exists but cannot be opened is
	// a channel error. It reports whether the service is done with.
	open := func(service string) bool {
		err := src.subscribeIceoryx(ctx, node, service)
		if err != nil && !errors.Is(err, iceoryx2.ErrServiceNotFound) {
			src.failed(ctx, node, service, err)
		}
		return !errors.Is(err, iceoryx2.ErrServiceNotFound)
	}
	listErr := ""
	for {
		for i := 0; i < len(pending); i++ {
			if open(pending[i]) {
				pending = append(pending[:i], pending[i+1:]...)
				i--
			}
		}
		if !src.cfg.All && len(pending) == 0 && len(patterns) == 0 {
			return
		}
		if src.cfg.All || len(patterns) > 0 {
			svcs, err := node.ListServices()
			if err != nil && err.Error() != listErr {
				listErr = err.Error() // a new failure: reported once, retried every poll
				src.send(ctx, batch{failed: &failure{name: "(service list)", transport: logfmt.TransportIceoryx2,
					meta: map[string]string{logfmt.MetaWarning: err.Error() + "; retrying"}}})
			}
			for _, s := range svcs {
				if _, ok := src.discovered.Load(s.Name); !ok && (src.cfg.All || matchAny(patterns, s.Name)) {
					open(s.Name)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
