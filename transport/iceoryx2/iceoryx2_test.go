//go:build cgo

package iceoryx2

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/transport/clock"
)

// frameTypes are the types of a vrsdk frame service (docs/wire-format.md; peers/vrwire.py).
var frameTypes = TypeDetails{
	Payload:    TypeDetail{Variant: Dynamic, TypeName: "u8", Size: 1, Alignment: 1},
	UserHeader: TypeDetail{Variant: FixedSize, TypeName: "vrsdk::FrameHeader", Size: 48, Alignment: 8},
}

// serviceName is unique per test and process so parallel runs don't collide.
func serviceName(t testing.TB) string {
	return fmt.Sprintf("vrlog/test/%d/%s/%d", os.Getpid(), t.Name(), time.Now().UnixNano())
}

func newNode(t testing.TB) *Node {
	t.Helper()
	n, err := NewNode("vrlog-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func receiveN(t testing.TB, s *Subscriber, n int, timeout time.Duration) []Sample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got []Sample
	for len(got) < n {
		var err error
		if got, err = s.Receive(ctx, got); err != nil {
			t.Fatalf("received %d of %d: %v (native: %s)", len(got), n, err, s.lastError())
		}
	}
	return got
}

func header(seq uint64, size int) []byte {
	h := make([]byte, 48)
	copy(h, "VRFM")
	binary.LittleEndian.PutUint16(h[4:], 1)
	binary.LittleEndian.PutUint16(h[6:], 5)
	binary.LittleEndian.PutUint64(h[8:], seq)
	binary.LittleEndian.PutUint64(h[16:], uint64(time.Now().UnixNano()))
	binary.LittleEndian.PutUint32(h[28:], uint32(size))
	binary.LittleEndian.PutUint32(h[32:], 1)
	binary.LittleEndian.PutUint32(h[36:], uint32(size))
	binary.LittleEndian.PutUint64(h[40:], uint64(size))
	return h
}

func TestPubSubFrames(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	const size = 6 << 20
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{
		Service:            ServiceConfig{SubscriberMaxBufferSize: 4, HistorySize: 0},
		InitialMaxSliceLen: 1 << 16, // grows (PowerOfTwo) to the 6 MB frames
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	info, err := n.ServiceDetails(name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Types != frameTypes || info.Config.SubscriberMaxBufferSize != 4 {
		t.Fatalf("service details %+v", info)
	}
	sub, err := n.Subscribe(name, SubscriberOptions{QueueLen: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Types() != frameTypes {
		t.Fatalf("subscriber types %+v", sub.Types())
	}
	const frames = 12
	payloads := make([][]byte, frames)
	for i := range payloads {
		sz := size
		if i%3 == 0 {
			sz = 1000 + i // mixed sizes, including small ones after big ones
		}
		payloads[i] = bytes.Repeat([]byte{byte(i), byte(i * 7), byte(i * 13)}, sz/3+1)[:sz]
	}
	before := clock.MonoNow()
	var got []Sample
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 0; i < frames; i++ {
		d, err := pub.Send(header(uint64(i), len(payloads[i])), payloads[i])
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if d != 1 {
			t.Fatalf("send %d reached %d subscribers", i, d)
		}
		// receive as we go: the service buffer holds 4
		for len(got) <= i {
			if got, err = sub.Receive(ctx, got); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, s := range got {
		if !bytes.Equal(s.Payload, payloads[i]) {
			t.Fatalf("frame %d: payload differs (len %d want %d)", i, len(s.Payload), len(payloads[i]))
		}
		if seq := binary.LittleEndian.Uint64(s.UserHeader[8:]); seq != uint64(i) || len(s.UserHeader) != 48 {
			t.Fatalf("frame %d: header seq %d len %d", i, seq, len(s.UserHeader))
		}
		if !bytes.Equal(s.PublisherID, pub.ID()) {
			t.Fatalf("publisher id %x want %x", s.PublisherID, pub.ID())
		}
		if s.RecvMonoNs < before || s.RecvMonoNs > clock.MonoNow() {
			t.Fatalf("frame %d: mono stamp out of range", i)
		}
	}
	if sub.Dropped() != 0 {
		t.Fatalf("dropped %d", sub.Dropped())
	}
	// wrong sizes are refused, not sent
	if _, err := pub.Send(make([]byte, 47), nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("short header: %v", err)
	}
}

func TestListServicesAndMeta(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	tr := true
	cfg := ServiceConfig{MaxPublishers: 3, SubscriberMaxBufferSize: 5, HistorySize: 1, SafeOverflow: &tr}
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{Service: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	list, err := n.ListServices()
	if err != nil {
		t.Fatal(err)
	}
	var found *ServiceInfo
	for i := range list {
		if list[i].Name == name {
			found = &list[i]
		}
	}
	if found == nil {
		t.Fatalf("service %q not listed among %d", name, len(list))
	}
	if found.Types != frameTypes || found.Config.MaxPublishers != 3 || found.Config.HistorySize != 1 || !*found.Config.SafeOverflow {
		t.Fatalf("listed %+v", *found)
	}
	m := found.Types.ToMeta()
	for k, v := range found.Config.ToMeta() {
		m[k] = v
	}
	back, err := TypeDetailsFromMeta(m)
	if err != nil || back != frameTypes {
		t.Fatalf("meta round trip: %+v %v (%v)", back, err, m)
	}
	bc, err := ServiceConfigFromMeta(m)
	if err != nil || !reflect.DeepEqual(bc, found.Config) {
		t.Fatalf("config meta round trip: %+v %v", bc, err)
	}
	delete(m, "iox2.payload.size")
	if _, err := TypeDetailsFromMeta(m); !errors.Is(err, ErrInvalid) {
		t.Fatalf("missing key: %v", err)
	}
	// same name, other types: incompatible, with a clear error
	other := frameTypes
	other.UserHeader.TypeName = "other::Header"
	if _, err := n.Publisher(name, other, PublisherOptions{}); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("incompatible types: %v", err)
	}
}

func TestMissingService(t *testing.T) {
	n := newNode(t)
	done := make(chan error, 1)
	go func() {
		_, err := n.Subscribe(serviceName(t), SubscriberOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrServiceNotFound) {
			t.Fatalf("missing service: %v", err)
		}
		t.Log(err)
	case <-time.After(10 * time.Second):
		t.Fatal("Subscribe to a missing service hangs")
	}
	if _, err := n.Subscribe("", SubscriberOptions{}); err == nil {
		t.Fatal("empty service name accepted")
	}
	if _, err := n.Publisher(serviceName(t), TypeDetails{Payload: TypeDetail{TypeName: "u8", Size: 1, Alignment: 3}, UserHeader: NoUserHeader}, PublisherOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad alignment: %v", err)
	}
}

func TestReceiveCancelAndClose(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	sub, err := n.Subscribe(name, SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := sub.Receive(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Receive with deadline: %v", err)
	}
	go func() { time.Sleep(50 * time.Millisecond); sub.Close() }()
	if _, err := sub.Receive(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Receive after Close: %v", err)
	}
	sub.Close()
}

// TestCloseOrder: closing the node first leaves its ports working and safe to close.
func TestCloseOrder(t *testing.T) {
	n, err := NewNode("order")
	if err != nil {
		t.Fatal(err)
	}
	name := serviceName(t)
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := n.Subscribe(name, SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Close()
	if _, err := n.ListServices(); !errors.Is(err, ErrClosed) {
		t.Fatalf("ListServices on a closed node: %v", err)
	}
	if _, err := pub.Send(make([]byte, 48), []byte("still works")); err != nil {
		t.Fatal(err)
	}
	got := receiveN(t, sub, 1, 5*time.Second)
	if string(got[0].Payload) != "still works" {
		t.Fatalf("payload %q", got[0].Payload)
	}
	sub.Close()
	pub.Close()
	if _, err := pub.Send(make([]byte, 48), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after Close: %v", err)
	}
}

// TestFixedSizePayload: a service with a fixed-size payload and no user
// header (e.g. Python's publish_subscribe(ctypes.c_uint64)) records and replays too.
func TestFixedSizePayload(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	types := TypeDetails{Payload: TypeDetail{Variant: FixedSize, TypeName: "u64", Size: 8, Alignment: 8}, UserHeader: NoUserHeader}
	// buffer 8: iceoryx2's default (2) would let the third send overwrite
	// the first before the polling thread takes it
	pub, err := n.Publisher(name, types, PublisherOptions{Service: ServiceConfig{SubscriberMaxBufferSize: 8}})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	sub, err := n.Subscribe(name, SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Types() != types {
		t.Fatalf("types %+v", sub.Types())
	}
	for i := 0; i < 3; i++ {
		if _, err := pub.Send(nil, binary.LittleEndian.AppendUint64(nil, uint64(1000+i))); err != nil {
			t.Fatal(err)
		}
	}
	got := receiveN(t, sub, 3, 5*time.Second)
	for i, s := range got {
		if len(s.UserHeader) != 0 || binary.LittleEndian.Uint64(s.Payload) != uint64(1000+i) {
			t.Fatalf("sample %d: header %d bytes, payload % x", i, len(s.UserHeader), s.Payload)
		}
	}
	if _, err := pub.Send(nil, make([]byte, 9)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("9-byte payload for a u64 service: %v", err)
	}
}

// A service created with iceoryx2's defaults (subscriber_max_buffer_size 2)
// opens with a subscriber buffer clamped to the service's limit, and a
// service whose subscriber slots are all taken fails with a clear error.
func TestServiceLimits(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{}) // iceoryx2's defaults for every setting
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	info, err := n.ServiceDetails(name)
	if err != nil || info.Config.SubscriberMaxBufferSize != 2 || info.Config.MaxPublishers != 2 || info.Config.MaxSubscribers != 8 {
		t.Fatalf("default service: %+v %v", info.Config, err)
	}
	sub, err := n.Subscribe(name, SubscriberOptions{BufferSize: 8})
	if err != nil {
		t.Fatalf("subscribe with a larger buffer than the service allows: %v", err)
	}
	defer sub.Close()
	if sub.BufferSize() != 2 || !reflect.DeepEqual(sub.Info(), info) {
		t.Fatalf("buffer %d, info %+v", sub.BufferSize(), sub.Info())
	}
	if _, err := pub.Send(header(1, 4), []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if got := receiveN(t, sub, 1, 5*time.Second); !bytes.Equal(got[0].Payload, []byte{1, 2, 3, 4}) {
		t.Fatalf("payload % x", got[0].Payload)
	}
	small, err := n.Subscribe(name, SubscriberOptions{BufferSize: 1})
	if err != nil || small.BufferSize() != 1 {
		t.Fatalf("buffer 1 of 2: %v", err)
	}
	small.Close()

	one := serviceName(t) + "/one"
	pub1, err := n.Publisher(one, frameTypes, PublisherOptions{Service: ServiceConfig{MaxSubscribers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer pub1.Close()
	first, err := n.Subscribe(one, SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = n.Subscribe(one, SubscriberOptions{})
	if err == nil || errors.Is(err, ErrServiceNotFound) || !strings.Contains(err.Error(), "ExceedsMaxSupportedSubscribers") {
		t.Fatalf("second subscriber on a max_subscribers=1 service: %v", err)
	}
	t.Logf("%v", err)
}

// A publisher counts the subscribers of its service, in this process or
// another (what replay --wait-for-subscribers waits on).
func TestPublisherSubscribers(t *testing.T) {
	n := newNode(t)
	svc := serviceName(t)
	pub, err := n.Publisher(svc, frameTypes, PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	count := func() int {
		t.Helper()
		c, err := pub.Subscribers()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := count(); c != 0 {
		t.Fatalf("%d subscribers before any", c)
	}
	s1, err := n.Subscribe(svc, SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := newNode(t).Subscribe(svc, SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := count(); c != 2 {
		t.Fatalf("%d subscribers, want 2", c)
	}
	s1.Close()
	if c := count(); c != 1 {
		t.Fatalf("%d subscribers after one closed, want 1", c)
	}
	s2.Close()
	pub.Close()
	if _, err := pub.Subscribers(); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed publisher: %v", err)
	}
}
