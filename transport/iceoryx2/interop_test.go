//go:build cgo

package iceoryx2

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
)

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// 1080p RGB: 6,220,800-byte frames.
const w, h = 1920, 1080

func TestInteropPythonPublisherFrames(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	const frames = 20
	p := peertest.Start(t, "publisher.py", "--service", name, "--frames", strconv.Itoa(frames), "--frame-hz", "30",
		"--width", strconv.Itoa(w), "--height", strconv.Itoa(h), "--pixel-encoding", "rgb8", "--buffer", "8")
	sub, err := n.Subscribe(name, SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Types() != frameTypes {
		t.Fatalf("python service types %+v, want %+v", sub.Types(), frameTypes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got []Sample
	for len(got) < frames {
		if got, err = sub.Receive(ctx, got); err != nil {
			t.Fatalf("received %d of %d: %v\npublisher: %s", len(got), frames, err, p.Stderr())
		}
	}
	if err := p.Wait(30 * time.Second); err != nil {
		t.Fatalf("publisher: %v\n%s", err, p.Stderr())
	}
	sent := peertest.Records(t, p.Log)
	if len(sent) != frames {
		t.Fatalf("peer logged %d frames", len(sent))
	}
	for i, r := range sent {
		g := got[i]
		if sha(g.UserHeader) != r.HeaderSHA256 || sha(g.Payload) != r.PayloadSHA256 || len(g.Payload) != w*h*3 {
			t.Fatalf("frame %d differs from what python sent (%d bytes)", i, len(g.Payload))
		}
		if seq := binary.LittleEndian.Uint64(g.UserHeader[8:]); seq != *r.Seq {
			t.Fatalf("frame %d: seq %d want %d", i, seq, *r.Seq)
		}
	}
	if sub.Dropped() != 0 {
		t.Fatalf("dropped %d", sub.Dropped())
	}
}

func TestInteropPythonSubscriberFrames(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	pub, err := n.Publisher(name, frameTypes, PublisherOptions{
		Service:            ServiceConfig{SubscriberMaxBufferSize: 8},
		InitialMaxSliceLen: w * h * 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	const frames = 20
	p := peertest.Start(t, "subscriber.py", "--service", name, "--frames", strconv.Itoa(frames), "--buffer", "8", "--timeout", "60")
	var sent [][2][]byte
	for i := 0; i < frames; i++ {
		payload := make([]byte, w*h*3)
		for j := 0; j < len(payload); j += 4096 {
			payload[j] = byte(i + j>>12)
		}
		payload[len(payload)-1] = byte(i)
		hdr := header(uint64(i), len(payload))
		binary.LittleEndian.PutUint16(hdr[6:], 1) // rgb8
		binary.LittleEndian.PutUint32(hdr[28:], w)
		binary.LittleEndian.PutUint32(hdr[32:], h)
		binary.LittleEndian.PutUint32(hdr[36:], w*3)
		// keep at most 4 frames ahead of the (slower) python side: its
		// service buffer holds 8 and overflows by overwriting
		deadline := time.Now().Add(30 * time.Second)
		for len(peertest.Records(t, p.Log)) < i-4 {
			if time.Now().After(deadline) {
				t.Fatalf("python stuck at %d frames\n%s", len(peertest.Records(t, p.Log)), p.Stderr())
			}
			time.Sleep(5 * time.Millisecond)
		}
		d, err := pub.Send(hdr, payload)
		if err != nil {
			t.Fatal(err)
		}
		if d != 1 {
			t.Fatalf("frame %d reached %d subscribers", i, d)
		}
		sent = append(sent, [2][]byte{hdr, payload})
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.Wait(60 * time.Second); err != nil {
		t.Fatalf("subscriber: %v\n%s", err, p.Stderr())
	}
	recs := peertest.Records(t, p.Log)
	if len(recs) != frames {
		t.Fatalf("python received %d of %d", len(recs), frames)
	}
	for i, r := range recs {
		if r.HeaderSHA256 != sha(sent[i][0]) || r.PayloadSHA256 != sha(sent[i][1]) || r.Seq == nil || *r.Seq != uint64(i) {
			t.Fatalf("python frame %d differs: seq %v", i, r.Seq)
		}
	}
}

// TestInteropVectorsOverIceoryx2: the Python publisher encodes the frame
// headers of the test vectors from their JSON values and sends them with the
// vectors' pixels; Go must receive the .bin bytes.
func TestInteropVectorsOverIceoryx2(t *testing.T) {
	want := peertest.Vectors(t, "vrsdk.Frame/1")
	n := newNode(t)
	name := serviceName(t)
	p := peertest.Start(t, "publisher.py", "--service", name, "--vectors", peertest.Root()+"/testdata/codec")
	sub, err := n.Subscribe(name, SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	got := receiveN(t, sub, len(want), 30*time.Second)
	if err := p.Wait(30 * time.Second); err != nil {
		t.Fatalf("publisher: %v\n%s", err, p.Stderr())
	}
	for i, v := range want {
		if string(got[i].UserHeader) != string(v.Header) || string(got[i].Payload) != string(v.Payload) {
			t.Fatalf("vector %s: header % x\nwant % x (payload %d/%d bytes)", v.Name, got[i].UserHeader, v.Header, len(got[i].Payload), len(v.Payload))
		}
	}
}

// TestInteropPublisherRestart: the Python frame publisher stops (cleanly,
// then with SIGKILL) and a new process publishes on the same service; the Go
// subscriber, which keeps the service alive, receives the new run.
func TestInteropPublisherRestart(t *testing.T) {
	n := newNode(t)
	name := serviceName(t)
	args := []string{"--service", name, "--width", "64", "--height", "48", "--buffer", "8"}
	p := peertest.Start(t, "publisher.py", append(args, "--frames", "10", "--frame-hz", "200")...)
	sub, err := n.Subscribe(name, SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	got := receiveN(t, sub, 10, 30*time.Second)
	if err := p.Wait(30 * time.Second); err != nil {
		t.Fatalf("first run: %v\n%s", err, p.Stderr())
	}
	// second run: killed with SIGKILL mid-stream
	p = peertest.Start(t, "publisher.py", append(args, "--frames", "100000", "--frame-hz", "200")...)
	got = append(got, receiveN(t, sub, 5, 30*time.Second)...)
	p.Kill()
	if cleaned, failed, err := n.CleanupDeadNodes(); err != nil || cleaned < 1 || failed != 0 {
		t.Fatalf("cleanup after SIGKILL: cleaned %d failed %d: %v", cleaned, failed, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	for err == nil {
		got, err = sub.Receive(ctx, got) // whatever was still queued
	}
	cancel()
	// third run after the kill: a new process opens the service again
	p = peertest.Start(t, "publisher.py", append(args, "--frames", "10", "--frame-hz", "200")...)
	third := receiveN(t, sub, 10, 30*time.Second)
	if err := p.Wait(30 * time.Second); err != nil {
		t.Fatalf("third run: %v\n%s", err, p.Stderr())
	}
	sent := peertest.Records(t, p.Log)
	for i, r := range sent {
		if sha(third[i].Payload) != r.PayloadSHA256 || sha(third[i].UserHeader) != r.HeaderSHA256 {
			t.Fatalf("third run frame %d differs", i)
		}
	}
	if seq := binary.LittleEndian.Uint64(third[0].UserHeader[8:]); seq != 0 {
		t.Fatalf("third run starts at seq %d", seq)
	}
}
