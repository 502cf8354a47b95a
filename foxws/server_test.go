package foxws

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/foxglove"
	"github.com/vrlog/vrlog/logfmt"
)

// testClient is a Foxglove WebSocket client written from the SDK's
// protocol definitions (protocol.go's formats, checked against the SDK's
// snapshots in sdk_test.go): it reads every message into typed values.
type testClient struct {
	t    *testing.T
	conn *websocket.Conn
	sub  string
	info map[string]any
	chs  map[uint64]advertised // by channel id
	byT  map[string]uint64     // topic → channel id
}

type gotMsg struct {
	text    map[string]any // JSON message
	op      byte           // binary opcode
	subID   uint32
	logTime uint64
	data    []byte
	state   PlaybackState
}

func dial(t *testing.T, url string, protos ...string) *testClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: protos})
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(64 << 20)
	c := &testClient{t: t, conn: conn, sub: conn.Subprotocol(), chs: map[uint64]advertised{}, byT: map[string]uint64{}}
	m := c.read()
	if m.text == nil || m.text["op"] != "serverInfo" {
		t.Fatalf("first message %+v, want serverInfo", m)
	}
	c.info = m.text
	return c
}

func (c *testClient) read() gotMsg {
	c.t.Helper()
	m, err := c.tryRead(5 * time.Second)
	if err != nil {
		c.t.Fatal(err)
	}
	return m
}

func (c *testClient) tryRead(d time.Duration) (gotMsg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	typ, b, err := c.conn.Read(ctx)
	if err != nil {
		return gotMsg{}, err
	}
	if typ == websocket.MessageText {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return gotMsg{}, err
		}
		if m["op"] == "advertise" {
			var a struct{ Channels []advertised }
			json.Unmarshal(b, &a)
			for _, ch := range a.Channels {
				c.chs[ch.ID], c.byT[ch.Topic] = ch, ch.ID
			}
		}
		return gotMsg{text: m}, nil
	}
	m := gotMsg{op: b[0]}
	switch b[0] {
	case opMessageData:
		m.subID, m.logTime, m.data = binary.LittleEndian.Uint32(b[1:]), binary.LittleEndian.Uint64(b[5:]), b[13:]
	case opTime:
		m.logTime = binary.LittleEndian.Uint64(b[1:])
	case opPlaybackState:
		// Parsed as the SDK parses it (playback_state.rs).
		m.state = PlaybackState{Status: PlaybackStatus(b[1]), CurrentTime: binary.LittleEndian.Uint64(b[2:]),
			DidSeek: b[14] != 0, RequestID: string(b[19:][:binary.LittleEndian.Uint32(b[15:])])}
		m.state.Speed = float32frombits(binary.LittleEndian.Uint32(b[10:]))
	default:
		return m, fmt.Errorf("unknown server opcode %d", b[0])
	}
	return m, nil
}

// until reads until f says stop; other messages are handed to f as well.
func (c *testClient) until(f func(m gotMsg) bool) {
	c.t.Helper()
	for !f(c.read()) {
	}
}

func (c *testClient) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	c.sendRaw(websocket.MessageText, b)
}

func (c *testClient) sendRaw(typ websocket.MessageType, b []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, typ, b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *testClient) subscribe(subID uint32, topic string) {
	c.t.Helper()
	id, ok := c.byT[topic]
	if !ok {
		c.t.Fatalf("no channel %q advertised (have %v)", topic, c.byT)
	}
	c.send(map[string]any{"op": "subscribe", "subscriptions": []map[string]any{{"id": subID, "channelId": id}}})
}

// status reads until a status message and returns its level and text.
func (c *testClient) status() (int, string) {
	c.t.Helper()
	var lvl int
	var msg string
	c.until(func(m gotMsg) bool {
		if m.text != nil && m.text["op"] == "status" {
			lvl, msg = int(m.text["level"].(float64)), m.text["message"].(string)
			return true
		}
		return false
	})
	return lvl, msg
}

func (c *testClient) close() { c.conn.CloseNow() }

func float32frombits(b uint32) float32 { return math.Float32frombits(b) }

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
func serve(t *testing.T, o Options) (*Server, string) {
	t.Helper()
	s := New(o)
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
	e := foxglove.NewEncoder(map[uint16]string{1: codec.SchemaState, 2: codec.SchemaFrame}[r.Channel], 0)
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
	s, url := serve(t, Options{})
	for _, tc := range []struct {
		offer []string
		want  string
	}{
		{[]string{SubprotocolV1}, SubprotocolV1},
		{[]string{SubprotocolSDK}, SubprotocolSDK},
		{[]string{SubprotocolV1, SubprotocolSDK}, SubprotocolSDK},
	} {
		c := dial(t, url, tc.offer...)
		if c.sub != tc.want {
			t.Fatalf("offered %v, got %q", tc.offer, c.sub)
		}
		if caps := fmt.Sprint(c.info["capabilities"]); caps != "[time]" {
			t.Errorf("%s: capabilities %s (live: time only)", c.sub, caps)
		}
		c.read() // advertise
		for topic, want := range map[string][2]string{
			"vr/r1/state":        {codec.SchemaState, "json"},
			"vr/r1/state:pose":   {foxglove.SchemaPoseInFrame, "protobuf"},
			"vr/r1/camera/front": {foxglove.SchemaRawImage, "protobuf"},
		} {
			ch := c.chs[c.byT[topic]]
			if ch.SchemaName != want[0] || ch.Encoding != want[1] || ch.Schema == "" || ch.Metadata["vrlog.topic"] == "" {
				t.Errorf("%s: %s advertised %+v", c.sub, topic, ch)
			}
		}
		c.subscribe(7, "vr/r1/state")
		c.subscribe(8, "vr/r1/state:pose")
		c.subscribe(9, "vr/r1/camera/front")
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
			m := c.read()
			if m.op == opTime {
				times++
				continue
			}
			if m.op != opMessageData || m.subID != want[i].sub || m.logTime != uint64(want[i].lt) || !bytes.Equal(m.data, want[i].data) {
				t.Fatalf("%s: message %d: sub %d time %d %d bytes, want sub %d time %d %d bytes", c.sub, i, m.subID, m.logTime, len(m.data),
					want[i].sub, want[i].lt, len(want[i].data))
			}
			i++
		}
		if times == 0 {
			t.Errorf("%s: no time message", c.sub)
		}
		c.close()
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

func waitSubs(t *testing.T, s *Server, n int) {
	t.Helper()
	waitFor(t, func() bool {
		got := 0
		for _, c := range s.Stats().Clients {
			got += len(c.Subscriptions)
		}
		return got == n
	}, fmt.Sprintf("%d subscriptions", n))
}

func waitClients(t *testing.T, s *Server, n int) {
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
	_, url := serve(t, Options{})
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
	s, url := serve(t, Options{})
	for _, sub := range []string{SubprotocolV1, SubprotocolSDK} {
		c := dial(t, url, sub)
		c.read()
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
			{websocket.MessageBinary, string(AppendPlaybackRequest(nil, PlaybackRequest{Speed: 1})), map[string]string{
				SubprotocolV1: "unknown binary opcode 3", SubprotocolSDK: "this server is live"}[sub]},
		} {
			c.sendRaw(tc.typ, []byte(tc.in))
			if lvl, msg := c.status(); lvl != LevelError || !strings.Contains(msg, tc.want) {
				t.Errorf("%s: %q: status %d %q, want an error with %q", sub, tc.in, lvl, msg, tc.want)
			}
		}
		c.subscribe(1, "vr/r1/state")
		c.subscribe(1, "vr/r1/state:pose") // the id is in use
		if lvl, msg := c.status(); lvl != LevelError || !strings.Contains(msg, "already in use") {
			t.Errorf("%s: reused id: %d %q", sub, lvl, msg)
		}
		waitSubs(t, s, 1)
		s.Write(stateRec(5), stateRec(5).RecvWallNs)
		c.until(func(m gotMsg) bool { return m.op == opMessageData && m.subID == 1 })
		c.close()
		waitClients(t, s, 0)
	}
}

// A message over the read limit closes that connection (1009); the
// others go on.
func TestOversizedMessageCloses(t *testing.T) {
	s, url := serve(t, Options{ReadLimit: 1024})
	good, bad := dial(t, url, SubprotocolSDK), dial(t, url, SubprotocolSDK)
	good.read()
	good.subscribe(1, "vr/r1/state")
	bad.sendRaw(websocket.MessageBinary, bytes.Repeat([]byte{3}, 4096)) // small enough to be in the socket before the server reads it
	_, err := bad.tryRead(5 * time.Second)
	for err == nil {
		_, err = bad.tryRead(5 * time.Second)
	}
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("oversized: %v, want a close 1009", err)
	}
	waitClients(t, s, 1)
	waitSubs(t, s, 1)
	s.Write(stateRec(1), t0)
	good.until(func(m gotMsg) bool { return m.op == opMessageData })
}

// A client that never reads loses its own frames, counted, then is closed
// after WriteTimeout; a client that reads gets every message.
func TestSlowClientLosesOnlyItsOwn(t *testing.T) {
	s, url := serve(t, Options{QueueBytes: 8 << 20, WriteTimeout: 2 * time.Second})
	slow, fast := dial(t, url, SubprotocolV1), dial(t, url, SubprotocolV1)
	for _, c := range []*testClient{slow, fast} {
		c.read()
		c.subscribe(1, "vr/r1/state")
		c.subscribe(2, "vr/r1/camera/front")
	}
	waitSubs(t, s, 4)
	const frames, statesPer = 60, 10
	var wg sync.WaitGroup
	wg.Add(1)
	got := map[uint32]int{}
	go func() { // the fast client reads everything
		defer wg.Done()
		for got[1]+got[2] < frames*(statesPer+1) {
			m, err := fast.tryRead(10 * time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			if m.op == opMessageData {
				got[m.subID]++
			}
		}
	}()
	seq := uint64(0)
	for f := 0; f < frames; f++ { // 60 frames of 900 KiB: far more than the slow client's socket and queue hold
		for i := 0; i < statesPer; i++ {
			seq++
			s.Write(stateRec(seq), t0+int64(seq))
		}
		s.Write(frameRec(uint64(f), 640, 480), t0+int64(seq))
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	if got[1] != frames*statesPer || got[2] != frames {
		t.Fatalf("fast client got %d states, %d frames; want %d, %d", got[1], got[2], frames*statesPer, frames)
	}
	var st ClientStats
	for _, c := range s.Stats().Clients {
		if c.Dropped > 0 {
			st = c
		}
	}
	if st.DroppedFrames == 0 || st.Dropped != st.DroppedFrames {
		t.Fatalf("slow client: %+v: want frames dropped, no state", st)
	}
	waitClients(t, s, 1) // closed once its connection took nothing for WriteTimeout
	slow.close()
}

// A client that drops its connection halfway through a frame it sends.
func TestDisconnectMidMessage(t *testing.T) {
	s, url := serve(t, Options{})
	addr := strings.TrimPrefix(url, "ws://")
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n\r\n", addr, SubprotocolSDK)
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
	c := dial(t, url, SubprotocolSDK) // still serving
	c.close()
}

// Fifty clients connect, subscribe, read and leave at once; the server
// keeps serving and leaks no goroutine.
func TestFiftyClientsComeAndGo(t *testing.T) {
	noLeaks(t)
	s, url := serve(t, Options{MaxClients: 64})
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
			conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{SubprotocolV1}})
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
				if typ == websocket.MessageBinary && b[0] == opMessageData {
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
	c := dial(t, url, SubprotocolSDK)
	c.read()
	c.subscribe(1, "vr/r1/state")
	c.until(func(m gotMsg) bool { return m.op == opMessageData })
	c.close()
	close(stop)
	feed.Wait()
	waitClients(t, s, 0)
	if st := s.Stats(); st.Accepted != 51 {
		t.Errorf("accepted %d connections, want 51", st.Accepted)
	}
}

func TestMaxClientsRefused(t *testing.T) {
	s, url := serve(t, Options{MaxClients: 2})
	a, b := dial(t, url, SubprotocolV1), dial(t, url, SubprotocolV1)
	waitClients(t, s, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{SubprotocolV1}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third client: %v %v", resp, err)
	}
	a.close()
	b.close()
}

func TestUndecodableChannelAppears(t *testing.T) {
	s, url := serve(t, Options{})
	c := dial(t, url, SubprotocolSDK)
	c.read()
	c.subscribe(1, "vr/r1/state")
	waitSubs(t, s, 1)
	s.Write(&logfmt.Record{Channel: 1, RecvWallNs: t0, Payload: []byte("garbage")}, t0)
	c.until(func(m gotMsg) bool { return m.text != nil && m.text["op"] == "advertise" })
	id, ok := c.byT["vr/r1/state:undecodable"]
	if !ok || c.chs[id].SchemaName != foxglove.SchemaUndecodable {
		t.Fatalf("undecodable channel: %+v", c.chs[id])
	}
	if err := s.Write(&logfmt.Record{Channel: 77}, t0); !errors.Is(err, ErrUnknownChannel) {
		t.Fatalf("undeclared channel: %v", err)
	}
	c.close()
}
