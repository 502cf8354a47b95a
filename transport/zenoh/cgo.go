//go:build cgo

package zenoh

/*
#cgo CFLAGS: -I${SRCDIR}/../../native/include
#cgo LDFLAGS: ${SRCDIR}/../../native/target/release/libvrlog_native.a -ldl -lgcc_s -lutil -lrt -lpthread -lm -lc
#include <stdlib.h>
#include "vrlog_native.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// nativeError carries the native library's message and matches a sentinel.
type nativeError struct {
	msg      string
	sentinel error
}

func (e *nativeError) Error() string { return e.msg }
func (e *nativeError) Unwrap() error { return e.sentinel }

// rustLoc matches the source location zenoh appends to its error messages.
var rustLoc = regexp.MustCompile(` at /\S+\.rs:\d+\.?`)

func toErr(code C.int, cerr *C.char) error {
	msg := "zenoh: native call failed"
	if cerr != nil {
		msg = rustLoc.ReplaceAllString(C.GoString(cerr), "")
		C.vr_string_free(cerr)
	}
	switch code {
	case C.VR_ERR_INVALID:
		return &nativeError{msg, ErrInvalid}
	case C.VR_ERR_CLOSED:
		return &nativeError{msg, ErrClosed}
	default:
		return &nativeError{msg, ErrNative}
	}
}

// Session is an open zenoh session. Its methods are safe for concurrent use.
type Session struct {
	mu     sync.RWMutex
	h      *C.vr_zsession
	closed bool
	zid    string
}

func (c Config) overrides() ([][2]string, error) {
	var kv [][2]string
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch c.Mode {
	case ModeDefault:
	case ModePeer, ModeClient:
		kv = append(kv, [2]string{"mode", js(string(c.Mode))})
	default:
		return nil, fmt.Errorf("zenoh: mode %q: want peer or client: %w", c.Mode, ErrInvalid)
	}
	if c.Connect != nil {
		kv = append(kv, [2]string{"connect/endpoints", js(c.Connect)})
	}
	if c.Listen != nil {
		kv = append(kv, [2]string{"listen/endpoints", js(c.Listen)})
	}
	if c.DisableMulticastScouting {
		kv = append(kv, [2]string{"scouting/multicast/enabled", "false"})
	}
	if c.Timestamping {
		kv = append(kv, [2]string{"timestamping/enabled", "true"})
	}
	if c.ConnectTimeout > 0 {
		kv = append(kv,
			[2]string{"connect/timeout_ms", fmt.Sprint(c.ConnectTimeout.Milliseconds())},
			[2]string{"connect/exit_on_failure", "true"})
	}
	keys := make([]string, 0, len(c.Options))
	for k := range c.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kv = append(kv, [2]string{k, c.Options[k]})
	}
	return kv, nil
}

// Open opens a session. A bad endpoint, key or config file fails here with
// an error matching ErrInvalid (or ErrNative for a runtime failure such as a
// port in use or an unreachable endpoint with ConnectTimeout set).
func Open(cfg Config) (*Session, error) {
	kv, err := cfg.overrides()
	if err != nil {
		return nil, err
	}
	ks := make([]*C.char, len(kv)+1)
	vs := make([]*C.char, len(kv)+1)
	for i, p := range kv {
		ks[i] = C.CString(p[0])
		vs[i] = C.CString(p[1])
	}
	defer func() {
		for i := range kv {
			C.free(unsafe.Pointer(ks[i]))
			C.free(unsafe.Pointer(vs[i]))
		}
	}()
	var cf *C.char
	if cfg.ConfigFile != "" {
		cf = C.CString(cfg.ConfigFile)
		defer C.free(unsafe.Pointer(cf))
	}
	// C memory for the pointer arrays (cgo forbids passing Go memory that holds pointers).
	n := len(kv)
	cks := (**C.char)(C.malloc(C.size_t(n+1) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	cvs := (**C.char)(C.malloc(C.size_t(n+1) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(cks))
	defer C.free(unsafe.Pointer(cvs))
	copy(unsafe.Slice(cks, n+1), ks)
	copy(unsafe.Slice(cvs, n+1), vs)
	var h *C.vr_zsession
	var cerr *C.char
	if rc := C.vr_zsession_open(cf, cks, cvs, C.size_t(n), &h, &cerr); rc != C.VR_OK {
		return nil, toErr(rc, cerr)
	}
	var id [16]C.uint8_t
	l := C.vr_zsession_zid(h, &id[0])
	return &Session{h: h, zid: zidString(C.GoBytes(unsafe.Pointer(&id[0]), C.int(l)))}, nil
}

// zidString prints a zenoh id as zenoh does: the hex of its little-endian
// bytes reversed, without leading zeros.
func zidString(le []byte) string {
	var sb strings.Builder
	for i := len(le) - 1; i >= 0; i-- {
		fmt.Fprintf(&sb, "%02x", le[i])
	}
	return strings.TrimLeft(sb.String(), "0")
}

// ZID is the session's zenoh id in zenoh's hex notation.
func (s *Session) ZID() string { return s.zid }

// Connected reports the routers and peers the session is connected to right
// now. A client that lost its router reports none until zenoh has
// reconnected it, which it does by itself (connect/retry in the config).
func (s *Session) Connected() (Connections, error) {
	var c Connections
	err := s.use(func(h *C.vr_zsession) error {
		c.Routers = connectedIDs(h, 1)
		c.Peers = connectedIDs(h, 0)
		return nil
	})
	return c, err
}

// ConfigValue is the session's effective configuration value at key (a
// zenoh config path, e.g. "transport/auth/usrpwd/user") as JSON: what the
// configuration file, the overrides and zenoh's defaults made it. A key
// the configuration does not have matches ErrInvalid.
func (s *Session) ConfigValue(key string) (string, error) {
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	var v string
	err := s.use(func(h *C.vr_zsession) error {
		var out, cerr *C.char
		if rc := C.vr_zsession_config_get(h, ck, &out, &cerr); rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		v = C.GoString(out)
		C.vr_string_free(out)
		return nil
	})
	return v, err
}

func connectedIDs(h *C.vr_zsession, routers C.uint8_t) []string {
	buf := make([]C.uint8_t, 16*8)
	n := int(C.vr_zsession_connected(h, routers, &buf[0], 8))
	if n > 8 {
		buf = make([]C.uint8_t, 16*n)
		n = min(n, int(C.vr_zsession_connected(h, routers, &buf[0], C.size_t(n))))
	}
	ids := make([]string, 0, n)
	for i := range n {
		b := C.GoBytes(unsafe.Pointer(&buf[16*i]), 16)
		ids = append(ids, zidString(b))
	}
	return ids
}

// use runs f with the native handle unless the session is closed.
func (s *Session) use(f func(h *C.vr_zsession) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return f(s.h)
}

// Close closes the session. Subscribers, publishers and queryables declared
// on it should be closed first; their own Close stays safe afterwards.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	C.vr_zsession_close(s.h)
	s.h = nil
	return nil
}

// Subscriber receives the samples of one key expression (wildcards allowed).
type Subscriber struct {
	key      string
	opts     SubscriberOptions
	mu       sync.RWMutex // read: a call into the handle; write: free
	recvMu   sync.Mutex   // one Receive at a time (the batch belongs to the handle)
	h        *C.vr_zsub
	freed    bool
	final    [2]uint64 // Dropped and Received at Close
	shutOnce sync.Once
	lastKey  string
	lastEnc  string
}

// Subscribe declares a subscriber on keyexpr.
func (s *Session) Subscribe(keyexpr string, opts SubscriberOptions) (*Subscriber, error) {
	opts = opts.withDefaults()
	ck := C.CString(keyexpr)
	defer C.free(unsafe.Pointer(ck))
	var h *C.vr_zsub
	err := s.use(func(sh *C.vr_zsession) error {
		var cerr *C.char
		if rc := C.vr_zsub_declare(sh, ck, C.size_t(opts.QueueLen), C.size_t(opts.QueueBytes), &h, &cerr); rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Subscriber{key: keyexpr, opts: opts, h: h}, nil
}

// Key is the subscribed key expression.
func (sub *Subscriber) Key() string { return sub.key }

// receiveSlice is how long one native wait lasts before Receive re-checks its context.
const receiveSlice = 100 * time.Millisecond

// Receive appends at least one sample to dst and returns it; it blocks until
// samples arrive, ctx is done (ctx.Err()) or the subscriber is closed
// (ErrClosed, after the queued samples were delivered).
func (sub *Subscriber) Receive(ctx context.Context, dst []Sample) ([]Sample, error) {
	sub.recvMu.Lock()
	defer sub.recvMu.Unlock()
	sub.mu.RLock()
	defer sub.mu.RUnlock()
	if sub.freed {
		return dst, ErrClosed
	}
	stop := context.AfterFunc(ctx, func() {
		sub.mu.RLock()
		if !sub.freed {
			C.vr_zsub_wake(sub.h)
		}
		sub.mu.RUnlock()
	})
	defer stop()
	for {
		if err := ctx.Err(); err != nil {
			return dst, err
		}
		timeout := receiveSlice
		if dl, ok := ctx.Deadline(); ok {
			if d := time.Until(dl); d < timeout {
				timeout = max(d, 0)
			}
		}
		var descs *C.vr_zsample
		var n C.size_t
		rc := C.vr_zsub_next_batch(sub.h, C.size_t(sub.opts.MaxBatch), C.int64_t(timeout.Nanoseconds()), &descs, &n)
		switch rc {
		case C.VR_OK:
			return sub.copyOut(dst, unsafe.Slice(descs, int(n))), nil
		case C.VR_ERR_CLOSED:
			return dst, ErrClosed
		}
	}
}

const arenaLimit = 64 << 10 // payloads above this get their own allocation

func (sub *Subscriber) copyOut(dst []Sample, ds []C.vr_zsample) []Sample {
	// One arena for the small byte fields of the whole batch.
	total := 0
	for i := range ds {
		d := &ds[i]
		if int(d.payload_len) <= arenaLimit {
			total += int(d.payload_len)
		}
		total += int(d.attachment_len) + int(d.ts_id_len) + int(d.source_zid_len) + 4
	}
	arena := make([]byte, 0, total)
	take := func(p *C.uint8_t, n int) []byte {
		if n == 0 {
			return arena[len(arena):len(arena):len(arena)]
		}
		start := len(arena)
		arena = append(arena, unsafe.Slice((*byte)(unsafe.Pointer(p)), n)...)
		return arena[start:len(arena):len(arena)]
	}
	for i := range ds {
		d := &ds[i]
		var s Sample
		kb := unsafe.Slice((*byte)(unsafe.Pointer(d.key)), int(d.key_len))
		if string(kb) != sub.lastKey {
			sub.lastKey = string(kb)
		}
		s.Key = sub.lastKey
		eb := unsafe.Slice((*byte)(unsafe.Pointer(d.encoding)), int(d.encoding_len))
		if string(eb) != sub.lastEnc {
			sub.lastEnc = string(eb)
		}
		s.Encoding = sub.lastEnc
		s.RecvWallNs = int64(d.recv_wall_ns)
		s.RecvMonoNs = int64(d.recv_mono_ns)
		fillCommon(&s, d, take)
		dst = append(dst, s)
	}
	return dst
}

// fillCommon copies the payload, attachment, timestamp and source of d.
func fillCommon(s *Sample, d *C.vr_zsample, take func(*C.uint8_t, int) []byte) {
	if n := int(d.payload_len); n > arenaLimit {
		s.Payload = make([]byte, n)
		copy(s.Payload, unsafe.Slice((*byte)(unsafe.Pointer(d.payload)), n))
	} else {
		s.Payload = take(d.payload, n)
	}
	if d.flags&C.VR_ZF_ATTACHMENT != 0 {
		s.Attachment = take(d.attachment, int(d.attachment_len))
	}
	if d.flags&C.VR_ZF_TIMESTAMP != 0 {
		s.HasTimestamp = true
		s.Timestamp = Timestamp{NTP64: uint64(d.ts_ntp64), ID: take(&d.ts_id[0], int(d.ts_id_len))}
	}
	if d.flags&C.VR_ZF_SOURCE != 0 {
		s.HasSource = true
		id := take(&d.source_zid[0], int(d.source_zid_len))
		eid := uint32(d.source_eid)
		s.SourceID = append(id, byte(eid), byte(eid>>8), byte(eid>>16), byte(eid>>24))
		s.SourceSN = uint64(d.source_sn)
	}
	if d.flags&C.VR_ZF_DELETE != 0 {
		s.Kind = KindDelete
	}
}

func (sub *Subscriber) stats() (dropped, received uint64) {
	sub.mu.RLock()
	defer sub.mu.RUnlock()
	if sub.freed {
		return sub.final[0], sub.final[1]
	}
	var d, r C.uint64_t
	C.vr_zsub_stats(sub.h, &d, &r)
	return uint64(d), uint64(r)
}

// Dropped counts samples lost because the native queue was full (after
// Close: the final count).
func (sub *Subscriber) Dropped() uint64 { d, _ := sub.stats(); return d }

// Received counts samples that reached the native callback (dropped included).
func (sub *Subscriber) Received() uint64 { _, r := sub.stats(); return r }

// Close undeclares the subscriber, wakes a blocked Receive and frees
// everything. Safe to call more than once and after the session closed.
func (sub *Subscriber) Close() error {
	sub.mu.RLock()
	if !sub.freed {
		sub.shutOnce.Do(func() { C.vr_zsub_shutdown(sub.h) })
	}
	sub.mu.RUnlock()
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.freed {
		return nil
	}
	sub.freed = true
	var d, r C.uint64_t
	C.vr_zsub_stats(sub.h, &d, &r)
	sub.final = [2]uint64{uint64(d), uint64(r)} // Dropped and Received keep their last counts
	C.vr_zsub_free(sub.h)
	sub.h = nil
	return nil
}

// Publisher publishes on one key.
type Publisher struct {
	mu    sync.RWMutex
	h     *C.vr_zpub
	token *Token
	key   string
}

// Publisher declares a publisher on key.
func (s *Session) Publisher(key string, opts PublisherOptions) (*Publisher, error) {
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	ce := C.CString(opts.Encoding)
	defer C.free(unsafe.Pointer(ce))
	b := func(v bool) C.int {
		if v {
			return 1
		}
		return 0
	}
	if opts.Priority < 0 || opts.Priority > 7 {
		return nil, fmt.Errorf("zenoh: priority %d: want 1..7 or 0 for the default: %w", opts.Priority, ErrInvalid)
	}
	var h *C.vr_zpub
	err := s.use(func(sh *C.vr_zsession) error {
		var cerr *C.char
		rc := C.vr_zpub_declare(sh, ck, ce, b(opts.Block), b(opts.Express), C.int(opts.Priority), b(opts.SourceInfo), &h, &cerr)
		if rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p := &Publisher{h: h, key: key}
	if opts.Liveliness {
		t, err := s.DeclareToken(key)
		if err != nil {
			C.vr_zpub_free(h)
			return nil, err
		}
		p.token = t
	}
	return p, nil
}

// Put publishes payload; attachment nil sends none.
func (p *Publisher) Put(payload, attachment []byte) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.h == nil {
		return ErrClosed
	}
	pp, ap, has := putBuffers(payload, attachment)
	var cerr *C.char
	if rc := C.vr_zpub_put(p.h, pp, C.size_t(len(payload)), ap, C.size_t(len(attachment)), has, &cerr); rc != C.VR_OK {
		return toErr(rc, cerr)
	}
	return nil
}

// putBuffers points at payload and attachment for a put (nil attachment:
// none; empty: an empty one).
func putBuffers(payload, attachment []byte) (pp, ap *C.uint8_t, has C.int) {
	if len(payload) > 0 {
		pp = (*C.uint8_t)(unsafe.Pointer(&payload[0]))
	}
	if attachment != nil {
		has = 1
		if len(attachment) > 0 {
			ap = (*C.uint8_t)(unsafe.Pointer(&attachment[0]))
		}
	}
	return pp, ap, has
}

// PutAs publishes payload with the given source info instead of the
// publisher's own: sourceID as Sample.SourceID has it (the zenoh id, 1..16
// bytes, then the entity id, u32 little-endian) and sourceSN (zenoh's
// sequence numbers are 32 bits). A replay republishes what it recorded this
// way, so subscribers see the original publisher's identity and sequence.
func (p *Publisher) PutAs(payload, attachment, sourceID []byte, sourceSN uint64) error {
	zid, eid, err := splitSourceID(sourceID)
	if err != nil {
		return err
	}
	if sourceSN > math.MaxUint32 {
		return fmt.Errorf("zenoh: source sequence number %d exceeds 32 bits: %w", sourceSN, ErrInvalid)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.h == nil {
		return ErrClosed
	}
	pp, ap, has := putBuffers(payload, attachment)
	var cerr *C.char
	if rc := C.vr_zpub_put_as(p.h, pp, C.size_t(len(payload)), ap, C.size_t(len(attachment)), has,
		(*C.uint8_t)(unsafe.Pointer(&zid[0])), C.size_t(len(zid)), C.uint32_t(eid), C.uint64_t(sourceSN), &cerr); rc != C.VR_OK {
		return toErr(rc, cerr)
	}
	return nil
}

// Matching reports whether a subscriber matching the publisher's key is
// known to the session right now (zenoh's matching status: local and
// remote subscribers whose declarations reached it).
func (p *Publisher) Matching() (bool, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.h == nil {
		return false, ErrClosed
	}
	var m C.uint8_t
	var cerr *C.char
	if rc := C.vr_zpub_matching(p.h, &m, &cerr); rc != C.VR_OK {
		return false, toErr(rc, cerr)
	}
	return m != 0, nil
}

// Key is the publisher's key.
func (p *Publisher) Key() string { return p.key }

// Close undeclares the publisher (and its liveliness token).
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.h == nil {
		return nil
	}
	if p.token != nil {
		p.token.Close()
	}
	C.vr_zpub_free(p.h)
	p.h = nil
	return nil
}

// Queryable serves queries with a Go handler on its own goroutine.
type Queryable struct {
	mu    sync.RWMutex
	h     *C.vr_zqueryable
	freed bool
	done  chan struct{}
	stop  chan struct{}
}

// DeclareQueryable answers queries on key with handler; each reply it
// returns is sent, then the query is finalized. handler runs on one
// goroutine, one query at a time.
func (s *Session) DeclareQueryable(key string, handler func(Query) []Reply) (*Queryable, error) {
	return s.DeclareDeferredQueryable(key, func(q Query, p *Pending) { p.Reply(handler(q)...) })
}

// Pending is a query answered later: Reply sends the replies and
// finalizes the query, once, from any goroutine; later calls do nothing.
type Pending struct {
	once sync.Once
	h    *C.vr_zquery_handle
}

// Reply sends rs and finalizes the query (the querier's Get returns).
func (p *Pending) Reply(rs ...Reply) {
	p.once.Do(func() {
		for _, r := range rs {
			replyOne(p.h, r)
		}
		C.vr_zquery_free(p.h)
	})
}

// DeclareDeferredQueryable answers queries on key with handler, which
// gets each query with a Pending to answer now or later, from any
// goroutine (a snapshot replies once its file is written); the querier
// waits until then or until its own timeout. handler runs on one
// goroutine, one query at a time, and should return quickly: the next
// query waits for it. A Pending never answered leaks its query.
func (s *Session) DeclareDeferredQueryable(key string, handler func(Query, *Pending)) (*Queryable, error) {
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	var h *C.vr_zqueryable
	err := s.use(func(sh *C.vr_zsession) error {
		var cerr *C.char
		if rc := C.vr_zqbl_declare(sh, ck, 1, 1024, &h, &cerr); rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	q := &Queryable{h: h, done: make(chan struct{}), stop: make(chan struct{})}
	go q.serve(handler)
	return q, nil
}

func (q *Queryable) serve(handler func(Query, *Pending)) {
	defer close(q.done)
	for {
		select {
		case <-q.stop:
			return
		default:
		}
		var cq C.vr_zquery
		rc := C.vr_zqbl_next(q.h, C.int64_t(receiveSlice.Nanoseconds()), &cq)
		if rc == C.VR_ERR_CLOSED {
			return
		}
		if rc != C.VR_OK {
			continue
		}
		in := Query{
			Key:        C.GoStringN((*C.char)(unsafe.Pointer(cq.key)), C.int(cq.key_len)),
			Parameters: C.GoStringN((*C.char)(unsafe.Pointer(cq.params)), C.int(cq.params_len)),
			HasPayload: cq.has_payload != 0,
			RecvWallNs: int64(cq.recv_wall_ns),
			RecvMonoNs: int64(cq.recv_mono_ns),
		}
		if in.HasPayload {
			in.Payload = C.GoBytes(unsafe.Pointer(cq.payload), C.int(cq.payload_len))
		}
		handler(in, &Pending{h: cq.handle})
	}
}

func replyOne(h *C.vr_zquery_handle, r Reply) {
	ck := C.CString(r.Key)
	defer C.free(unsafe.Pointer(ck))
	ce := C.CString(r.Encoding)
	defer C.free(unsafe.Pointer(ce))
	var pp, ap *C.uint8_t
	if len(r.Payload) > 0 {
		pp = (*C.uint8_t)(unsafe.Pointer(&r.Payload[0]))
	}
	has := C.int(0)
	if r.Attachment != nil {
		has = 1
		if len(r.Attachment) > 0 {
			ap = (*C.uint8_t)(unsafe.Pointer(&r.Attachment[0]))
		}
	}
	isErr := C.int(0)
	if r.Err {
		isErr = 1
	}
	var cerr *C.char
	if rc := C.vr_zquery_reply(h, ck, pp, C.size_t(len(r.Payload)), ce, ap, C.size_t(len(r.Attachment)), has, isErr, &cerr); rc != C.VR_OK {
		toErr(rc, cerr) // the querier sees a missing reply; nothing to return it to
	}
}

// Close stops serving and undeclares the queryable.
func (q *Queryable) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.freed {
		return nil
	}
	q.freed = true
	close(q.stop)
	C.vr_zqbl_wake(q.h)
	<-q.done
	C.vr_zqbl_free(q.h)
	q.h = nil
	return nil
}

func repliesOut(r *C.vr_zreplies) []GetReply {
	var descs *C.vr_zsample
	n := C.vr_zreplies_items(r, &descs)
	ds := unsafe.Slice(descs, int(n))
	out := make([]GetReply, 0, len(ds))
	take := func(p *C.uint8_t, n int) []byte {
		return C.GoBytes(unsafe.Pointer(p), C.int(n))
	}
	for i := range ds {
		d := &ds[i]
		var g GetReply
		g.Err = d.flags&C.VR_ZF_ERROR != 0
		g.Key = C.GoStringN((*C.char)(unsafe.Pointer(d.key)), C.int(d.key_len))
		g.Encoding = C.GoStringN((*C.char)(unsafe.Pointer(d.encoding)), C.int(d.encoding_len))
		g.RecvWallNs = int64(d.recv_wall_ns)
		g.RecvMonoNs = int64(d.recv_mono_ns)
		fillCommon(&g.Sample, d, take)
		out = append(out, g)
	}
	return out
}

// Get queries selector (a key expression, optionally with ?parameters) and
// returns every reply that arrived within timeout. payload nil sends none.
// ctx is checked before the query; the wait itself is bounded by timeout.
func (s *Session) Get(ctx context.Context, selector string, payload []byte, timeout time.Duration) ([]GetReply, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	cs := C.CString(selector)
	defer C.free(unsafe.Pointer(cs))
	var pp *C.uint8_t
	has := C.int(0)
	if payload != nil {
		has = 1
		if len(payload) > 0 {
			pp = (*C.uint8_t)(unsafe.Pointer(&payload[0]))
		}
	}
	var out []GetReply
	err := s.use(func(sh *C.vr_zsession) error {
		var r *C.vr_zreplies
		var cerr *C.char
		if rc := C.vr_zget(sh, cs, pp, C.size_t(len(payload)), has, nil, C.uint64_t(timeout.Milliseconds()), &r, &cerr); rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		out = repliesOut(r)
		C.vr_zreplies_free(r)
		return nil
	})
	return out, err
}

// Token is a declared liveliness token.
type Token struct {
	mu sync.Mutex
	h  *C.vr_ztoken
}

// DeclareToken declares a liveliness token on key; it stays alive until Close
// (or the session ends), and LiveTokens on any session reaching it sees it.
func (s *Session) DeclareToken(key string) (*Token, error) {
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	var h *C.vr_ztoken
	err := s.use(func(sh *C.vr_zsession) error {
		var cerr *C.char
		if rc := C.vr_ztoken_declare(sh, ck, &h, &cerr); rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Token{h: h}, nil
}

// Close undeclares the token.
func (t *Token) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.h != nil {
		C.vr_ztoken_free(t.h)
		t.h = nil
	}
	return nil
}

// LiveTokens returns the keys of the liveliness tokens matching keyexpr.
func (s *Session) LiveTokens(keyexpr string, timeout time.Duration) ([]string, error) {
	ck := C.CString(keyexpr)
	defer C.free(unsafe.Pointer(ck))
	var keys []string
	err := s.use(func(sh *C.vr_zsession) error {
		var r *C.vr_zreplies
		var cerr *C.char
		if rc := C.vr_zliveliness_get(sh, ck, C.uint64_t(timeout.Milliseconds()), &r, &cerr); rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		for _, g := range repliesOut(r) {
			if !g.Err {
				keys = append(keys, g.Key)
			}
		}
		C.vr_zreplies_free(r)
		return nil
	})
	sort.Strings(keys)
	return keys, err
}

// LivePublishers finds the keys being published under keyexpr, for
// `record --all`. zenoh cannot list publishers, so this returns the union of
// (1) liveliness tokens matching keyexpr (vrlog publishers with
// PublisherOptions.Liveliness and the peers declare one on their key) and
// (2) the keys of samples that arrive on a subscriber to keyexpr during
// window. A publisher that declares no token and stays silent for the whole
// window is not found.
func (s *Session) LivePublishers(ctx context.Context, keyexpr string, window time.Duration) ([]string, error) {
	sub, err := s.Subscribe(keyexpr, SubscriberOptions{QueueLen: 4096, MaxBatch: 4096})
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	seen := map[string]bool{}
	tokens, err := s.LiveTokens(keyexpr, min(window, time.Second))
	if err != nil {
		return nil, err
	}
	for _, k := range tokens {
		seen[k] = true
	}
	wctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	var buf []Sample
	for {
		buf, err = sub.Receive(wctx, buf[:0])
		for _, smp := range buf {
			seen[smp.Key] = true
		}
		if err != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}
