//go:build cgo

package zenoh

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
)

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// compare checks that got (in order) are exactly the samples the peer logged.
func compare(t *testing.T, sent []peertest.Record, got []Sample) {
	t.Helper()
	if len(got) != len(sent) {
		t.Fatalf("received %d samples, the peer sent %d", len(got), len(sent))
	}
	for i, r := range sent {
		if "state:"+got[i].Key != r.Channel || sha(got[i].Payload) != r.PayloadSHA256 || len(got[i].Payload) != r.Size {
			t.Fatalf("sample %d: got %s/%d bytes/%s, sent %s/%d bytes/%s", i, got[i].Key, len(got[i].Payload), sha(got[i].Payload)[:12], r.Channel, r.Size, r.PayloadSHA256[:12])
		}
		if seq := binary.LittleEndian.Uint64(got[i].Payload[8:]); r.Seq == nil || seq != *r.Seq {
			t.Fatalf("sample %d: seq %d, sent %v", i, seq, r.Seq)
		}
	}
}

func TestInteropPythonPublisher(t *testing.T) {
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	s, err := Open(Config{Mode: ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sub, err := s.Subscribe("vr/it/**", SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	const n = 3000
	p := peertest.Start(t, "publisher.py", "--connect", ep, "--state-key", "vr/it/r1/state",
		"--states", strconv.Itoa(n), "--state-hz", "5000", "--liveliness", "--encoding", "application/x-vrsdk-state")
	got := receiveN(t, sub, n, 60*time.Second)
	if err := p.Wait(30 * time.Second); err != nil {
		t.Fatalf("publisher: %v\n%s", err, p.Stderr())
	}
	compare(t, peertest.Records(t, p.Log), got)
	if got[0].Encoding != "application/x-vrsdk-state" {
		t.Fatalf("encoding %q", got[0].Encoding)
	}
	if sub.Dropped() != 0 {
		t.Fatalf("dropped %d", sub.Dropped())
	}
}

// stateBytes builds a vrsdk.State/1 (docs/wire-format.md) with 4 sensors: 200 bytes.
func stateBytes(seq uint64, tns int64) []byte {
	b := make([]byte, 200)
	copy(b, "VRST")
	binary.LittleEndian.PutUint16(b[4:], 1)
	binary.LittleEndian.PutUint16(b[6:], 4)
	binary.LittleEndian.PutUint64(b[8:], seq)
	binary.LittleEndian.PutUint64(b[16:], uint64(tns))
	binary.LittleEndian.PutUint64(b[24:], uint64(tns-1000))
	binary.LittleEndian.PutUint64(b[32:], seq*3) // position.x bits: any f64 bits are valid
	for i := 0; i < 4; i++ {
		binary.LittleEndian.PutUint32(b[136+16*i:], uint32(100+i))
		binary.LittleEndian.PutUint64(b[136+16*i+8:], uint64(tns-int64(i)))
	}
	return b
}

func TestInteropPythonSubscriber(t *testing.T) {
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	s, err := Open(Config{Mode: ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 2000
	p := peertest.Start(t, "subscriber.py", "--connect", ep, "--state-key", "vr/it/**", "--states", strconv.Itoa(n), "--timeout", "60")
	probe, err := s.Publisher("vr/it/probe", PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	// Publish probes until the peer's log shows one: its subscription reached us.
	deadline := time.Now().Add(20 * time.Second)
	for {
		probe.Put([]byte("probe"), nil)
		if b, _ := os.ReadFile(p.Log); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("python subscriber never matched\n%s", p.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	pub, err := s.Publisher("vr/it/r2/state", PublisherOptions{Block: true, Encoding: "application/octet-stream"})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	var sent [][]byte
	for i := 0; i < n; i++ {
		b := stateBytes(uint64(i), time.Now().UnixNano())
		sent = append(sent, b)
		if err := pub.Put(b, nil); err != nil {
			t.Fatal(err)
		}
		if i%200 == 199 {
			time.Sleep(time.Millisecond) // ~1 kHz bursts; the python side is slower than Go
		}
	}
	if err := p.Wait(60 * time.Second); err != nil {
		t.Fatalf("subscriber: %v\n%s", err, p.Stderr())
	}
	var recs []peertest.Record
	for _, r := range peertest.Records(t, p.Log) {
		if r.Channel == "state:vr/it/r2/state" {
			recs = append(recs, r)
		}
	}
	if len(recs) != n {
		t.Fatalf("python received %d of %d", len(recs), n)
	}
	for i, r := range recs {
		if r.PayloadSHA256 != sha(sent[i]) || r.Seq == nil || *r.Seq != uint64(i) {
			t.Fatalf("python sample %d: seq %v sha %s, want %d %s", i, r.Seq, r.PayloadSHA256[:12], i, sha(sent[i])[:12])
		}
	}
}

// TestInteropPeerRestart: the Go subscriber connects to a Python publisher
// that listens; the publisher process is stopped and started again on the
// same endpoint (its seq starting again at 0: a publisher restart), and the
// Go session reconnects by itself and receives the second run too.
func TestInteropPeerRestart(t *testing.T) {
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	s, err := Open(Config{Mode: ModePeer, Connect: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sub, err := s.Subscribe("vr/rs/**", SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	const n = 300
	var all []Sample
	var sent []peertest.Record
	for run := 0; run < 2; run++ {
		p := peertest.Start(t, "publisher.py", "--listen", ep, "--state-key", "vr/rs/r1/state",
			"--states", strconv.Itoa(n), "--state-hz", "1000", "--wait-subscribers", "30")
		all = append(all, receiveN(t, sub, n, 60*time.Second)...)
		if err := p.Wait(30 * time.Second); err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, p.Stderr())
		}
		sent = append(sent, peertest.Records(t, p.Log)...)
	}
	compare(t, sent, all)
	if seq := binary.LittleEndian.Uint64(all[n].Payload[8:]); seq != 0 {
		t.Fatalf("second run starts at seq %d", seq)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if extra, _ := sub.Receive(ctx, nil); len(extra) != 0 {
		t.Fatalf("%d unexpected samples", len(extra))
	}
}

func TestInteropVectors(t *testing.T) {
	// peers/check_vectors.py encodes every codec test vector with the peers'
	// own codec (peers/vrwire.py, written from docs/wire-format.md) and
	// compares byte for byte.
	out, err := peertest.Run(t, "check_vectors.py", peertest.Root()+"/testdata/codec")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestInteropVectorsOverZenoh: the Python publisher encodes the state test
// vectors from their JSON values and sends them; Go must receive the .bin bytes.
func TestInteropVectorsOverZenoh(t *testing.T) {
	want := peertest.Vectors(t, "vrsdk.State/1")
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	s, err := Open(Config{Mode: ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sub, err := s.Subscribe("vr/vec/**", SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	p := peertest.Start(t, "publisher.py", "--connect", ep, "--state-key", "vr/vec/state", "--vectors", peertest.Root()+"/testdata/codec")
	got := receiveN(t, sub, len(want), 30*time.Second)
	if err := p.Wait(30 * time.Second); err != nil {
		t.Fatalf("publisher: %v\n%s", err, p.Stderr())
	}
	for i, v := range want {
		if string(got[i].Payload) != string(v.Payload) {
			t.Fatalf("vector %s: received % x\nwant % x", v.Name, got[i].Payload, v.Payload)
		}
	}
}

// TestInteropRouterRestart: two client sessions meet only through a router
// (the official wheel in router mode, peers/router.py). The router is killed
// and started again on the same endpoint: Connected reports the loss and
// then the new router, and samples flow again without the clients doing
// anything (zenoh's clients reconnect and redeclare by themselves).
func TestInteropRouterRestart(t *testing.T) {
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	startRouter := func() (*peertest.Peer, string) {
		p := peertest.Start(t, "router.py", "--listen", ep)
		b, err := os.ReadFile(p.Log)
		if err != nil {
			t.Fatal(err)
		}
		var id struct{ ZID string }
		if err := json.Unmarshal(b, &id); err != nil || id.ZID == "" {
			t.Fatalf("router id %q: %v", b, err)
		}
		return p, id.ZID
	}
	router, zid1 := startRouter()
	client := Config{Mode: ModeClient, Connect: []string{ep}, DisableMulticastScouting: true}
	ps, err := Open(client)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	ss, err := Open(client)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	sub, err := ss.Subscribe("vr/rr/**", SubscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pub, err := ps.Publisher("vr/rr/state", PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	routers := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			c, err := ss.Connected()
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Peers) != 0 {
				t.Fatalf("a client lists peers %v", c.Peers)
			}
			if (want == "" && len(c.Routers) == 0) || (len(c.Routers) == 1 && c.Routers[0] == want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("connected to routers %v, want %q", c.Routers, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	routers(zid1)
	waitMatched(t, pub, sub)

	router.Kill()
	routers("")
	_, zid2 := startRouter()
	if zid2 == zid1 {
		t.Fatal("the restarted router has the same id")
	}
	routers(zid2)
	waitMatched(t, pub, sub) // the subscription reached the new router
}
