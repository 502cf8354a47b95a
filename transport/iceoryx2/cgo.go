//go:build cgo

package iceoryx2

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
	"sync"
	"time"
	"unsafe"
)

type nativeError struct {
	msg      string
	sentinel error
}

func (e *nativeError) Error() string { return e.msg }
func (e *nativeError) Unwrap() error { return e.sentinel }

func toErr(code C.int, cerr *C.char) error {
	msg := "iceoryx2: native call failed"
	if cerr != nil {
		msg = C.GoString(cerr)
		C.vr_string_free(cerr)
	}
	switch code {
	case C.VR_ERR_INVALID:
		return &nativeError{msg, ErrInvalid}
	case C.VR_ERR_NOT_FOUND:
		return &nativeError{msg, ErrServiceNotFound}
	case C.VR_ERR_INCOMPATIBLE:
		return &nativeError{msg, ErrIncompatible}
	case C.VR_ERR_CLOSED:
		return &nativeError{msg, ErrClosed}
	}
	return &nativeError{msg, ErrNative}
}

// Node is an iceoryx2 node (ipc, thread-safe variant). Safe for concurrent use.
type Node struct {
	mu   sync.RWMutex
	h    *C.vr_inode
	name string
}

// NewNode creates a node; name may be empty. iceoryx2's own signal handling
// is disabled (Go handles signals).
func NewNode(name string) (*Node, error) {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var h *C.vr_inode
	var cerr *C.char
	if rc := C.vr_inode_create(cn, &h, &cerr); rc != C.VR_OK {
		return nil, toErr(rc, cerr)
	}
	return &Node{h: h, name: name}, nil
}

func (n *Node) use(f func(h *C.vr_inode) error) error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.h == nil {
		return ErrClosed
	}
	return f(n.h)
}

// Close releases the node. Subscribers and publishers created from it keep
// working until their own Close.
func (n *Node) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.h != nil {
		C.vr_inode_free(n.h)
		n.h = nil
	}
	return nil
}

// CleanupDeadNodes removes the stale resources (shared memory, files,
// service registrations) left by nodes whose processes died, e.g. a
// publisher killed with SIGKILL, and returns how many nodes it cleaned and
// how many it could not (e.g. insufficient permissions).
func (n *Node) CleanupDeadNodes() (cleaned, failed int, err error) {
	err = n.use(func(h *C.vr_inode) error {
		var c, f C.uint64_t
		C.vr_inode_cleanup_dead(h, &c, &f)
		cleaned, failed = int(c), int(f)
		return nil
	})
	return cleaned, failed, err
}

type jsonType struct {
	Variant   string `json:"variant"`
	TypeName  string `json:"type_name"`
	Size      uint64 `json:"size"`
	Alignment uint64 `json:"alignment"`
}

type jsonService struct {
	Name                         string   `json:"name"`
	Payload                      jsonType `json:"payload"`
	UserHeader                   jsonType `json:"user_header"`
	MaxPublishers                int      `json:"max_publishers"`
	MaxSubscribers               int      `json:"max_subscribers"`
	MaxNodes                     int      `json:"max_nodes"`
	HistorySize                  int      `json:"history_size"`
	SubscriberMaxBufferSize      int      `json:"subscriber_max_buffer_size"`
	SubscriberMaxBorrowedSamples int      `json:"subscriber_max_borrowed_samples"`
	SafeOverflow                 bool     `json:"safe_overflow"`
}

func (j jsonType) detail() TypeDetail {
	v, _ := ParseTypeVariant(j.Variant)
	return TypeDetail{Variant: v, TypeName: j.TypeName, Size: j.Size, Alignment: j.Alignment}
}

func (j jsonService) info() ServiceInfo {
	so := j.SafeOverflow
	return ServiceInfo{
		Name:  j.Name,
		Types: TypeDetails{Payload: j.Payload.detail(), UserHeader: j.UserHeader.detail()},
		Config: ServiceConfig{
			MaxPublishers: j.MaxPublishers, MaxSubscribers: j.MaxSubscribers, MaxNodes: j.MaxNodes,
			HistorySize: j.HistorySize, SubscriberMaxBufferSize: j.SubscriberMaxBufferSize,
			SubscriberMaxBorrowedSamples: j.SubscriberMaxBorrowedSamples, SafeOverflow: &so,
		},
	}
}

func takeJSON(s *C.char, v any) error {
	defer C.vr_string_free(s)
	if err := json.Unmarshal([]byte(C.GoString(s)), v); err != nil {
		return fmt.Errorf("iceoryx2: decode service details: %v: %w", err, ErrNative)
	}
	return nil
}

// ListServices lists the publish-subscribe services of this host (of the
// node's iceoryx2 configuration).
func (n *Node) ListServices() ([]ServiceInfo, error) {
	var js []jsonService
	err := n.use(func(h *C.vr_inode) error {
		var out, cerr *C.char
		if rc := C.vr_inode_list_services(h, &out, &cerr); rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		return takeJSON(out, &js)
	})
	if err != nil {
		return nil, err
	}
	infos := make([]ServiceInfo, len(js))
	for i, j := range js {
		infos[i] = j.info()
	}
	return infos, nil
}

// ServiceDetails returns one service's static details (ErrServiceNotFound if absent).
func (n *Node) ServiceDetails(service string) (ServiceInfo, error) {
	cs := C.CString(service)
	defer C.free(unsafe.Pointer(cs))
	var j jsonService
	err := n.use(func(h *C.vr_inode) error {
		var out, cerr *C.char
		if rc := C.vr_inode_service_details(h, cs, &out, &cerr); rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		return takeJSON(out, &j)
	})
	if err != nil {
		return ServiceInfo{}, err
	}
	return j.info(), nil
}

// Subscriber receives the samples of one service, whatever its types.
type Subscriber struct {
	service  string
	info     ServiceInfo
	buffer   int
	opts     SubscriberOptions
	mu       sync.RWMutex
	recvMu   sync.Mutex
	h        *C.vr_isub
	freed    bool      // closed: no more Receive or native stats
	final    [2]uint64 // Dropped and Received at Close
	shutOnce sync.Once
	// lendMu guards lent and the native memory's release: the lent
	// samples' memory outlives Close until the last is released.
	lendMu  sync.Mutex
	lent    int
	release []C.uint32_t // scratch: the slots of a copied batch
	dropH   bool         // Close happened with samples lent: free at the last Release
}

// Subscribe opens an existing service with the types recorded in its static
// configuration (as `iox2 service record` does) and subscribes to it, with
// a buffer that fits the service's limit (see SubscriberOptions.BufferSize).
// A missing service (or one being created or removed) fails at once with
// ErrServiceNotFound.
func (n *Node) Subscribe(service string, opts SubscriberOptions) (*Subscriber, error) {
	opts = opts.withDefaults()
	info, err := n.ServiceDetails(service)
	if err != nil {
		return nil, err
	}
	buffer := info.Config.SubscriberMaxBufferSize
	if opts.BufferSize > 0 && opts.BufferSize < buffer {
		buffer = opts.BufferSize
	}
	cs := C.CString(service)
	defer C.free(unsafe.Pointer(cs))
	var h *C.vr_isub
	err = n.use(func(nh *C.vr_inode) error {
		var cerr *C.char
		rc := C.vr_isub_create(nh, cs, C.size_t(buffer), C.size_t(opts.QueueLen),
			C.size_t(opts.QueueBytes), C.int64_t(opts.PollInterval.Nanoseconds()), &h, &cerr)
		if rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Subscriber{service: service, info: info, buffer: buffer, opts: opts, h: h}, nil
}

// Service is the subscribed service's name.
func (s *Subscriber) Service() string { return s.service }

// Types are the service's type details (what a replay publisher needs).
func (s *Subscriber) Types() TypeDetails { return s.info.Types }

// Info is the service's static configuration, as read when subscribing.
func (s *Subscriber) Info() ServiceInfo { return s.info }

// BufferSize is the iceoryx2 buffer this subscriber got: the requested size
// or the service's subscriber_max_buffer_size, whichever is smaller.
func (s *Subscriber) BufferSize() int { return s.buffer }

const receiveSlice = 100 * time.Millisecond

// Receive appends at least one sample to dst and returns it; it blocks until
// samples arrive, ctx is done (ctx.Err()) or the subscriber is closed (ErrClosed).
func (s *Subscriber) Receive(ctx context.Context, dst []Sample) ([]Sample, error) {
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.freed {
		return dst, ErrClosed
	}
	stop := context.AfterFunc(ctx, func() {
		s.mu.RLock()
		if !s.freed {
			C.vr_isub_wake(s.h)
		}
		s.mu.RUnlock()
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
		var descs *C.vr_isample
		var n C.size_t
		rc := C.vr_isub_next_batch(s.h, C.size_t(s.opts.MaxBatch), C.int64_t(timeout.Nanoseconds()), &descs, &n)
		switch rc {
		case C.VR_OK:
			ds := unsafe.Slice(descs, int(n))
			if s.opts.Lend {
				s.lendMu.Lock()
				s.lent += len(ds)
				s.lendMu.Unlock()
			}
			s.release = s.release[:0]
			for i := range ds {
				d := &ds[i]
				hl, pl := int(d.header_len), int(d.payload_len)
				// header, payload and publisher id lie back to back in the slot
				mem := unsafe.Slice((*byte)(unsafe.Pointer(d.header)), hl+pl+16)
				x := Sample{RecvWallNs: int64(d.recv_wall_ns), RecvMonoNs: int64(d.recv_mono_ns),
					Drain: uint64(d.drain), DrainIndex: uint32(d.drain_index), DroppedBefore: uint32(d.dropped_before),
					PrevDrainLen: uint32(d.prev_drain_len), AfterHold: d.after_hold != 0}
				if s.opts.Lend {
					x.slot = uint32(d.slot) + 1
				} else {
					mem = append([]byte(nil), mem...)
					s.release = append(s.release, d.slot)
				}
				x.UserHeader, x.Payload, x.PublisherID = mem[:hl:hl], mem[hl:hl+pl:hl+pl], mem[hl+pl:]
				dst = append(dst, x)
			}
			if len(s.release) > 0 {
				C.vr_isub_release(s.h, &s.release[0], C.size_t(len(s.release)))
			}
			return dst, nil
		case C.VR_ERR_CLOSED:
			return dst, ErrClosed
		}
	}
}

func (s *Subscriber) stats() (dropped, received uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.freed {
		return s.final[0], s.final[1]
	}
	var d, r C.uint64_t
	C.vr_isub_stats(s.h, &d, &r)
	return uint64(d), uint64(r)
}

// DrainLen is the drain of the publisher's last delivered sample and how
// many of its samples that drain has taken so far, dropped ones included:
// once the publisher's stream is over and the buffer drained, the length of
// its last drain (Sample.PrevDrainLen for the end). 0, 0 for an unknown
// publisher or after Close.
func (s *Subscriber) DrainLen(publisherID []byte) (drain uint64, n uint32) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.freed || len(publisherID) != 16 {
		return 0, 0
	}
	var d C.uint64_t
	var l C.uint32_t
	C.vr_isub_drain_len(s.h, (*C.uint8_t)(unsafe.Pointer(&publisherID[0])), &d, &l)
	return uint64(d), uint32(l)
}

// lastError is the polling thread's last receive error ("" if none).
func (s *Subscriber) lastError() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.freed {
		return ""
	}
	e := C.vr_isub_last_error(s.h)
	if e == nil {
		return ""
	}
	defer C.vr_string_free(e)
	return C.GoString(e)
}

// Dropped counts samples lost because the native queue was full (after
// Close: the final count).
func (s *Subscriber) Dropped() uint64 { d, _ := s.stats(); return d }

// Received counts samples taken from the service (dropped included).
func (s *Subscriber) Received() uint64 { _, r := s.stats(); return r }

// SetHold decides what the polling thread does when no slot is free: by
// default it takes the sample and drops it (counted in Dropped); holding,
// it leaves samples in the service's buffer until a slot frees. With safe
// overflow the service then replaces the oldest, a loss Sample.Drain and
// DrainIndex locate exactly (a caller that knows the payload's seq can
// count it); without, the publisher waits or fails (its unable-to-deliver
// strategy), so hold only services with safe overflow.
func (s *Subscriber) SetHold(hold bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.freed {
		return
	}
	h := C.int32_t(0)
	if hold {
		h = 1
	}
	C.vr_isub_set_hold(s.h, h)
}

// Holding reports whether samples wait in the service's buffer right now
// for want of a slot (SetHold): what a caller ending a recording drains
// before it stops.
func (s *Subscriber) Holding() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return !s.freed && C.vr_isub_holding(s.h) != 0
}

// Release hands a lent sample's memory back (SubscriberOptions.Lend): its
// slices must not be used after. A sample in Go memory, or one released
// already, is left alone. Safe from any goroutine, also after Close.
func (s *Subscriber) Release(x *Sample) {
	if x.slot == 0 {
		return
	}
	slot := C.uint32_t(x.slot - 1)
	x.slot = 0
	s.lendMu.Lock()
	defer s.lendMu.Unlock()
	C.vr_isub_release(s.h, &slot, 1)
	if s.lent--; s.lent == 0 && s.dropH {
		C.vr_isub_free(s.h)
		s.h = nil
	}
}

// Close stops the polling thread, releases the port and frees everything
// (lent samples' memory once the last of them is released).
func (s *Subscriber) Close() error {
	s.mu.RLock()
	if !s.freed {
		s.shutOnce.Do(func() { C.vr_isub_shutdown(s.h) })
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.freed {
		return nil
	}
	s.freed = true
	var d, r C.uint64_t
	C.vr_isub_stats(s.h, &d, &r)
	s.final = [2]uint64{uint64(d), uint64(r)} // Dropped and Received keep their last counts
	s.lendMu.Lock()
	defer s.lendMu.Unlock()
	if s.lent > 0 {
		s.dropH = true
		return nil
	}
	C.vr_isub_free(s.h)
	s.h = nil
	return nil
}

// Publisher sends samples on one service.
type Publisher struct {
	mu    sync.RWMutex
	h     *C.vr_ipub
	types TypeDetails
	id    []byte
}

func cType(t TypeDetail) (C.vr_itype_detail, *C.char) {
	name := C.CString(t.TypeName)
	v := C.int32_t(0)
	if t.Variant == Dynamic {
		v = 1
	}
	return C.vr_itype_detail{variant: v, type_name: name, size: C.size_t(t.Size), alignment: C.size_t(t.Alignment)}, name
}

// Publisher creates the service with the given types (or opens it if it
// exists with the same types: otherwise ErrIncompatible) and a publisher on it.
func (n *Node) Publisher(service string, types TypeDetails, opts PublisherOptions) (*Publisher, error) {
	if types.Payload.Variant != FixedSize && types.Payload.Variant != Dynamic {
		return nil, fmt.Errorf("iceoryx2: payload variant %v: %w", types.Payload.Variant, ErrInvalid)
	}
	if types.UserHeader.Variant != FixedSize {
		return nil, fmt.Errorf("iceoryx2: user header must be fixed-size: %w", ErrInvalid)
	}
	cs := C.CString(service)
	defer C.free(unsafe.Pointer(cs))
	pt, pn := cType(types.Payload)
	defer C.free(unsafe.Pointer(pn))
	ht, hn := cType(types.UserHeader)
	defer C.free(unsafe.Pointer(hn))
	c := opts.Service
	so := C.int32_t(-1)
	if c.SafeOverflow != nil {
		so = 0
		if *c.SafeOverflow {
			so = 1
		}
	}
	copts := C.vr_iservice_opts{
		max_publishers: C.size_t(c.MaxPublishers), max_subscribers: C.size_t(c.MaxSubscribers),
		max_nodes: C.size_t(c.MaxNodes), history_size: C.size_t(c.HistorySize),
		subscriber_max_buffer_size:      C.size_t(c.SubscriberMaxBufferSize),
		subscriber_max_borrowed_samples: C.size_t(c.SubscriberMaxBorrowedSamples),
		safe_overflow:                   so,
	}
	sl := opts.InitialMaxSliceLen
	if sl <= 0 {
		sl = 4096
	}
	var h *C.vr_ipub
	err := n.use(func(nh *C.vr_inode) error {
		var cerr *C.char
		rc := C.vr_ipub_create(nh, cs, &pt, &ht, &copts, C.size_t(sl), C.int(opts.AllocationStrategy),
			C.size_t(max(opts.MaxLoanedSamples, 0)), C.int(opts.Backpressure), &h, &cerr)
		if rc != C.VR_OK {
			return toErr(rc, cerr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var id [16]C.uint8_t
	C.vr_ipub_id(h, &id[0])
	return &Publisher{h: h, types: types, id: C.GoBytes(unsafe.Pointer(&id[0]), 16)}, nil
}

// ID is the publisher's unique id (16 bytes), as subscribers see it in Sample.PublisherID.
func (p *Publisher) ID() []byte { return p.id }

// Send publishes one sample: userHeader must be exactly the user-header
// size; payload exactly the payload size (FixedSize) or a whole number of
// elements (Dynamic). It returns how many subscribers it reached.
func (p *Publisher) Send(userHeader, payload []byte) (int, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.h == nil {
		return 0, ErrClosed
	}
	var hp, pp *C.uint8_t
	if len(userHeader) > 0 {
		hp = (*C.uint8_t)(unsafe.Pointer(&userHeader[0]))
	}
	if len(payload) > 0 {
		pp = (*C.uint8_t)(unsafe.Pointer(&payload[0]))
	}
	var delivered C.size_t
	var cerr *C.char
	if rc := C.vr_ipub_send(p.h, hp, C.size_t(len(userHeader)), pp, C.size_t(len(payload)), &delivered, &cerr); rc != C.VR_OK {
		return 0, toErr(rc, cerr)
	}
	return int(delivered), nil
}

// Subscribers is the number of subscribers connected to the publisher's
// service right now, in any process.
func (p *Publisher) Subscribers() (int, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.h == nil {
		return 0, ErrClosed
	}
	return int(C.vr_ipub_subscribers(p.h)), nil
}

// Close releases the publisher (the service goes away with its last port).
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.h != nil {
		C.vr_ipub_free(p.h)
		p.h = nil
	}
	return nil
}
