//go:build cgo

package iceoryx2

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

const frameBytes = 6 << 20 // 6 MiB: a 1080p RGB frame is 6.2 MB

// BenchmarkReceive6MB measures 6 MiB frames moving from an iceoryx2 service
// to the caller through Subscriber.Receive: "copied" (the polling thread's
// copy out of shared memory into a slot, then a copy into fresh Go memory)
// and "lent" (the slot itself, released after use, as a recorder does once
// a frame is written). The publisher runs in the same process on another
// goroutine, sending as fast as the service takes them. Compare with
// BenchmarkMemcpy6MB in the same run.
func BenchmarkReceive6MB(b *testing.B) {
	b.Run("copied", func(b *testing.B) { benchReceive(b, false) })
	b.Run("lent", func(b *testing.B) { benchReceive(b, true) })
}

func benchReceive(b *testing.B, lend bool) {
	n := newNode(b)
	name := serviceName(b)
	f := false
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{
		Service:            ServiceConfig{SubscriberMaxBufferSize: 4, SafeOverflow: &f},
		InitialMaxSliceLen: frameBytes,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	sub, err := n.Subscribe(name, SubscriberOptions{QueueLen: 4, Lend: lend})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	payload := make([]byte, frameBytes)
	for i := range payload {
		payload[i] = byte(i)
	}
	hdr := header(0, frameBytes)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			if _, err := pub.Send(hdr, payload); err != nil {
				time.Sleep(100 * time.Microsecond) // buffer full (no safe overflow): retry
			}
		}
	}()
	b.SetBytes(frameBytes)
	b.ResetTimer()
	got := 0
	var buf []Sample
	ctx := context.Background()
	for got < b.N {
		buf, err = sub.Receive(ctx, buf[:0])
		if err != nil {
			b.Fatal(err)
		}
		got += len(buf)
		for i := range buf {
			sub.Release(&buf[i])
		}
	}
	b.StopTimer()
	stop.Store(true)
	<-done
	b.ReportMetric(float64(sub.Dropped()), "queue-drops")
}

// BenchmarkMemcpy6MB is the reference: one copy of 6 MiB into fresh Go memory.
func BenchmarkMemcpy6MB(b *testing.B) {
	src := make([]byte, frameBytes)
	for i := range src {
		src[i] = byte(i)
	}
	b.SetBytes(frameBytes)
	b.Run("fresh-dst", func(b *testing.B) {
		b.SetBytes(frameBytes)
		for i := 0; i < b.N; i++ {
			dst := make([]byte, frameBytes)
			copy(dst, src)
		}
	})
	b.Run("reused-dst", func(b *testing.B) {
		b.SetBytes(frameBytes)
		dst := make([]byte, frameBytes)
		for i := 0; i < b.N; i++ {
			copy(dst, src)
		}
	})
}
