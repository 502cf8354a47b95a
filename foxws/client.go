package foxws

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/coder/websocket"
)

// client is one connection: its subscriptions, its queues and two
// goroutines, a reader (requests) and a writer (the queues, in order:
// control messages first, then data by age).
type client struct {
	s    *Server
	conn *websocket.Conn
	addr string
	sub  string
	sdk  bool

	wake chan struct{} // the writer has something to do (capacity 1)

	mu      sync.Mutex
	ctl     []ctlMsg
	q       *queue
	subs    map[uint64]uint32    // channel id → subscription id
	bySub   map[uint32]*fchannel // subscription id → channel
	closing bool                 // shut: the writer stops
	reason  string               // why the server closes it
	// figures
	sentBytes, sentMsgs uint64
	dropped, droppedF   uint64
	droppedBy           map[string]uint64
}

type ctlMsg struct {
	typ  websocket.MessageType
	body []byte
}

func newClient(s *Server, conn *websocket.Conn, addr, sub string) *client {
	c := &client{s: s, conn: conn, addr: addr, sub: sub, sdk: sub == SubprotocolSDK, wake: make(chan struct{}, 1),
		subs: map[uint64]uint32{}, bySub: map[uint32]*fchannel{}, droppedBy: map[string]uint64{}}
	c.q = newQueue(s.o.QueueBytes, s.o.QueueMessages, c.countDrop)
	return c
}

// countDrop books a dropped entry; c.mu held.
func (c *client) countDrop(e *entry) {
	if e.ch == nil {
		return // a time message: the next one says the same
	}
	c.dropped++
	if e.ch.bulk {
		c.droppedF++
	}
	c.droppedBy[e.ch.topic]++
}

func (c *client) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// control queues a control message; a client too far behind to take one
// more is closed (it cannot be shown the channels right).
func (c *client) control(typ websocket.MessageType, body []byte) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	if len(c.ctl) >= c.s.o.ControlMessages {
		c.closeLocked(fmt.Sprintf("%d control messages queued: the client does not read", len(c.ctl)))
		c.mu.Unlock()
		return
	}
	c.ctl = append(c.ctl, ctlMsg{typ, body})
	c.mu.Unlock()
	c.signal()
}

// data queues e if the client is subscribed to its channel (or it is a
// time message).
func (c *client) data(e entry, bulk bool) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	if e.ch != nil {
		if _, ok := c.subs[e.ch.id]; !ok {
			c.mu.Unlock()
			return
		}
	}
	c.q.push(e, bulk)
	c.mu.Unlock()
	c.signal()
}

func (c *client) flush() {
	c.mu.Lock()
	c.q.clear()
	c.mu.Unlock()
}

// closeLocked marks the client closing for reason; c.mu held.
func (c *client) closeLocked(reason string) {
	if !c.closing {
		c.closing, c.reason = true, reason
		c.q.clear()
		c.ctl = nil
	}
	c.signal()
}

func (c *client) shut() {
	c.mu.Lock()
	c.closeLocked("")
	c.mu.Unlock()
}

// next takes the next message to write: control first, then data. ok is
// false when there is nothing (or the client closes: done).
func (c *client) next(buf []byte) (typ websocket.MessageType, head, body []byte, ok, done bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return 0, nil, nil, false, true
	}
	if len(c.ctl) > 0 {
		m := c.ctl[0]
		c.ctl[0] = ctlMsg{}
		c.ctl = c.ctl[1:]
		return m.typ, nil, m.body, true, false
	}
	for {
		e, ok := c.q.pop()
		if !ok {
			return 0, nil, nil, false, false
		}
		if e.ch == nil {
			return websocket.MessageBinary, nil, e.body, true, false
		}
		id, subscribed := c.subs[e.ch.id]
		if !subscribed {
			continue // unsubscribed since it was queued
		}
		return websocket.MessageBinary, appendMessageDataHead(buf[:0], id, e.logTime), e.body, true, false
	}
}

// smallMessage is the size below which a message is copied into one
// buffer and written as one frame; larger ones are written as two frames
// of one message (head, then the shared bytes), without a copy.
const smallMessage = 64 << 10

// writeLoop writes the client's queues until it closes or a write fails
// or stalls past WriteTimeout.
func (c *client) writeLoop(ctx context.Context) {
	var head [messageDataHead]byte
	var buf []byte
	for {
		typ, h, body, ok, done := c.next(head[:0])
		if done {
			c.mu.Lock()
			reason := c.reason
			c.mu.Unlock()
			if reason != "" {
				wctx, cancel := context.WithTimeout(ctx, c.s.o.WriteTimeout)
				c.conn.Write(wctx, websocket.MessageText, marshalStatus(LevelError, "vrlog view closes this connection: "+reason, ""))
				cancel()
				c.conn.Close(websocket.StatusPolicyViolation, "client too slow")
			}
			return
		}
		if !ok {
			select {
			case <-c.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		wctx, cancel := context.WithTimeout(ctx, c.s.o.WriteTimeout)
		var err error
		if len(h)+len(body) <= smallMessage {
			buf = append(append(buf[:0], h...), body...)
			err = c.conn.Write(wctx, typ, buf)
		} else {
			err = c.writeParts(wctx, typ, h, body)
		}
		cancel()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				c.mu.Lock()
				c.closeLocked(fmt.Sprintf("took nothing for %v", c.s.o.WriteTimeout))
				c.mu.Unlock()
			}
			c.conn.CloseNow() // the reader ends too
			return
		}
		c.mu.Lock()
		c.sentBytes += uint64(len(h) + len(body))
		c.sentMsgs++
		c.mu.Unlock()
	}
}

// writeParts writes one message as head then body.
func (c *client) writeParts(ctx context.Context, typ websocket.MessageType, head, body []byte) error {
	w, err := c.conn.Writer(ctx, typ)
	if err != nil {
		return err
	}
	if len(head) > 0 {
		if _, err := w.Write(head); err != nil {
			return err
		}
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	return w.Close()
}

// readLoop reads and answers the client's requests until the connection
// ends; a bad request gets an error status and the connection goes on.
func (c *client) readLoop(ctx context.Context) {
	for {
		typ, data, err := c.conn.Read(ctx)
		if err != nil {
			return // closed, gone, or too big (closed with 1009 by the library)
		}
		var req Request
		if typ == websocket.MessageText {
			req, err = ParseText(data)
		} else {
			req, err = ParseBinary(data, c.sdk)
		}
		if err != nil {
			c.status(LevelError, err.Error())
			continue
		}
		c.handle(req)
	}
}

func (c *client) status(level int, msg string) {
	c.control(websocket.MessageText, marshalStatus(level, msg, ""))
}

// handle carries out one parsed request.
func (c *client) handle(req Request) {
	switch req.Kind {
	case KindSubscribe:
		n := 0
		for _, sb := range req.Subscriptions {
			if err := c.subscribe(sb); err != nil {
				c.status(LevelError, err.Error())
				continue
			}
			n++
		}
		if n > 0 && c.s.o.OnSubscribe != nil {
			c.s.o.OnSubscribe(c.sdk)
		}
	case KindUnsubscribe:
		for _, id := range req.SubscriptionIDs {
			if !c.unsubscribe(id) {
				c.status(LevelWarning, fmt.Sprintf("unsubscribe: no subscription %d", id))
			}
		}
	case KindPlayback:
		pb := c.s.o.Playback
		if pb == nil {
			c.status(LevelError, "playback control request: this server is live (no playbackControl capability)")
			return
		}
		st := pb.Control(req.Playback)
		st.RequestID = req.Playback.RequestID
		msg := AppendPlaybackState(nil, st)
		c.s.mu.RLock()
		for o := range c.s.clients {
			if o.sdk {
				o.control(websocket.MessageBinary, msg)
			}
		}
		c.s.mu.RUnlock()
	}
}

// subscribe adds one subscription; errors say why it was refused.
func (c *client) subscribe(sb Subscription) error {
	f := c.s.channel(sb.ChannelID)
	if f == nil {
		return fmt.Errorf("subscribe: unknown channel %d", sb.ChannelID)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.subs[f.id]; dup {
		return fmt.Errorf("subscribe: already subscribed to channel %d (%s)", f.id, f.topic)
	}
	if _, dup := c.bySub[sb.ID]; dup {
		return fmt.Errorf("subscribe: subscription id %d already in use", sb.ID)
	}
	c.subs[f.id], c.bySub[sb.ID] = sb.ID, f
	f.subs.Add(1)
	return nil
}

func (c *client) unsubscribe(id uint32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.bySub[id]
	if !ok {
		return false
	}
	delete(c.bySub, id)
	delete(c.subs, f.id)
	f.subs.Add(-1)
	return true
}

func (c *client) unsubscribeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, f := range c.bySub {
		f.subs.Add(-1)
		delete(c.bySub, id)
		delete(c.subs, f.id)
	}
}

func (c *client) stats() ClientStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ClientStats{Addr: c.addr, Subprotocol: c.sub, SentBytes: c.sentBytes, SentMessages: c.sentMsgs,
		Dropped: c.dropped, DroppedFrames: c.droppedF, QueuedBytes: c.q.bytes, DroppedBy: map[string]uint64{}}
	for _, f := range c.bySub {
		st.Subscriptions = append(st.Subscriptions, f.topic)
	}
	sort.Strings(st.Subscriptions)
	for k, v := range c.droppedBy {
		st.DroppedBy[k] = v
	}
	return st
}
