package foxws_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/foxglove"
	"github.com/vrlog/vrlog/foxws"
	"github.com/vrlog/vrlog/foxws/foxwstest"
	"github.com/vrlog/vrlog/logfmt"
)

// fixture channels and records.
var (
	stateCh = logfmt.Channel{ID: 1, Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState}
	frameCh = logfmt.Channel{ID: 2, Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame}
)

const t0 = int64(1_700_000_000_000_000_000)

func stateRec(seq uint64) *logfmt.Record {
	s := codec.State{Seq: seq, TNs: t0 + int64(seq)*1e6, Orientation: codec.Quat{W: 1}, Position: codec.Vec3{X: float64(seq)}}
	return &logfmt.Record{Channel: 1, RecvWallNs: t0 + int64(seq)*1e6, Seq: seq, CaptureNs: s.TNs, HasStamp: true, Payload: codec.AppendState(nil, &s)}
}

func frameRec(seq uint64, w, h uint32) *logfmt.Record {
	fh := codec.NewFrameHeader(seq, t0+int64(seq)*33e6, 0, w, h, codec.RGB8)
	pix := make([]byte, fh.DataSize)
	for i := range pix {
		pix[i] = byte(i + int(seq))
	}
	return &logfmt.Record{Channel: 2, RecvWallNs: t0 + int64(seq)*33e6, Seq: seq, HasStamp: true, Header: codec.AppendFrameHeader(nil, &fh), Payload: pix}
}

// serve starts a server with the fixture's channels on a test HTTP server.
func serve(t *testing.T, o foxws.Options) (*foxws.Server, string) {
	t.Helper()
	s := foxws.New(o)
	for _, ch := range []logfmt.Channel{stateCh, frameCh} {
		if err := s.AddChannel(ch); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return s, "ws" + strings.TrimPrefix(hs.URL, "http")
}

// encoded is what package foxglove makes of r: the bytes a client must get.
func encoded(r *logfmt.Record, pose bool) []byte {
	e := foxglove.NewEncoder(&logfmt.Channel{Schema: map[uint16]string{1: codec.SchemaState, 2: codec.SchemaFrame}[r.Channel]}, 0)
	head, tail, err := e.Encode(nil, r)
	if err != nil {
		panic(err)
	}
	if pose {
		return e.AppendPose(nil)
	}
	return append(head, tail...)
}

func TestServeBothSubprotocols(t *testing.T) {
	noLeaks(t)
	s, url := serve(t, foxws.Options{})
	for _, tc := range []struct {
		offer []string
		want  string
	}{
		{[]string{foxws.SubprotocolV1}, foxws.SubprotocolV1},
		{[]string{foxws.SubprotocolSDK}, foxws.SubprotocolSDK},
		{[]string{foxws.SubprotocolV1, foxws.SubprotocolSDK}, foxws.SubprotocolSDK},
	} {
		c := foxwstest.Dial(t, url, tc.offer...)
		if c.Sub != tc.want {
			t.Fatalf("offered %v, got %q", tc.offer, c.Sub)
		}
		if caps := fmt.Sprint(c.Info["capabilities"]); caps != "[time]" {
			t.Errorf("%s: capabilities %s (live: time only)", c.Sub, caps)
		}
		c.Read() // advertise
		for topic, want := range map[string][2]string{
			"vr/r1/state":        {codec.SchemaState, "json"},
			"vr/r1/state:pose":   {foxglove.SchemaPoseInFrame, "protobuf"},
			"vr/r1/camera/front": {foxglove.SchemaRawImage, "protobuf"},
		} {
			ch := c.Channels[c.ByTopic[topic]]
			if ch.SchemaName != want[0] || ch.Encoding != want[1] || ch.Schema == "" || ch.Metadata["vrlog.topic"] == "" {
				t.Errorf("%s: %s advertised %+v", c.Sub, topic, ch)
			}
		}
		c.Subscribe(7, "vr/r1/state")
		c.Subscribe(8, "vr/r1/state:pose")
		c.Subscribe(9, "vr/r1/camera/front")
		waitSubs(t, s, 3)
		recs := []*logfmt.Record{stateRec(1), frameRec(1, 640, 480), stateRec(2)}
		for _, r := range recs {
			if err := s.Write(r, r.RecvWallNs); err != nil {
				t.Fatal(err)
			}
		}
		want := []struct {
			sub  uint32
			data []byte
			lt   int64
		}{
			{7, encoded(recs[0], false), recs[0].RecvWallNs}, {8, encoded(recs[0], true), recs[0].RecvWallNs},
			{9, encoded(recs[1], false), recs[1].RecvWallNs},
			{7, encoded(recs[2], false), recs[2].RecvWallNs}, {8, encoded(recs[2], true), recs[2].RecvWallNs},
		}
		times := 0
		for i := 0; i < len(want); {
			m := c.Read()
			if m.Op == foxws.OpTime {
				times++
				continue
			}
			if m.Op != foxws.OpMessageData || m.SubID != want[i].sub || m.LogTime != uint64(want[i].lt) || !bytes.Equal(m.Data, want[i].data) {
				t.Fatalf("%s: message %d: sub %d time %d %d bytes, want sub %d time %d %d bytes", c.Sub, i, m.SubID, m.LogTime, len(m.Data),
					want[i].sub, want[i].lt, len(want[i].data))
			}
			i++
		}
		if times == 0 {
			t.Errorf("%s: no time message", c.Sub)
		}
		c.Close()
		waitClients(t, s, 0)
		s.Flush() // the next client gets its own time messages
	}
}

// noLeaks checks, after the test's cleanups (the servers closed), that
// no goroutine started by the test is left.
func noLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

func waitSubs(t *testing.T, s *foxws.Server, n int) {
	t.Helper()
	waitFor(t, func() bool {
		got := 0
		for _, c := range s.Stats().Clients {
			got += len(c.Subscriptions)
		}
		return got == n
	}, fmt.Sprintf("%d subscriptions", n))
}

func waitClients(t *testing.T, s *foxws.Server, n int) {
	t.Helper()
	waitFor(t, func() bool { return len(s.Stats().Clients) == n }, fmt.Sprintf("%d clients", n))
}

func waitFor(t *testing.T, f func() bool, what string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !f(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRefusesWithoutSubprotocol(t *testing.T) {
	_, url := serve(t, foxws.Options{})
	resp, err := http.Get("http" + strings.TrimPrefix(url, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err = websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"foxglove.sdk.v2"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("dial with another subprotocol: %v %v", resp, err)
	}
}

// Bad requests each get an error status, and the connection goes on.
func TestBadRequestsAnswered(t *testing.T) {
	s, url := serve(t, foxws.Options{})
	for _, sub := range []string{foxws.SubprotocolV1, foxws.SubprotocolSDK} {
		c := foxwstest.Dial(t, url, sub)
		c.Read()
		for _, tc := range []struct {
			typ  websocket.MessageType
			in   string
			want string
		}{
			{websocket.MessageText, `{"op":"subscribe"`, "malformed JSON"},
			{websocket.MessageText, `{"op":"dance"}`, "unknown op"},
			{websocket.MessageText, `{"op":"subscribe","subscriptions":[{"id":1,"channelId":999}]}`, "unknown channel 999"},
			{websocket.MessageText, `{"op":"advertise","channels":[]}`, "clientPublish"},
			{websocket.MessageBinary, "\x09", "unknown binary opcode 9"},
			{websocket.MessageBinary, string(foxws.AppendPlaybackRequest(nil, foxws.PlaybackRequest{Speed: 1})), map[string]string{
				foxws.SubprotocolV1: "unknown binary opcode 3", foxws.SubprotocolSDK: "this server is live"}[sub]},
		} {
			c.SendRaw(tc.typ, []byte(tc.in))
			if lvl, msg := c.Status(); lvl != foxws.LevelError || !strings.Contains(msg, tc.want) {
				t.Errorf("%s: %q: status %d %q, want an error with %q", sub, tc.in, lvl, msg, tc.want)
			}
		}
		c.Subscribe(1, "vr/r1/state")
		c.Subscribe(1, "vr/r1/state:pose") // the id is in use
		if lvl, msg := c.Status(); lvl != foxws.LevelError || !strings.Contains(msg, "already in use") {
			t.Errorf("%s: reused id: %d %q", sub, lvl, msg)
		}
		waitSubs(t, s, 1)
		s.Write(stateRec(5), stateRec(5).RecvWallNs)
		c.Until(func(m foxwstest.Msg) bool { return m.Op == foxws.OpMessageData && m.SubID == 1 })
		c.Close()
		waitClients(t, s, 0)
	}
}

// A message over the read limit closes that connection (1009); the
// others go on.
func TestOversizedMessageCloses(t *testing.T) {
	s, url := serve(t, foxws.Options{ReadLimit: 1024})
	good, bad := foxwstest.Dial(t, url, foxws.SubprotocolSDK), foxwstest.Dial(t, url, foxws.SubprotocolSDK)
	good.Read()
	good.Subscribe(1, "vr/r1/state")
	bad.SendRaw(websocket.MessageBinary, bytes.Repeat([]byte{3}, 4096)) // small enough to be in the socket before the server reads it
	_, err := bad.TryRead(5 * time.Second)
	for err == nil {
		_, err = bad.TryRead(5 * time.Second)
	}
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("oversized: %v, want a close 1009", err)
	}
	waitClients(t, s, 1)
	waitSubs(t, s, 1)
	s.Write(stateRec(1), t0)
	good.Until(func(m foxwstest.Msg) bool { return m.Op == foxws.OpMessageData })
}

// A client that never reads loses its own frames, counted, then is closed
// after WriteTimeout; a client that reads gets every message.
func TestSlowClientLosesOnlyItsOwn(t *testing.T) {
	var mu sync.Mutex
	var left []foxws.ClientStats // each client's figures as it leaves
	s, url := serve(t, foxws.Options{QueueBytes: 8 << 20, WriteTimeout: 5 * time.Second, OnClose: func(st foxws.ClientStats, _ string) {
		mu.Lock()
		left = append(left, st)
		mu.Unlock()
	}})
	slow, fast := foxwstest.Dial(t, url, foxws.SubprotocolV1), foxwstest.Dial(t, url, foxws.SubprotocolV1)
	for _, c := range []*foxwstest.Client{slow, fast} {
		c.Read()
		c.Subscribe(1, "vr/r1/state")
		c.Subscribe(2, "vr/r1/camera/front")
	}
	waitSubs(t, s, 4)
	const frames, statesPer = 60, 10
	var wg sync.WaitGroup
	wg.Add(1)
	got := map[uint32]int{}
	go func() { // the fast client reads everything
		defer wg.Done()
		for got[1]+got[2] < frames*(statesPer+1) {
			m, err := fast.TryRead(10 * time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			if m.Op == foxws.OpMessageData {
				got[m.SubID]++
			}
		}
	}()
	seq := uint64(0)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, uint64(0)
	for f := 0; f < frames; f++ { // 60 frames of 900 KiB: far more than the slow client's socket and queue hold
		for i := 0; i < statesPer; i++ {
			seq++
			s.Write(stateRec(seq), t0+int64(seq))
		}
		s.Write(frameRec(uint64(f), 640, 480), t0+int64(seq))
		time.Sleep(5 * time.Millisecond)
		if f%10 == 9 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
		}
	}
	// The memory bound (doc.go): per client its queue, the message being
	// written and the read limit; the test client's reading buffers beside.
	if bound := uint64(2*(8<<20+900<<10+64<<10) + 16<<20); peak > bound {
		t.Errorf("live heap grew by %d bytes, over the bound %d", peak, bound)
	}
	t.Logf("live heap grew by at most %.1f MiB (two clients, queues of 8 MiB)", float64(peak)/(1<<20))
	wg.Wait()
	if got[1] != frames*statesPer || got[2] != frames {
		t.Fatalf("fast client got %d states, %d frames; want %d, %d", got[1], got[2], frames*statesPer, frames)
	}
	waitClients(t, s, 1) // the slow one, closed once its connection took nothing for WriteTimeout
	mu.Lock()
	st := left[0]
	mu.Unlock()
	if st.DroppedFrames == 0 || st.Dropped != st.DroppedFrames {
		t.Fatalf("slow client: %+v: want frames dropped, no state", st)
	}
	slow.Close()
}

// A client that drops its connection halfway through a frame it sends.
func TestDisconnectMidMessage(t *testing.T) {
	s, url := serve(t, foxws.Options{})
	addr := strings.TrimPrefix(url, "ws://")
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n\r\n", addr, foxws.SubprotocolSDK)
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("%v %v", resp, err)
	}
	waitClients(t, s, 1)
	// A masked text frame that says 100 bytes follow, then 10 of them.
	nc.Write([]byte{0x81, 0x80 | 100, 1, 2, 3, 4})
	nc.Write(bytes.Repeat([]byte{'x'}, 10))
	nc.Close()
	waitClients(t, s, 0)
	c := foxwstest.Dial(t, url, foxws.SubprotocolSDK) // still serving
	c.Close()
}

// Fifty clients connect, subscribe, read and leave at once; the server
// keeps serving and leaks no goroutine.
func TestFiftyClientsComeAndGo(t *testing.T) {
	noLeaks(t)
	s, url := serve(t, foxws.Options{MaxClients: 64})
	stop := make(chan struct{})
	var feed sync.WaitGroup
	feed.Add(1)
	go func() {
		defer feed.Done()
		for seq := uint64(1); ; seq++ {
			select {
			case <-stop:
				return
			default:
			}
			s.Write(stateRec(seq), t0+int64(seq)*1e6)
			time.Sleep(time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{foxws.SubprotocolV1}})
			if err != nil {
				errs <- err
				return
			}
			defer conn.CloseNow()
			conn.Write(ctx, websocket.MessageText, []byte(`{"op":"subscribe","subscriptions":[{"id":3,"channelId":1}]}`))
			for n := 0; n < 2+i%5; {
				typ, b, err := conn.Read(ctx)
				if err != nil {
					errs <- err
					return
				}
				if typ == websocket.MessageBinary && b[0] == foxws.OpMessageData {
					n++
				}
			}
			if i%2 == 0 {
				conn.Close(websocket.StatusNormalClosure, "bye")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	waitClients(t, s, 0)
	c := foxwstest.Dial(t, url, foxws.SubprotocolSDK)
	c.Read()
	c.Subscribe(1, "vr/r1/state")
	c.Until(func(m foxwstest.Msg) bool { return m.Op == foxws.OpMessageData })
	c.Close()
	close(stop)
	feed.Wait()
	waitClients(t, s, 0)
	if st := s.Stats(); st.Accepted != 51 {
		t.Errorf("accepted %d connections, want 51", st.Accepted)
	}
}

func TestMaxClientsRefused(t *testing.T) {
	s, url := serve(t, foxws.Options{MaxClients: 2})
	a, b := foxwstest.Dial(t, url, foxws.SubprotocolV1), foxwstest.Dial(t, url, foxws.SubprotocolV1)
	waitClients(t, s, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{foxws.SubprotocolV1}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third client: %v %v", resp, err)
	}
	a.Close()
	b.Close()
}

func TestUndecodableChannelAppears(t *testing.T) {
	s, url := serve(t, foxws.Options{})
	c := foxwstest.Dial(t, url, foxws.SubprotocolSDK)
	c.Read()
	c.Subscribe(1, "vr/r1/state")
	waitSubs(t, s, 1)
	s.Write(&logfmt.Record{Channel: 1, RecvWallNs: t0, Payload: []byte("garbage")}, t0)
	c.Until(func(m foxwstest.Msg) bool { return m.Text != nil && m.Text["op"] == "advertise" })
	id, ok := c.ByTopic["vr/r1/state:undecodable"]
	if !ok || c.Channels[id].SchemaName != foxglove.SchemaUndecodable {
		t.Fatalf("undecodable channel: %+v", c.Channels[id])
	}
	if err := s.Write(&logfmt.Record{Channel: 77}, t0); !errors.Is(err, foxws.ErrUnknownChannel) {
		t.Fatalf("undeclared channel: %v", err)
	}
	c.Close()
}
