package recorder

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/livecheck"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
	"github.com/vrlog/vrlog/transport/clock"
	"github.com/vrlog/vrlog/transport/iceoryx2"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Config says what to record and how.
type Config struct {
	Output string // log path; with splitting, the base of numbered files
	Force  bool   // overwrite existing files
	// ZenohKeys are key expressions (wildcards allowed); IceoryxServices are
	// pub-sub service names, or patterns with * (one level) and ** (any
	// levels) matched against services as they appear. All records every
	// zenoh key (**) and every iceoryx2 pub-sub service, including ones that
	// appear later.
	ZenohKeys       []string
	IceoryxServices []string
	All             bool
	Zenoh           zenoh.Config
	// Split into numbered files by size (bytes) or duration; MaxFiles > 0
	// keeps only the newest files (a ring).
	SplitSize     int64
	SplitDuration time.Duration
	// Duration > 0 ends the recording that long after it started (the
	// transports open; opening a zenoh session takes a while): the log
	// holds Duration of data, and the Summary's Elapsed says so. 0 records
	// until ctx ends.
	Duration time.Duration

	recording string // the id every file of this recording carries (Run sets it)
	MaxFiles  int
	// Compression per channel: the last entry whose Pattern matches the
	// channel's name or topic wins. Default: zstd level 1 for iceoryx2
	// channels (frames: their bytes are most of a log), LZ4 for the others
	// (states: 0.1 % of a camera log's bytes, read record by record by
	// replay, export and cut, and LZ4 decodes them about three times as
	// fast as zstd, at 2.4x where zstd-1 gets 3.8x).
	Compression []ChannelCompression
	// FlushInterval bounds how long a record may sit in memory before it
	// reaches the file (default 1 s): what kill -9 can cost. With a backlog
	// of frames, small records (states) are not held up behind it (lanes).
	FlushInterval time.Duration
	// DrainTimeout bounds how long, once the recording is over, the writer
	// goes on writing what was received before the end (default
	// DefaultDrainTimeout; negative: no bound). What is still queued then
	// is dropped and counted as recorder drops (Summary.DrainDrops), and
	// the log is finished as usual.
	DrainTimeout time.Duration
	Sync         logfmt.SyncPolicy
	Note         string
	Metadata     map[string]string
	// TimeKeys are zenoh selectors of clock-sync time services, probed
	// every ProbeInterval (default 1 s; negative disables). Default vr/*/time.
	TimeKeys      []string
	ProbeInterval time.Duration
	// ServicePoll is how often new iceoryx2 services are looked for (250 ms).
	ServicePoll time.Duration
	// OnStatus, if set, is called about once a second with a snapshot.
	OnStatus func(Status)
	// OnOpen, if set, is called once the output is open (before the
	// transports are): the recording has somewhere to go.
	OnOpen func()
	// OnProblem, if set, is called once for each channel that cannot be
	// recorded (ChannelStatus.Error) or is recorded with a limit
	// (ChannelStatus.Warning), from the same goroutine as OnStatus.
	OnProblem func(ChannelStatus)
	// QueueBytes bounds, per subscription, the samples received and not yet
	// written (default 512 MiB): an iceoryx2 subscription's frames live in
	// its subscriber's slots from the copy out of shared memory until they
	// are in the file; a zenoh subscription holds half of it in the native
	// queue and half on the way to the log writer. When it is full, new
	// samples are dropped and counted, so memory does not grow with load.
	QueueBytes int
	// IceoryxBuffer is the iceoryx2 subscriber buffer asked for per service
	// (0: as large as each service allows). A service that allows less
	// gets its maximum, with a warning when that is below
	// MinIceoryxBuffer (iceoryx2's default service allows 2).
	IceoryxBuffer int
	// ClockOffset, for tests only, shifts every wall stamp the recorder
	// takes (receive stamps, probes' T1 and T4), as if its host's clock ran
	// that much ahead: a second host's clock on one machine.
	ClockOffset time.Duration
	// Session, if set, is the zenoh session to subscribe and probe with
	// (a process that already has one, e.g. replay --capture); the recorder
	// does not close it. Zenoh left unused then.
	Session *zenoh.Session
	// Feed and OnStart: see feed.go.
	Feed    Feed
	OnStart func()
	// OnZenohSample, if set, is shown every zenoh sample received (not to
	// be kept: its bytes are the recorder's),
	// after its receive stamps were taken and before it is written (replay
	// --lockstep takes its answers from a capture this way, so an answer is
	// stamped before the replay reacts to it).
	OnZenohSample func(s *zenoh.Sample)
	// Snapshot, if set, keeps the recording in memory and writes a log
	// only when triggered (SnapshotConfig); Output is then the base of the
	// snapshots' names, and splitting does not apply.
	Snapshot *SnapshotConfig
}

// DefaultDrainTimeout is Config.DrainTimeout's default: a healthy
// recorder drains in milliseconds, and one that is far behind should not
// outlast a supervisor's stop timeout (docker stop's is 10 s; the footer
// and the last chunks take about a second more), after which a SIGKILL
// would lose the footer and everything not yet sealed.
const DefaultDrainTimeout = 5 * time.Second

// sink is where a recording goes: numbered files (rotator) or, with
// Config.Snapshot, memory written out when triggered (snapshotter). The
// writer goroutine is its only caller.
type sink interface {
	ensure(monoNs int64) error // a file is open to write a record received at monoNs into (0: no record)
	addChannel(d *logfmt.Channel) error
	id(name string) uint16                        // the channel's id in the current file
	addDrops(name string, n uint64, atMono int64) // n records of name lost at atMono (the receive time of the record they follow; 0: now)
	write(r *logfmt.Record, release func()) error
	seal(ahead bool) error // start a new chunk (records far apart in time follow); ahead: logfmt.Writer.SealAhead
	busy() bool            // a large record would wait for earlier chunks' compression (logfmt.Writer.WouldBlock)
	tick() error           // about once a second
	close() error
	bytes() (written int64, raw uint64)
	paths() []string // the files written
	abandon()        // the recording never started
}

// MinIceoryxBuffer is the iceoryx2 subscriber buffer below which the
// recorder warns: a publisher that sends more samples than the buffer holds
// within one poll interval of the recorder overwrites the oldest.
const MinIceoryxBuffer = 8

// metaIoxBuffer is the channel meta key of the iceoryx2 subscriber buffer
// the recorder got (docs/log-format.md).
const metaIoxBuffer = "vrlog.iox2.buffer_size"

// ChannelCompression picks a compression for the channels Pattern (a key
// expression, package keyexpr; "" for every channel) matches.
type ChannelCompression struct {
	Pattern     string
	Compression logfmt.Compression
}

// item is one received sample on its way to the writer, or (failed) a
// channel that could not be opened.
type item struct {
	name      string
	transport logfmt.Transport
	topic     string
	meta      map[string]string // channel meta, read on the channel's first record
	schema    string            // a schema known from the transport (iceoryx2 type names), or ""
	sub       *subInfo
	rec       logfmt.Record
	release   func() // hands rec's memory back once written; may be nil
	failed    bool   // no record: the channel could not be opened (meta holds logfmt.MetaError)
	// iceoryx2: where the subscriber took the sample (iceoryx2.Sample.Drain)
	drain         uint64
	drainIndex    uint32
	droppedBefore uint32
	prevDrainLen  uint32
	afterHold     bool
	// drainEnds: no record; the subscription's publishers' last drains
	// (Subscriber.DrainLen) as its stream ends, for the overflow count
	drainEnds map[string]drainEnd
	// zenoh: the subscription's drop count around the sample (lostBefore)
	drops dropSpan
	// the last item of a batch: its subscription's queue drop count
	// (Subscriber.Dropped) read once the batch was received, so the drops
	// are booked where they happened (after the batch), not where the
	// writer happens to be when it reads the counter (bookQueueDrops)
	dropsAfter uint64
}

// dropSpan bounds a zenoh subscription's drop count (Subscriber.Dropped)
// around a sample of a batch: lo was read before the previous batch was
// received, hi after this one was. A sample the native queue dropped for
// want of room after a record a of the channel and before its record b
// was counted after lo of a's batch and before hi of b's.
type dropSpan struct{ lo, hi uint64 }

type drainEnd struct {
	drain uint64
	n     uint32
}

// subInfo is one subscription, for drop accounting.
type subInfo struct {
	name    string
	dropped func() uint64
	seen    uint64 // drops already booked
	last    string // channel that received most recently
	// iceoryx2: the subscriber buffer (samples per publisher) and the seq
	// gaps it may have overwritten, per channel (writer goroutine only)
	buffer   int
	overflow map[string]*overflow
	// zenoh: the bytes on their way to the writer
	budget *budget
}

// newRecordingID is a random id for one recording's files.
func newRecordingID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Run records until ctx ends or a write fails, then closes the log. The
// returned Summary is valid in both cases.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = time.Second
	}
	if cfg.ProbeInterval == 0 {
		cfg.ProbeInterval = time.Second
	}
	if cfg.ServicePoll == 0 {
		cfg.ServicePoll = 250 * time.Millisecond
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = 512 << 20
	}
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	cfg.recording = newRecordingID()
	if len(cfg.TimeKeys) == 0 {
		cfg.TimeKeys = []string{"vr/*/time"}
	}
	if len(cfg.ZenohKeys) == 0 && len(cfg.IceoryxServices) == 0 && !cfg.All {
		return nil, errors.New("recorder: nothing to record: give zenoh keys, iceoryx2 services or --all")
	}
	comp, err := compileCompression(cfg.Compression)
	if err != nil {
		return nil, err
	}
	var named []string             // iceoryx2 services by name
	var patterns []keyexpr.Pattern // and by pattern, found by discover
	for _, s := range cfg.IceoryxServices {
		p, err := keyexpr.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("recorder: iceoryx2 service %w", err)
		}
		if p.Literal() {
			named = append(named, s)
		} else {
			patterns = append(patterns, p)
		}
	}
	r := &rec{cfg: cfg, lanes: newLanes(cfg.Snapshot != nil), chans: map[string]*channel{}, subs: map[*subInfo]bool{}, comp: comp}
	var out sink
	if cfg.Snapshot != nil {
		if r.snap, err = newSnapshotter(cfg); err != nil {
			return nil, err
		}
		out, r.trig = r.snap, make(chan trigger, 16)
		r.snap.undecided = r.undecidedLoss
		if len(cfg.Snapshot.Faults) > 0 {
			r.watch = livecheck.NewWatch(cfg.Snapshot.Faults, 0)
		}
	} else if out, err = newRotator(cfg); err != nil {
		return nil, err
	}
	r.out = out
	if cfg.OnOpen != nil {
		cfg.OnOpen()
	}

	ctx, endRecording := context.WithCancel(ctx) // ctx's end, Duration's or the caller's, ends the recording
	defer endRecording()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopEnd := context.AfterFunc(ctx, func() { r.ended.Store(time.Now().UnixNano()) }) // the drain's start
	defer stopEnd()
	var wg sync.WaitGroup
	var setupErr error
	var sess *zenoh.Session
	query := cfg.Snapshot != nil && cfg.Snapshot.Query != ""
	if cfg.Session != nil {
		sess = cfg.Session
	} else if len(cfg.ZenohKeys) > 0 || cfg.All || cfg.ProbeInterval > 0 || query {
		if sess, err = zenoh.Open(cfg.Zenoh); err != nil {
			setupErr = err // the transport's errors name it
		} else {
			defer sess.Close()
		}
	}
	var node *iceoryx2.Node
	if setupErr == nil && (len(cfg.IceoryxServices) > 0 || cfg.All) {
		if node, err = iceoryx2.NewNode("vrlog-record"); err != nil {
			setupErr = fmt.Errorf("iceoryx2: %w", err)
		} else {
			defer node.Close()
		}
	}
	keys := cfg.ZenohKeys
	if cfg.All {
		keys = []string{"**"}
	}
	for _, k := range keys {
		if setupErr != nil {
			break
		}
		setupErr = r.subscribeZenoh(rctx, &wg, sess, k)
	}
	var pending []string // named services that do not exist yet
	for _, s := range named {
		if setupErr != nil {
			break
		}
		switch err := r.subscribeIceoryx(rctx, &wg, node, s); {
		case errors.Is(err, iceoryx2.ErrServiceNotFound):
			pending = append(pending, s)
		case errors.Is(err, iceoryx2.ErrInvalid):
			setupErr = err // a bad name: the selection itself is wrong
		case err != nil:
			r.failed(rctx, node, s, err)
		}
	}
	var qbl *zenoh.Queryable
	var token *zenoh.Token // on the query's key: `vrlog snapshot` lists the recorders there are
	if setupErr == nil && query {
		if qbl, err = sess.DeclareDeferredQueryable(cfg.Snapshot.Query, r.query); err != nil {
			setupErr = fmt.Errorf("zenoh queryable %q: %w", cfg.Snapshot.Query, err)
		} else if token, err = sess.DeclareToken(cfg.Snapshot.Query); err != nil {
			qbl.Close()
			setupErr = fmt.Errorf("zenoh liveliness token %q: %w", cfg.Snapshot.Query, err)
		}
	}
	if setupErr != nil {
		cancel()
		wg.Wait()
		out.abandon()
		return nil, setupErr
	}
	if cfg.All || len(pending) > 0 || len(patterns) > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); r.discover(rctx, &wg, node, pending, patterns) }()
	}
	if sess != nil {
		r.session = &sessionWatch{}
		wg.Add(1)
		go func() { defer wg.Done(); r.session.run(rctx, sess) }()
	}
	if sess != nil && cfg.ProbeInterval > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); r.probe(rctx, sess) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); r.heartbeat(rctx, cfg.FlushInterval) }()
	r.startFeed(rctx, &wg)
	go func() { wg.Wait(); r.lanes.close() }()

	r.start = time.Now() // the transports are open: the recording starts
	if cfg.Duration > 0 {
		t := time.AfterFunc(cfg.Duration, endRecording)
		defer t.Stop()
	}
	werr := r.write(rctx, cancel)
	if qbl != nil {
		token.Close()
		qbl.Close()
	}
	r.refuseTriggers()
	cerr := out.close()
	sum := r.summary()
	if werr != nil {
		return sum, werr
	}
	return sum, cerr
}

// rec is one recording's state; write's goroutine owns chans and out.
type rec struct {
	cfg          Config
	out          sink
	snap         *snapshotter     // out, in snapshot mode
	trig         chan trigger     // snapshot triggers from zenoh queries
	watch        *livecheck.Watch // --trigger's checks, watched live
	watchSaid    bool             // the triggers that match no channel were said (watchTick)
	firstChannel time.Time        // when the first data channel was defined
	lanes        *lanes           // from the receivers to the writer
	w            writeState
	overflows    []*overflow  // every subscription's channels' (writer goroutine only: undecidedLoss)
	ended        atomic.Int64 // when the recording ended (unix ns; 0: not yet)
	mu           sync.Mutex   // guards subs (receivers add, writer reads)
	subs         map[*subInfo]bool
	chans        map[string]*channel
	order        []*channel
	start        time.Time
	discovered   sync.Map      // iceoryx2 services already subscribed
	session      *sessionWatch // the zenoh session's connectivity, if there is a session
	comp         []compression
}

// channel is the writer's view of one recorded channel.
type channel struct {
	def         logfmt.Channel
	codec       codec.Codec
	stream      *sampler.Stream
	msgs        uint64
	bytes       uint64
	undecodable uint64
	drops       uint64
	dropsMark   uint64 // the drop count at its latest zenoh record: dropSpan.lo (lostBefore)
	lastMsgs    uint64
	lastBytes   uint64
	hz, mbps    float64
}

func (r *rec) addSub(s *subInfo) {
	r.mu.Lock()
	r.subs[s] = true
	r.mu.Unlock()
}

func (r *rec) subscribeZenoh(ctx context.Context, wg *sync.WaitGroup, sess *zenoh.Session, key string) error {
	sub, err := sess.Subscribe(key, zenoh.SubscriberOptions{QueueBytes: r.cfg.QueueBytes / 2})
	if err != nil {
		return fmt.Errorf("zenoh subscribe %q: %w", key, err)
	}
	si := &subInfo{name: key, dropped: sub.Dropped, budget: newBudget(r.cfg.QueueBytes / 2)}
	r.addSub(si)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer sub.Close()
		var buf []zenoh.Sample
		var before uint64 // the subscription's drops before the previous Receive
		r.pump(ctx, func(ctx context.Context) ([]item, bool) {
			b := sub.Dropped()
			got, err := sub.Receive(ctx, buf[:0])
			if err != nil {
				return nil, false // ctx done or subscriber closed
			}
			buf = got
			drops := dropSpan{lo: before, hi: sub.Dropped()}
			before = b
			batch := make([]item, 0, len(got))
			held := 0
			for i := range got {
				s := &got[i]
				if s.Kind != zenoh.KindPut || strings.HasPrefix(s.Key, "@") {
					continue
				}
				if r.cfg.OnZenohSample != nil {
					r.cfg.OnZenohSample(s)
				}
				n := len(s.Payload) + len(s.Attachment)
				held += n
				it := item{name: s.Key, transport: logfmt.TransportZenoh, topic: s.Key, sub: si, drops: drops,
					rec:     logfmt.Record{RecvWallNs: s.RecvWallNs, RecvMonoNs: s.RecvMonoNs, Header: s.Attachment, Payload: s.Payload},
					release: func() { si.budget.put(n) }}
				if s.HasSource {
					it.rec.PublisherID, it.rec.PublisherSN, it.rec.HasPubSN = s.SourceID, s.SourceSN, true
				}
				if s.Encoding != "" {
					it.meta = map[string]string{"zenoh.encoding": s.Encoding, "zenoh.subscription": key}
				}
				batch = append(batch, it)
			}
			if len(batch) > 0 {
				batch[len(batch)-1].dropsAfter = drops.hi
			}
			// Room on the way to the writer: meanwhile the native queue
			// holds what arrives, and drops (counted) when full.
			si.budget.take(held)
			return batch, true
		}, nil)
	}()
	return nil
}

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
func (r *rec) failed(ctx context.Context, node *iceoryx2.Node, service string, err error) {
	r.discovered.Store(service, true) // reported once, not retried every poll
	meta, schema := map[string]string{}, ""
	if info, derr := node.ServiceDetails(service); derr == nil {
		meta, schema = serviceMeta(info)
	}
	meta[logfmt.MetaError] = err.Error()
	r.send(ctx, []item{{name: service, transport: logfmt.TransportIceoryx2, topic: service, meta: meta, schema: schema, failed: true}})
}

func (r *rec) subscribeIceoryx(ctx context.Context, wg *sync.WaitGroup, node *iceoryx2.Node, service string) error {
	// Lent samples: each frame is copied once out of shared memory into a
	// slot of the subscriber, written from there and handed back; the
	// slots bound the subscription's memory (QueueBytes).
	sub, err := node.Subscribe(service, iceoryx2.SubscriberOptions{BufferSize: r.cfg.IceoryxBuffer, Lend: true,
		QueueLen: 1 << 16, QueueBytes: r.cfg.QueueBytes})
	if err != nil {
		return err // the transport names the service
	}
	r.discovered.Store(service, true)
	info := sub.Info()
	meta, schema := serviceMeta(info)
	got := sub.BufferSize()
	meta[metaIoxBuffer] = strconv.Itoa(got)
	if want := max(r.cfg.IceoryxBuffer, MinIceoryxBuffer); got < want {
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
	r.addSub(si)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer sub.Close() // lent samples stay valid until released
		var buf []iceoryx2.Sample
		pubs := map[string]bool{}
		r.pump(ctx, func(ctx context.Context) ([]item, bool) {
			got, err := sub.Receive(ctx, buf[:0])
			if err != nil {
				return nil, false
			}
			buf = got
			dropped := sub.Dropped()
			batch := make([]item, len(got))
			for i := range got {
				s := got[i]
				batch[i] = item{name: service, transport: logfmt.TransportIceoryx2, topic: service, meta: meta, schema: schema, sub: si,
					rec: logfmt.Record{RecvWallNs: s.RecvWallNs, RecvMonoNs: s.RecvMonoNs, PublisherID: s.PublisherID,
						Header: s.UserHeader, Payload: s.Payload},
					release: func() { sub.Release(&s) },
					drain:   s.Drain, drainIndex: s.DrainIndex, droppedBefore: s.DroppedBefore, prevDrainLen: s.PrevDrainLen, afterHold: s.AfterHold}
				pubs[string(s.PublisherID)] = true
			}
			if len(batch) > 0 {
				batch[len(batch)-1].dropsAfter = dropped
			}
			return batch, true
		}, hold)
		ends := map[string]drainEnd{}
		for pub := range pubs {
			d, n := sub.DrainLen([]byte(pub))
			ends[pub] = drainEnd{d, n}
		}
		r.lanes.put([]item{{name: service, sub: si, drainEnds: ends}})
	}()
	return nil
}

// send hands a batch to the writer; false when the recording is over.
func (r *rec) send(ctx context.Context, batch []item) bool { return r.lanes.send(ctx, batch) }

// discover subscribes to iceoryx2 pub-sub services as they appear: every
// service with --all, those matching a pattern, and named services that did
// not exist at the start.
func (r *rec) discover(ctx context.Context, wg *sync.WaitGroup, node *iceoryx2.Node, pending []string, patterns []keyexpr.Pattern) {
	t := time.NewTicker(r.cfg.ServicePoll)
	defer t.Stop()
	// open subscribes to a service; one that exists but cannot be opened is
	// a channel error. It reports whether the service is done with.
	open := func(service string) bool {
		err := r.subscribeIceoryx(ctx, wg, node, service)
		if err != nil && !errors.Is(err, iceoryx2.ErrServiceNotFound) {
			r.failed(ctx, node, service, err)
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
		if !r.cfg.All && len(pending) == 0 && len(patterns) == 0 {
			return
		}
		if r.cfg.All || len(patterns) > 0 {
			svcs, err := node.ListServices()
			if err != nil && err.Error() != listErr {
				listErr = err.Error() // a new failure: reported once, retried every poll
				r.send(ctx, []item{{name: "(service list)", transport: logfmt.TransportIceoryx2, failed: true,
					meta: map[string]string{logfmt.MetaWarning: err.Error() + "; retrying"}}})
			}
			for _, s := range svcs {
				if _, ok := r.discovered.Load(s.Name); !ok && (r.cfg.All || matchAny(patterns, s.Name)) {
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

// probe asks every time service for its stamps once per ProbeInterval and
// records the four-stamp exchange on an internal channel per service.
func (r *rec) probe(ctx context.Context, sess *zenoh.Session) {
	t := time.NewTicker(r.cfg.ProbeInterval)
	defer t.Stop()
	for {
		for _, key := range r.cfg.TimeKeys {
			t1 := clock.WallNow() + r.cfg.ClockOffset.Nanoseconds()
			replies, err := sess.Get(ctx, key, nil, min(r.cfg.ProbeInterval, 500*time.Millisecond))
			if err != nil {
				continue
			}
			var batch []item
			for _, rep := range replies {
				tr, err := codec.DecodeTimeReply(rep.Payload)
				if rep.Err || err != nil {
					continue
				}
				t4 := rep.RecvWallNs
				if t4 == 0 {
					t4 = clock.WallNow()
				}
				t4 += r.cfg.ClockOffset.Nanoseconds()
				p := codec.ClockProbe{T1Ns: t1, T2Ns: tr.T2Ns, T3Ns: tr.T3Ns, T4Ns: t4}
				batch = append(batch, item{name: "vrlog/clock/" + rep.Key, transport: logfmt.TransportInternal, topic: rep.Key,
					schema: codec.SchemaClockProbe, rec: logfmt.Record{RecvWallNs: t4, RecvMonoNs: rep.RecvMonoNs, Payload: codec.AppendClockProbe(nil, p)}})
			}
			if !r.send(ctx, batch) {
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

// compression is a compiled ChannelCompression.
type compression struct {
	pat   keyexpr.Pattern
	every bool // no pattern
	c     logfmt.Compression
}

func compileCompression(ccs []ChannelCompression) ([]compression, error) {
	var out []compression
	for _, cc := range ccs {
		c := compression{c: cc.Compression, every: cc.Pattern == ""}
		if !c.every {
			p, err := keyexpr.Parse(cc.Pattern)
			if err != nil {
				return nil, fmt.Errorf("recorder: compression %w", err)
			}
			c.pat = p
		}
		out = append(out, c)
	}
	return out, nil
}

// compression picks the channel's compression: the last match wins, else
// the transport's default (Config.Compression).
func (r *rec) compression(it *item) logfmt.Compression {
	c := logfmt.Compression{Kind: logfmt.CompressionLZ4}
	if it.transport == logfmt.TransportIceoryx2 {
		c = logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}
	}
	for _, cc := range r.comp {
		if cc.every || cc.pat.Match(it.name) || cc.pat.Match(it.topic) {
			c = cc.c
		}
	}
	return c
}

func matchAny(ps []keyexpr.Pattern, s string) bool {
	for _, p := range ps {
		if p.Match(s) {
			return true
		}
	}
	return false
}

// detectSchema names the codec of a new channel from its first sample.
func detectSchema(it *item) string {
	if it.schema != "" {
		return it.schema
	}
	return codec.DetectSchema(it.rec.Header, it.rec.Payload)
}

// problem stores and reports a channel that could not be opened (or, with
// only a warning and no channel name known to the log, a transient failure).
func (r *rec) problem(it *item) error {
	if _, dup := r.chans[it.name]; dup {
		return nil
	}
	cs := ChannelStatus{Name: it.name, Transport: it.transport.String(), Schema: it.schema,
		Error: it.meta[logfmt.MetaError], Warning: it.meta[logfmt.MetaWarning]}
	if cs.Error != "" {
		ch := &channel{def: logfmt.Channel{Name: it.name, Transport: it.transport, Topic: it.topic, Schema: it.schema,
			Compression: r.compression(it), Meta: it.meta}, stream: sampler.NewStream(sampler.Config{})}
		if err := r.out.ensure(0); err != nil {
			return err
		}
		if err := r.out.addChannel(&ch.def); err != nil {
			return err
		}
		r.chans[it.name] = ch
		r.order = append(r.order, ch)
	}
	if r.cfg.OnProblem != nil {
		r.cfg.OnProblem(cs)
	}
	return nil
}

// writeOne writes one item, or, with keep false (the drain was cut off),
// does all the bookkeeping of writing it but counts it as a recorder drop.
func (r *rec) writeOne(it *item, keep bool) error {
	release := it.release // handed to the log writer below, or called here
	defer func() {
		if release != nil {
			release()
		}
	}()
	if it.failed {
		return r.problem(it)
	}
	if it.drainEnds != nil {
		r.endOverflow(it.sub, it.drainEnds)
		return nil
	}
	if err := r.out.ensure(it.rec.RecvMonoNs); err != nil {
		return err
	}
	ch := r.chans[it.name]
	if ch == nil {
		ch = &channel{def: logfmt.Channel{Name: it.name, Transport: it.transport, Topic: it.topic, Schema: detectSchema(it),
			Compression: r.compression(it), Meta: it.meta}, stream: sampler.NewStream(sampler.Config{})}
		ch.codec, _ = codec.Lookup(ch.def.Schema)
		if err := r.out.addChannel(&ch.def); err != nil {
			return err
		}
		r.chans[it.name] = ch
		r.order = append(r.order, ch)
		if r.watch != nil {
			r.watch.Add(&ch.def)
		}
		if r.firstChannel.IsZero() && it.transport != logfmt.TransportInternal {
			r.firstChannel = time.Now()
		}
		if w := it.meta[logfmt.MetaWarning]; w != "" && r.cfg.OnProblem != nil {
			r.cfg.OnProblem(ChannelStatus{Name: it.name, Transport: it.transport.String(), Schema: ch.def.Schema, Warning: w})
		}
	}
	rec := &it.rec
	rec.Channel = r.out.id(it.name)
	if it.transport != logfmt.TransportInternal { // probes were shifted as they were taken
		rec.RecvWallNs += r.cfg.ClockOffset.Nanoseconds()
	}
	var ov *overflow
	var open *gap // the gap before rec, left undecided by ov
	if ch.codec != nil && ch.def.Schema != codec.SchemaClockProbe {
		if seq, t, err := ch.codec.Stamp(rec.Header, rec.Payload); err == nil {
			rec.Seq, rec.CaptureNs, rec.HasStamp = seq, t, true
			if keep {
				ch.stream.Add(sampler.Sample{Seq: seq, TNs: t, RecvWallNs: rec.RecvWallNs, RecvMonoNs: rec.RecvMonoNs, Publisher: string(rec.PublisherID)})
			}
			if it.sub != nil && it.sub.overflow != nil {
				ov, open = r.bookOverflow(it, ch, seq) // a dropped frame's seq still closes the gap before it
			}
		} else if keep {
			ch.undecodable++
		}
	}
	if !keep {
		r.out.addDrops(it.name, 1, rec.RecvMonoNs)
		ch.drops++
		r.w.drainDrops++
		r.bookQueueDrops(it, rec.RecvMonoNs)
		return nil
	}
	if r.watch != nil {
		r.watchRecord(ch, it, ov, open)
	}
	ch.msgs++
	ch.bytes += uint64(len(rec.Header) + len(rec.Payload))
	if it.sub != nil {
		it.sub.last = it.name
	}
	release = nil
	at := rec.RecvMonoNs // rec is the sink's once written
	if err := r.out.write(rec, it.release); err != nil {
		return err
	}
	r.bookQueueDrops(it, at)
	return nil
}

// bookQueueDrops books the drops of it's subscription's native queue
// counted by the end of the batch it ended (item.dropsAfter), right after
// its record (received at atMono): the queue drops what arrives while it
// is full, after the samples it holds, so that is where the loss lies in
// time and in the log, and a snapshot counts it in the window its seq gap
// is in. Booked when the counter is read instead, the loss would land
// before the records still queued (seconds of them when the disk falls
// behind), in an earlier window.
func (r *rec) bookQueueDrops(it *item, atMono int64) {
	s := it.sub
	if s == nil || it.dropsAfter <= s.seen {
		return
	}
	if ch := r.chans[it.name]; ch != nil {
		r.out.addDrops(it.name, it.dropsAfter-s.seen, atMono)
		ch.drops += it.dropsAfter - s.seen
		s.seen = it.dropsAfter
	}
}

// lostBefore is how many samples of ch the recorder may have lost since
// ch's previous record, so that the live checks do not take its loss for
// the publisher's skip or outage (livecheck.Watch.Record): for iceoryx2,
// what the subscriber dropped right before the sample, or all of a gap
// across a hold (safe overflow replaced it: see overflow); for zenoh, what
// the subscription dropped meanwhile, on any of its channels (it counts
// them together), so at most that many.
func lostBefore(it *item, ch *channel) uint64 {
	switch {
	case it.sub == nil:
		return 0
	case it.afterHold:
		return ^uint64(0)
	case it.transport == logfmt.TransportIceoryx2:
		return uint64(it.droppedBefore)
	}
	lost := it.drops.hi - min(it.drops.hi, ch.dropsMark)
	ch.dropsMark = it.drops.lo
	return lost
}

// watchRecord runs the live checks on it's record: a gap the overflow
// left undecided (open) is held on it until its drain ends, and the gaps
// the overflow decided as the publisher's are judged now.
func (r *rec) watchRecord(ch *channel, it *item, ov *overflow, open *gap) {
	var fired []livecheck.Fired
	if open != nil {
		fired, open.held = r.watch.RecordUndecided(&ch.def, &it.rec, lostBefore(it, ch))
	} else {
		fired = r.watch.Record(&ch.def, &it.rec, lostBefore(it, ch))
	}
	if ov != nil {
		fired = append(fired, r.releaseGaps(ov)...)
	}
	for _, f := range fired {
		r.fire(f, it.rec.RecvMonoNs, it.rec.RecvWallNs)
	}
}

// releaseGaps judges the held checks of the gaps o decided as the
// publisher's.
func (r *rec) releaseGaps(o *overflow) []livecheck.Fired {
	var fired []livecheck.Fired
	for _, h := range o.takeReleased() {
		if r.watch != nil {
			fired = append(fired, r.watch.Release(h)...)
		}
	}
	return fired
}

// bookOverflow counts the samples iceoryx2 may have overwritten in the
// subscriber's buffer before it (see overflow) as the channel's drops; it
// returns the channel's overflow and the sample's gap, if undecided.
func (r *rec) bookOverflow(it *item, ch *channel, seq uint64) (*overflow, *gap) {
	o := it.sub.overflow[it.name]
	if o == nil {
		o = newOverflow(it.sub.buffer)
		it.sub.overflow[it.name] = o
		r.overflows = append(r.overflows, o)
	}
	n, open := o.add(string(it.rec.PublisherID), seq, it.drain, it.drainIndex, it.droppedBefore, it.prevDrainLen, it.afterHold, it.rec.RecvMonoNs)
	if n > 0 {
		r.out.addDrops(it.name, n, o.takeLostAt()) // at the sample after the gap, not at the one that decided it
		ch.drops += n
	}
	return o, open
}

// undecidedLoss is the receive stamp of the earliest iceoryx2 seq gap
// not yet decided as the recorder's loss or the publisher's skip (see
// overflow: a drain later), 0 if none; a snapshot window waits for it.
func (r *rec) undecidedLoss() int64 {
	var at int64
	for _, o := range r.overflows {
		if a := o.undecided(); a > 0 && (at == 0 || a < at) {
			at = a
		}
	}
	return at
}

// endOverflow books the overflow of the drains still open at the end of a
// subscription's stream (ends: its publishers' last drains, or nil).
func (r *rec) endOverflow(s *subInfo, ends map[string]drainEnd) {
	final := func(pub string) (uint64, uint32) { e := ends[pub]; return e.drain, e.n }
	for name, o := range s.overflow {
		if n := o.end(final); n > 0 {
			if ch := r.chans[name]; ch != nil {
				r.out.addDrops(name, n, o.takeLostAt())
				ch.drops += n
			}
		}
		for _, f := range r.releaseGaps(o) {
			r.fire(f, 0, 0) // stamped at their records
		}
	}
}

// bookDrops moves what the subscribers' drop counters counted after their
// last batches (bookQueueDrops) into the log, once the streams are over.
func (r *rec) bookDrops() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.subs {
		d := s.dropped()
		if d <= s.seen {
			continue
		}
		if ch := r.chans[s.last]; ch != nil {
			r.out.addDrops(s.last, d-s.seen, 0)
			ch.drops += d - s.seen
			s.seen = d
		}
	}
}
