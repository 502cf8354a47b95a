// Package foxwstest is a Foxglove WebSocket client for tests, written from
// the Foxglove SDK's protocol definitions (the formats of package foxws,
// checked against the SDK's own snapshots): it speaks both subprotocols
// and the SDK's playback control, which the official ws-protocol client
// does not, and reads every server message into a typed value.
package foxwstest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/vrlog/vrlog/foxws"
)

// Msg is one server message: Text for JSON ones, else Op and its fields.
// Raw and Data are valid until the client's next read.
type Msg struct {
	Text    map[string]any
	Raw     []byte
	Op      byte
	SubID   uint32
	LogTime uint64 // message data, time
	Data    []byte
	State   foxws.PlaybackState
}

// Client is one connection.
type Client struct {
	t        testing.TB
	Conn     *websocket.Conn
	Sub      string
	Info     map[string]any
	Channels map[uint64]foxws.Advertised
	ByTopic  map[string]uint64
	buf      bytes.Buffer
}

// Dial connects offering protos and reads the serverInfo.
func Dial(t testing.TB, url string, protos ...string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: protos})
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(256 << 20)
	c := &Client{t: t, Conn: conn, Sub: conn.Subprotocol(), Channels: map[uint64]foxws.Advertised{}, ByTopic: map[string]uint64{}}
	m := c.Read()
	if m.Text == nil || m.Text["op"] != "serverInfo" {
		t.Fatalf("first message %+v, want serverInfo", m)
	}
	c.Info = m.Text
	return c
}

// Read reads the next message (failing the test after 10 s).
func (c *Client) Read() Msg {
	c.t.Helper()
	m, err := c.TryRead(10 * time.Second)
	if err != nil {
		c.t.Fatal(err)
	}
	return m
}

// TryRead reads the next message within d.
func (c *Client) TryRead(d time.Duration) (Msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	typ, r, err := c.Conn.Reader(ctx)
	if err != nil {
		return Msg{}, err
	}
	c.buf.Reset() // one buffer for every message: a 1080p frame is not copied again as it grows
	if _, err := c.buf.ReadFrom(r); err != nil {
		return Msg{}, err
	}
	b := c.buf.Bytes()
	if typ == websocket.MessageText {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return Msg{}, err
		}
		if m["op"] == "advertise" {
			var a struct{ Channels []foxws.Advertised }
			if err := json.Unmarshal(b, &a); err != nil {
				return Msg{}, err
			}
			for _, ch := range a.Channels {
				c.Channels[ch.ID], c.ByTopic[ch.Topic] = ch, ch.ID
			}
		}
		return Msg{Text: m, Raw: b}, nil
	}
	if len(b) == 0 {
		return Msg{}, fmt.Errorf("empty binary message")
	}
	m := Msg{Op: b[0], Raw: b}
	switch b[0] {
	case foxws.OpMessageData:
		if len(b) < 13 {
			return m, fmt.Errorf("message data of %d bytes", len(b))
		}
		m.SubID, m.LogTime, m.Data = binary.LittleEndian.Uint32(b[1:]), binary.LittleEndian.Uint64(b[5:]), b[13:]
	case foxws.OpTime:
		if len(b) != 9 {
			return m, fmt.Errorf("time message of %d bytes", len(b))
		}
		m.LogTime = binary.LittleEndian.Uint64(b[1:])
	case foxws.OpPlaybackState:
		if m.State, err = foxws.ParsePlaybackState(b); err != nil {
			return m, err
		}
	default:
		return m, fmt.Errorf("unknown server opcode %d", b[0])
	}
	return m, nil
}

// Until reads until f says stop.
func (c *Client) Until(f func(m Msg) bool) {
	c.t.Helper()
	for !f(c.Read()) {
	}
}

// Send sends v as a JSON message.
func (c *Client) Send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.SendRaw(websocket.MessageText, b)
}

// SendRaw sends one message.
func (c *Client) SendRaw(typ websocket.MessageType, b []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Conn.Write(ctx, typ, b); err != nil {
		c.t.Fatal(err)
	}
}

// Subscribe subscribes to topic's channel under subID.
func (c *Client) Subscribe(subID uint32, topic string) {
	c.t.Helper()
	id, ok := c.ByTopic[topic]
	if !ok {
		c.t.Fatalf("no channel %q advertised (have %v)", topic, c.ByTopic)
	}
	c.Send(map[string]any{"op": "subscribe", "subscriptions": []map[string]any{{"id": subID, "channelId": id}}})
}

// Playback sends a playback control request.
func (c *Client) Playback(r foxws.PlaybackRequest) {
	c.t.Helper()
	c.SendRaw(websocket.MessageBinary, foxws.AppendPlaybackRequest(nil, r))
}

// Status reads until a status message and returns its level and text.
func (c *Client) Status() (int, string) {
	c.t.Helper()
	var lvl int
	var msg string
	c.Until(func(m Msg) bool {
		if m.Text != nil && m.Text["op"] == "status" {
			lvl, msg = int(m.Text["level"].(float64)), m.Text["message"].(string)
			return true
		}
		return false
	})
	return lvl, msg
}

// Close drops the connection.
func (c *Client) Close() { c.Conn.CloseNow() }
