package viewer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/foxws"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/iceoryx2"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Live selects the streams a live view bridges, as record selects them.
type Live struct {
	// ZenohKeys are key expressions; IceoryxServices service names or
	// patterns (* one level, ** any), matched as services appear; All is
	// every zenoh key and every iceoryx2 pub-sub service.
	ZenohKeys       []string
	IceoryxServices []string
	All             bool
	Zenoh           zenoh.Config
	// QueueBytes bounds each subscription's samples received and not yet
	// handed to the server (default 64 MiB): the transports' own native
	// queues, which drop (counted) rather than wait when it is full, so a
	// viewer never slows a publisher or the transports.
	QueueBytes int
	// ServicePoll is how often new iceoryx2 services are looked for (250 ms).
	ServicePoll time.Duration
}

// bridge subscribes to the live streams and feeds every sample to a
// server. Each subscription has one goroutine that drains its native
// queue in batches; the server copies what it keeps and never waits for a
// client, so a slow viewer costs drops in its own queue only.
type bridge struct {
	cfg  Live
	feed foxws.Feed
	warn func(string)

	mu    sync.Mutex
	ids   map[string]uint16 // channel name → feed id
	next  uint16
	found sync.Map        // iceoryx2 services subscribed
	subs  []func() uint64 // each subscription's transport drops
}

// runLive bridges until ctx ends.
func runLive(ctx context.Context, cfg Live, feed foxws.Feed, warn func(string)) (*bridge, func(), error) {
	if len(cfg.ZenohKeys) == 0 && len(cfg.IceoryxServices) == 0 && !cfg.All {
		return nil, nil, errors.New("viewer: nothing to view live: give zenoh keys, iceoryx2 services or all")
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = 64 << 20
	}
	if cfg.ServicePoll <= 0 {
		cfg.ServicePoll = 250 * time.Millisecond
	}
	b := &bridge{cfg: cfg, feed: feed, warn: warn, ids: map[string]uint16{}, next: 1}
	var named, pats []string
	for _, s := range cfg.IceoryxServices {
		p, err := keyexpr.Parse(s)
		if err != nil {
			return nil, nil, fmt.Errorf("viewer: iceoryx2 service %w", err)
		}
		if p.Literal() {
			named = append(named, s)
		} else {
			pats = append(pats, s)
		}
	}
	patterns, _ := keyexpr.ParseSet(pats) // parsed above
	var wg sync.WaitGroup
	var closers []func()
	stop := func() {
		wg.Wait()
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(err error) (*bridge, func(), error) {
		stop()
		return nil, nil, err
	}
	keys := cfg.ZenohKeys
	if cfg.All {
		keys = []string{"**"}
	}
	if len(keys) > 0 {
		sess, err := zenoh.Open(cfg.Zenoh)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, func() { sess.Close() })
		for _, k := range keys {
			sub, err := sess.Subscribe(k, zenoh.SubscriberOptions{QueueBytes: cfg.QueueBytes})
			if err != nil {
				return fail(fmt.Errorf("zenoh subscribe %q: %w", k, err))
			}
			b.addSub(sub.Dropped)
			wg.Add(1)
			go func() { defer wg.Done(); defer sub.Close(); b.zenoh(ctx, sub) }()
		}
	}
	if len(cfg.IceoryxServices) > 0 || cfg.All {
		node, err := iceoryx2.NewNode("vrlog-view")
		if err != nil {
			return fail(fmt.Errorf("iceoryx2: %w", err))
		}
		closers = append(closers, func() { node.Close() })
		wg.Add(1)
		go func() { defer wg.Done(); b.discover(ctx, &wg, node, named, patterns) }()
	}
	return b, stop, nil
}

func (b *bridge) addSub(dropped func() uint64) {
	b.mu.Lock()
	b.subs = append(b.subs, dropped)
	b.mu.Unlock()
}

// Dropped is what the subscriptions' native queues dropped for want of
// room (the server not keeping up with the transports).
func (b *bridge) Dropped() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var n uint64
	for _, d := range b.subs {
		n += d()
	}
	return n
}

// channel returns the feed id of a channel, declaring it on its first
// record (schema: the transport's, else detected from the record).
func (b *bridge) channel(name string, tr logfmt.Transport, schema string, meta map[string]string, r *logfmt.Record) (uint16, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if id, ok := b.ids[name]; ok {
		return id, true
	}
	if b.next == 0 {
		return 0, false // 65535 channels: no more
	}
	if schema == "" {
		schema = codec.DetectSchema(r.Header, r.Payload)
	}
	c := logfmt.Channel{ID: b.next, Name: name, Transport: tr, Topic: name, Schema: schema, Meta: meta}
	if err := b.feed.AddChannel(c); err != nil {
		b.warn(err.Error())
		return 0, false
	}
	b.ids[name] = b.next
	b.next++
	return c.ID, true
}

func (b *bridge) write(r *logfmt.Record) {
	if err := b.feed.Write(r, r.RecvWallNs); err != nil {
		b.warn(err.Error())
	}
}

// zenoh feeds one zenoh subscription's samples.
func (b *bridge) zenoh(ctx context.Context, sub *zenoh.Subscriber) {
	var buf []zenoh.Sample
	for {
		got, err := sub.Receive(ctx, buf[:0])
		if err != nil {
			return // ctx done or closed
		}
		buf = got
		for i := range got {
			s := &got[i]
			if s.Kind != zenoh.KindPut || strings.HasPrefix(s.Key, "@") {
				continue
			}
			r := logfmt.Record{RecvWallNs: s.RecvWallNs, RecvMonoNs: s.RecvMonoNs, Header: s.Attachment, Payload: s.Payload}
			if seq, t, err := codec.StateStamp(s.Payload); err == nil {
				r.CaptureNs, r.Seq, r.HasStamp = t, seq, true
			}
			var meta map[string]string
			if s.Encoding != "" {
				meta = map[string]string{"zenoh.encoding": s.Encoding}
			}
			id, ok := b.channel(s.Key, logfmt.TransportZenoh, "", meta, &r)
			if !ok {
				continue
			}
			r.Channel = id
			b.write(&r)
		}
	}
}

// discover subscribes to the named services as they appear and, with
// patterns or All, to every matching service, polling the service list.
func (b *bridge) discover(ctx context.Context, wg *sync.WaitGroup, node *iceoryx2.Node, pending []string, patterns *keyexpr.Set) {
	t := time.NewTicker(b.cfg.ServicePoll)
	defer t.Stop()
	open := func(service string) bool {
		// Lent samples: copied once out of shared memory into the
		// subscriber's slots, which bound its memory, and handed back as
		// soon as the server has taken its copy.
		sub, err := node.Subscribe(service, iceoryx2.SubscriberOptions{QueueLen: 64, QueueBytes: b.cfg.QueueBytes, Lend: true})
		if errors.Is(err, iceoryx2.ErrServiceNotFound) {
			return false
		}
		b.found.Store(service, true)
		if err != nil {
			b.warn(fmt.Sprintf("iceoryx2 service %s: %v", service, err))
			return true
		}
		b.addSub(sub.Dropped)
		wg.Add(1)
		go func() { defer wg.Done(); defer sub.Close(); b.iceoryx(ctx, sub, service) }()
		return true
	}
	listErr := ""
	for {
		for i := 0; i < len(pending); i++ {
			if open(pending[i]) {
				pending = append(pending[:i], pending[i+1:]...)
				i--
			}
		}
		if b.cfg.All || patterns.Len() > 0 {
			svcs, err := node.ListServices()
			if err != nil && err.Error() != listErr {
				listErr = err.Error()
				b.warn("iceoryx2 service list: " + listErr + "; retrying")
			}
			for _, s := range svcs {
				if _, ok := b.found.Load(s.Name); !ok && (b.cfg.All || patterns.Match(s.Name)) {
					open(s.Name)
				}
			}
		} else if len(pending) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// iceoryx feeds one iceoryx2 subscription's samples.
func (b *bridge) iceoryx(ctx context.Context, sub *iceoryx2.Subscriber, service string) {
	info := sub.Info()
	meta := info.Types.ToMeta()
	schema := ""
	if info.Types.UserHeader.TypeName == codec.FrameHeaderTypeName {
		schema = codec.SchemaFrame
	}
	var buf []iceoryx2.Sample
	for {
		got, err := sub.Receive(ctx, buf[:0])
		if err != nil {
			return
		}
		buf = got
		for i := range got {
			s := &got[i]
			r := logfmt.Record{RecvWallNs: s.RecvWallNs, RecvMonoNs: s.RecvMonoNs, Header: s.UserHeader, Payload: s.Payload}
			if seq, t, err := codec.FrameStamp(s.UserHeader); err == nil {
				r.CaptureNs, r.Seq, r.HasStamp = t, seq, true
			}
			if id, ok := b.channel(service, logfmt.TransportIceoryx2, schema, meta, &r); ok {
				r.Channel = id
				b.write(&r) // copies what it keeps
			}
			sub.Release(s)
		}
	}
}
