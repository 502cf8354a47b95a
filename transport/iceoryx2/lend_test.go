//go:build cgo

package iceoryx2

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"testing"
	"time"
)

// TestLentSamples: with Lend, samples arrive in the subscriber's slots
// (the very bytes sent, publisher id included), hold their slot until
// released, and the slots bound what the subscriber holds: with every
// slot lent, new samples are dropped and counted, and after Release they
// arrive again. Close with samples still lent leaves their memory valid
// until the last is released.
func TestLentSamples(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{Service: ServiceConfig{SubscriberMaxBufferSize: 8}, InitialMaxSliceLen: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	sub, err := n.Subscribe(name, SubscriberOptions{QueueLen: 3, Lend: true})
	if err != nil {
		t.Fatal(err)
	}
	payload := func(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i * 3)}, 50_000+i) }
	send := func(i int) {
		t.Helper()
		if _, err := pub.Send(header(uint64(i), len(payload(i))), payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		send(i)
	}
	got := receiveN(t, sub, 3, 10*time.Second)
	for i := 0; i < 3; i++ {
		send(3 + i) // no slot: dropped and counted
	}
	waitFor(t, func() bool { return sub.Dropped() == 3 })
	for i, s := range got {
		if !bytes.Equal(s.Payload, payload(i)) || binary.LittleEndian.Uint64(s.UserHeader[8:]) != uint64(i) || !bytes.Equal(s.PublisherID, pub.ID()) {
			t.Fatalf("sample %d differs", i)
		}
	}
	sub.Release(&got[0])
	sub.Release(&got[0]) // a second release changes nothing
	send(6)
	more := receiveN(t, sub, 1, 10*time.Second)
	if seq := binary.LittleEndian.Uint64(more[0].UserHeader[8:]); seq != 6 || !bytes.Equal(more[0].Payload, payload(6)) {
		t.Fatalf("after a release got seq %d", seq)
	}
	if more[0].DroppedBefore != 3 || got[2].DroppedBefore != 0 {
		t.Fatalf("dropped before seq 6: %d, before seq 2: %d; want 3, 0", more[0].DroppedBefore, got[2].DroppedBefore)
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if d, r := sub.Dropped(), sub.Received(); d != 3 || r != 7 {
		t.Fatalf("after Close: dropped %d, received %d; want the final 3, 7", d, r)
	}
	// Closed, three samples still lent: their bytes are intact until released.
	for i, s := range append(got[1:], more...) {
		want := payload([]int{1, 2, 6}[i])
		if !bytes.Equal(s.Payload, want) {
			t.Fatalf("lent sample %d changed after Close", i)
		}
	}
	for i := 1; i < 3; i++ {
		sub.Release(&got[i])
	}
	sub.Release(&more[0]) // the last one frees the subscriber's memory
}

// TestCopiedSamplesFreeTheirSlots: without Lend, Receive copies into Go
// memory and hands the slot back at once, so a reader that keeps every
// sample never runs out of slots.
func TestCopiedSamplesFreeTheirSlots(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{Service: ServiceConfig{SubscriberMaxBufferSize: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	sub, err := n.Subscribe(name, SubscriberOptions{QueueLen: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var got []Sample
	for i := 0; i < 20; i++ {
		if _, err := pub.Send(header(uint64(i), 100), bytes.Repeat([]byte{byte(i)}, 100)); err != nil {
			t.Fatal(err)
		}
		got = append(got, receiveN(t, sub, 1, 10*time.Second)...)
	}
	for i, s := range got {
		if s.Payload[0] != byte(i) || s.slot != 0 {
			t.Fatalf("sample %d: %d (slot %d)", i, s.Payload[0], s.slot)
		}
	}
	if sub.Dropped() != 0 {
		t.Fatalf("%d dropped", sub.Dropped())
	}
}

// TestDrainPositions: samples that waited together in the subscriber's
// buffer come out in one drain, numbered 1, 2, ... per publisher; a sample
// sent after the buffer ran empty starts a new drain.
func TestDrainPositions(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{Service: ServiceConfig{SubscriberMaxBufferSize: 8}})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	// A long poll interval: the five samples below are sent while the
	// polling thread sleeps, and wait in iceoryx2's buffer together.
	sub, err := n.Subscribe(name, SubscriberOptions{PollInterval: 300 * time.Millisecond, QueueLen: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	time.Sleep(50 * time.Millisecond) // the poller is asleep now
	for i := 0; i < 5; i++ {
		if _, err := pub.Send(header(uint64(i), 10), make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
	}
	got := receiveN(t, sub, 5, 10*time.Second)
	for i, s := range got {
		if s.Drain != got[0].Drain || s.DrainIndex != uint32(i+1) {
			t.Fatalf("sample %d: drain %d index %d (first drain %d)", i, s.Drain, s.DrainIndex, got[0].Drain)
		}
	}
	if _, err := pub.Send(header(5, 10), make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	last := receiveN(t, sub, 1, 10*time.Second)[0]
	if last.Drain <= got[0].Drain || last.DrainIndex != 1 {
		t.Fatalf("a later sample: drain %d index %d", last.Drain, last.DrainIndex)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatal("timed out")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestHoldLeavesSamplesToSafeOverflow: holding, a subscriber with every
// slot lent takes nothing more (no drop), so the service's buffer keeps
// the newest samples and safe overflow replaces the older ones; once a
// slot frees, the buffer's samples arrive in one drain, the buffer size of
// them in a row right after the gap they leave (what the recorder's
// overflow count relies on).
func TestHoldLeavesSamplesToSafeOverflow(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{Service: ServiceConfig{SubscriberMaxBufferSize: 4}, InitialMaxSliceLen: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	sub, err := n.Subscribe(name, SubscriberOptions{BufferSize: 4, QueueLen: 1, Lend: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	sub.SetHold(true)
	send := func(i int) {
		t.Helper()
		if _, err := pub.Send(header(uint64(i), 100), make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	send(0)
	first := receiveN(t, sub, 1, 10*time.Second)
	for i := 1; i <= 10; i++ {
		send(i) // 1..6 replaced by 7..10 in the buffer of 4
	}
	time.Sleep(20 * time.Millisecond) // polls that find no slot
	if d := sub.Dropped(); d != 0 {
		t.Fatalf("holding, %d samples were taken and dropped", d)
	}
	var seqs []uint64
	var drains []uint64
	var index []uint32
	x := first[0]
	for len(seqs) < 4 {
		sub.Release(&x)
		got := receiveN(t, sub, 1, 10*time.Second)
		x = got[0]
		seqs = append(seqs, binary.LittleEndian.Uint64(x.UserHeader[8:]))
		drains, index = append(drains, x.Drain), append(index, x.DrainIndex)
	}
	sub.Release(&x)
	if want := []uint64{7, 8, 9, 10}; !slices.Equal(seqs, want) {
		t.Fatalf("after holding got seqs %v, want %v", seqs, want)
	}
	if drains[0] != drains[3] || index[3]-index[0] != 3 {
		t.Fatalf("drains %v, positions %v: the buffer's samples should come in a row in one drain", drains, index)
	}
}
