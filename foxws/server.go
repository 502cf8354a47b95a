package foxws

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/vrlog/vrlog/foxglove"
	"github.com/vrlog/vrlog/logfmt"
)

// Options configure a Server. The zero value of each field gives its default.
type Options struct {
	// Name is the server's name in serverInfo (default "vrlog").
	Name string
	// Metadata is the serverInfo's metadata.
	Metadata map[string]string
	// QueueBytes bounds each client's queue of messages not yet written
	// (default 128 MiB: 0.7 s of 1080p30 rgb8): past it the client loses
	// frames, then states.
	QueueBytes int
	// QueueMessages bounds the small messages (states, poses, time) a
	// client's queue holds (default 65536).
	QueueMessages int
	// MaxClients bounds the clients connected at once (default 16); one
	// more is refused (HTTP 503).
	MaxClients int
	// ReadLimit bounds a client's message (default 64 KiB); a larger one
	// closes its connection (1009 message too big).
	ReadLimit int64
	// WriteTimeout closes a client that has not taken a message for this
	// long (default 10 s): its queue drops meanwhile, nobody else waits.
	WriteTimeout time.Duration
	// ControlMessages bounds a client's queued control messages
	// (advertisements, statuses, playback states; default 1024): a client
	// that falls that far behind is closed, as it cannot be shown the
	// channels right.
	ControlMessages int
	// NoPoses leaves out the "<topic>:pose" channel of each state channel.
	NoPoses bool
	// EpochNs is the epoch of decoded messages' "elapsed" field.
	EpochNs int64
	// Playback, if set, lets clients steer the source (ranged playback,
	// foxglove.sdk.v1 only); nil: a live source.
	Playback Playback
	// OnSubscribe, if set, is called after each subscribe request that
	// subscribed to a channel (a log playback starts then); sdk tells a
	// foxglove.sdk.v1 client (one that can steer the playback).
	OnSubscribe func(sdk bool)
	// OnClose, if set, is told each client's figures as it leaves, and
	// why the server closed it ("" when the client left).
	OnClose func(st ClientStats, reason string)
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "vrlog"
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 128 << 20
	}
	if o.QueueMessages <= 0 {
		o.QueueMessages = 65536
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 16
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 64 << 10
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.ControlMessages <= 0 {
		o.ControlMessages = 1024
	}
	return o
}

// Playback is a source the clients steer: a log played back. Its methods
// are called from the clients' reader goroutines, one at a time.
type Playback interface {
	// Range is the data's first and last log time (absolute ns): the
	// serverInfo's dataStartTime and dataEndTime.
	Range() (start, end uint64)
	// Control carries out r (seek, then speed, then play or pause) and
	// returns the state it left playback in.
	Control(r PlaybackRequest) PlaybackState
	// State is the playback's state now.
	State() PlaybackState
}

// Feed is how a source hands the server its data: channels appear, and
// records arrive with a log time. A log player, a live subscription and
// the recorder all feed a Server through it (docs/viewing.md).
type Feed interface {
	// AddChannel declares a vrlog channel (by its ID, unique per feed);
	// its Foxglove channels are advertised to every client at once.
	AddChannel(c logfmt.Channel) error
	// Write hands over one record of a declared channel (r.Channel), at
	// logTime (absolute ns on the log's clock). It copies what it keeps
	// and never waits for a client: a client whose queue is full loses
	// the message, counted. Safe from several goroutines; one channel's
	// records must come from one goroutine at a time, in order.
	Write(r *logfmt.Record, logTime int64) error
	// Time tells the clients the log's clock reads ns (time messages),
	// for stretches without records.
	Time(ns int64)
}

// timeInterval is how far the log's clock moves between two time
// messages (60 a second of log time, as the SDK's players send them).
const timeInterval = uint64(time.Second / 60)

// Server serves vrlog records over the Foxglove WebSocket protocol. It
// implements Feed and http.Handler.
type Server struct {
	o       Options
	session string
	start   time.Time

	mu      sync.RWMutex // clients, channels
	clients map[*client]bool
	fchans  map[uint64]*fchannel
	nextID  uint64
	vchans  map[uint16]*vchannel
	closed  bool

	timeMu   sync.Mutex
	lastTime uint64
	timeSet  bool

	conns    atomic.Uint64 // connections accepted, ever
	refused  atomic.Uint64 // connections refused
	received atomic.Uint64 // records written
}

// fchannel is one advertised Foxglove channel.
type fchannel struct {
	id     uint64
	topic  string
	schema foxglove.Schema
	md     map[string]string
	bulk   bool         // frames: dropped first
	subs   atomic.Int32 // clients subscribed
}

// vchannel is one fed vrlog channel and its Foxglove channels.
type vchannel struct {
	mu                sync.Mutex
	src               logfmt.Channel
	enc               *foxglove.Encoder
	main, pose, undec *fchannel
	scratch           []byte
}

// New returns a server with no channel and no client.
func New(o Options) *Server {
	return &Server{o: o.withDefaults(), session: fmt.Sprintf("%d", time.Now().UnixNano()), start: time.Now(),
		clients: map[*client]bool{}, fchans: map[uint64]*fchannel{}, nextID: 1, vchans: map[uint16]*vchannel{}}
}

// ErrUnknownChannel: a record of a channel never declared with AddChannel.
var ErrUnknownChannel = errors.New("foxws: record of an undeclared channel")

// AddChannel implements Feed.
func (s *Server) AddChannel(c logfmt.Channel) error {
	v := &vchannel{src: c, enc: foxglove.NewEncoder(&c, s.o.EpochNs)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.vchans[c.ID]; dup {
		return fmt.Errorf("foxws: channel id %d added twice", c.ID)
	}
	v.main = s.addLocked(c.Name, v.enc.Schema(), foxglove.ChannelMeta(&c), v.enc.Kind() == foxglove.KindRawImage)
	if v.enc.HasPose() && !s.o.NoPoses {
		v.pose = s.addLocked(c.Name+foxglove.PoseSuffix, foxglove.PoseSchema(), foxglove.PartMeta(&c, foxglove.PartPose), false)
	}
	s.vchans[c.ID] = v
	return nil
}

// addLocked creates and advertises a Foxglove channel; s.mu held.
func (s *Server) addLocked(topic string, sch foxglove.Schema, md map[string]string, bulk bool) *fchannel {
	f := &fchannel{id: s.nextID, topic: topic, schema: sch, md: md, bulk: bulk}
	s.nextID++
	s.fchans[f.id] = f
	msg := marshalAdvertise([]Advertised{advertisement(f.id, f.topic, f.schema, f.md)})
	for c := range s.clients {
		c.control(websocket.MessageText, msg)
	}
	return f
}

// Write implements Feed.
func (s *Server) Write(r *logfmt.Record, logTime int64) error {
	s.mu.RLock()
	v := s.vchans[r.Channel]
	s.mu.RUnlock()
	if v == nil {
		return fmt.Errorf("%w: %d", ErrUnknownChannel, r.Channel)
	}
	s.received.Add(1)
	lt := uint64(max(logTime, 0))
	s.tick(lt)
	v.mu.Lock()
	defer v.mu.Unlock()
	head, tail, err := v.enc.Encode(v.scratch[:0], r)
	if err != nil {
		if v.undec == nil {
			s.mu.Lock()
			v.undec = s.addLocked(v.src.Name+foxglove.UndecodableSuffix, foxglove.UndecodableSchema(),
				foxglove.PartMeta(&v.src, foxglove.PartUndecodable), false)
			s.mu.Unlock()
		}
		if v.undec.subs.Load() > 0 {
			s.broadcast(v.undec, lt, v.enc.AppendUndecodable(nil, r, err))
		}
		return nil
	}
	v.scratch = head
	if v.main.subs.Load() > 0 {
		body := make([]byte, len(head)+len(tail))
		copy(body[copy(body, head):], tail)
		s.broadcast(v.main, lt, body)
	}
	if v.pose != nil && v.pose.subs.Load() > 0 {
		s.broadcast(v.pose, lt, v.enc.AppendPose(nil))
	}
	return nil
}

// broadcast queues body on channel f for every subscribed client.
func (s *Server) broadcast(f *fchannel, logTime uint64, body []byte) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for c := range s.clients {
		c.data(entry{ch: f, logTime: logTime, body: body}, f.bulk)
	}
}

// Time implements Feed.
func (s *Server) Time(ns int64) { s.tick(uint64(max(ns, 0))) }

// tick sends a time message when the log's clock moved on by
// timeInterval since the last one (or none was sent since a reset).
func (s *Server) tick(ns uint64) {
	s.timeMu.Lock()
	if s.timeSet && ns < s.lastTime+timeInterval {
		s.timeMu.Unlock()
		return
	}
	s.lastTime, s.timeSet = ns, true
	s.timeMu.Unlock()
	msg := appendTime(nil, ns)
	s.mu.RLock()
	defer s.mu.RUnlock()
	for c := range s.clients {
		c.data(entry{logTime: ns, body: msg}, false)
	}
}

// Flush drops what every client has queued and restarts the time
// messages: a seek made them stale (not counted as drops).
func (s *Server) Flush() {
	s.timeMu.Lock()
	s.timeSet = false
	s.timeMu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for c := range s.clients {
		c.flush()
	}
}

// PlaybackChanged tells the foxglove.sdk.v1 clients the playback's state
// changed by itself (the end of the data reached).
func (s *Server) PlaybackChanged(st PlaybackState) {
	if s.o.Playback == nil {
		return
	}
	msg := AppendPlaybackState(nil, st)
	s.mu.RLock()
	defer s.mu.RUnlock()
	for c := range s.clients {
		if c.sdk {
			c.control(websocket.MessageBinary, msg)
		}
	}
}

// serverInfo is the serverInfo message for a client of subprotocol sub.
func (s *Server) serverInfo(sdk bool) []byte {
	m := serverInfo{Op: "serverInfo", Name: s.o.Name, Capabilities: []string{CapTime}, Metadata: s.o.Metadata, SessionID: s.session}
	if s.o.Playback != nil && sdk {
		start, end := s.o.Playback.Range()
		m.Capabilities = append(m.Capabilities, CapPlaybackControl)
		m.DataStartTime, m.DataEndTime = toStamp(start), toStamp(end)
	}
	return mustJSON(m)
}

// ServeHTTP accepts a WebSocket connection and serves it until it closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sub := pickSubprotocol(r.Header.Values("Sec-WebSocket-Protocol"))
	if sub == "" {
		s.refused.Add(1)
		http.Error(w, "this is a Foxglove WebSocket server: ask for subprotocol "+SubprotocolSDK+" or "+SubprotocolV1+
			" (Sec-WebSocket-Protocol); open it in Foxglove with 'Open connection', Foxglove WebSocket", http.StatusBadRequest)
		return
	}
	s.mu.RLock()
	full, closed := len(s.clients) >= s.o.MaxClients, s.closed
	s.mu.RUnlock()
	if full || closed {
		s.refused.Add(1)
		http.Error(w, fmt.Sprintf("the server serves %d clients at most (or is stopping)", s.o.MaxClients), http.StatusServiceUnavailable)
		return
	}
	// Any origin, as the Foxglove SDK's servers: the Foxglove web app
	// connects from its own origin. The listen address (127.0.0.1 by
	// default) says who can connect (docs/viewing.md).
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{sub}, InsecureSkipVerify: true})
	if err != nil {
		s.refused.Add(1)
		return // Accept answered the request
	}
	conn.SetReadLimit(s.o.ReadLimit)
	s.conns.Add(1)
	c := newClient(s, conn, r.RemoteAddr, sub)
	if !s.register(c) {
		conn.Close(websocket.StatusTryAgainLater, "server full or stopping")
		return
	}
	defer func() {
		s.unregister(c)
		if s.o.OnClose != nil {
			c.mu.Lock()
			reason := c.reason
			c.mu.Unlock()
			s.o.OnClose(c.stats(), reason)
		}
	}()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); c.writeLoop(ctx) }()
	c.readLoop(ctx)
	c.shut()
	cancel()
	<-done
	conn.CloseNow()
}

// pickSubprotocol picks the subprotocol of a handshake's offers: the
// SDK's, else ws-protocol's, else none.
func pickSubprotocol(headers []string) string {
	has := map[string]bool{}
	for _, h := range headers {
		for _, p := range strings.Split(h, ",") {
			has[strings.TrimSpace(p)] = true
		}
	}
	for _, p := range []string{SubprotocolSDK, SubprotocolV1} {
		if has[p] {
			return p
		}
	}
	return ""
}

// register adds c and queues its first messages: serverInfo, the channels
// and (foxglove.sdk.v1 with playback) the playback state, before any
// channel added later.
func (s *Server) register(c *client) bool {
	var st PlaybackState
	if s.o.Playback != nil && c.sdk {
		st = s.o.Playback.State()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.clients) >= s.o.MaxClients {
		return false
	}
	c.control(websocket.MessageText, s.serverInfo(c.sdk))
	if len(s.fchans) > 0 {
		var chs []Advertised
		for _, f := range s.fchans {
			chs = append(chs, advertisement(f.id, f.topic, f.schema, f.md))
		}
		c.control(websocket.MessageText, marshalAdvertise(chs))
	}
	if s.o.Playback != nil && c.sdk {
		c.control(websocket.MessageBinary, AppendPlaybackState(nil, st))
	}
	s.clients[c] = true
	return true
}

func (s *Server) unregister(c *client) {
	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
	c.unsubscribeAll()
}

// channel returns the Foxglove channel of id, or nil.
func (s *Server) channel(id uint64) *fchannel {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fchans[id]
}

// Serve serves WebSocket connections on l until ctx ends, then closes
// every connection.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("foxws: serve %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.closed = true
	for c := range s.clients {
		c.shut()
	}
	s.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	hs.Shutdown(sctx) // the connections are hijacked: it closes the listener
	return nil
}

// ClientStats is one client's figures.
type ClientStats struct {
	Addr          string
	Subprotocol   string
	Subscriptions []string // topics, sorted
	SentBytes     uint64
	SentMessages  uint64
	Dropped       uint64            // messages dropped for this client
	DroppedFrames uint64            // of which frames
	DroppedBy     map[string]uint64 // per topic
	QueuedBytes   int
}

// Stats is the server's state now.
type Stats struct {
	Clients  []ClientStats // by address
	Channels int           // Foxglove channels advertised
	Records  uint64        // records written to the server
	Accepted uint64        // connections accepted, ever
	Refused  uint64        // connections refused (no subprotocol, full)
}

// Stats returns a snapshot.
func (s *Server) Stats() Stats {
	s.mu.RLock()
	st := Stats{Channels: len(s.fchans), Records: s.received.Load(), Accepted: s.conns.Load(), Refused: s.refused.Load()}
	for c := range s.clients {
		st.Clients = append(st.Clients, c.stats())
	}
	s.mu.RUnlock()
	sort.Slice(st.Clients, func(i, j int) bool { return st.Clients[i].Addr < st.Clients[j].Addr })
	return st
}
