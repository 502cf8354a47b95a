package foxws

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/vrlog/vrlog/foxglove"
)

// The wire formats, from the Foxglove SDK's protocol definitions
// (foxglove/foxglove-sdk, rust/foxglove/src/protocol/: common/, v1/): JSON
// text messages tagged by "op", binary messages led by an opcode byte,
// little-endian integers. foxglove.sdk.v1 is foxglove.websocket.v1 (the
// ws-protocol specification) plus the SDK's playback control: the
// client's binary PlaybackControlRequest (opcode 3), the server's binary
// PlaybackState (opcode 5), the "playbackControl" capability and the
// serverInfo's dataStartTime/dataEndTime. The official ws-protocol client
// treats opcode 5 as an error, so none of that goes to a
// foxglove.websocket.v1 client (doc.go).

// Subprotocols, in the server's order of preference.
const (
	SubprotocolSDK = "foxglove.sdk.v1"
	SubprotocolV1  = "foxglove.websocket.v1"
)

// Capabilities advertised in serverInfo.
const (
	CapTime            = "time"
	CapPlaybackControl = "playbackControl"
)

// Binary opcodes of the server's messages.
const (
	OpMessageData   = 1 // message data
	OpTime          = 2 // time
	OpPlaybackState = 5 // playback state (foxglove.sdk.v1)
)

// Binary opcodes of the client's messages.
const (
	opClientData      = 1 // client-published message data
	opServiceCallReq  = 2 // service call request
	opPlaybackControl = 3 // playback control request (foxglove.sdk.v1)
)

// Limits of what a client may send (every one a parse error past it).
const (
	// MaxSubscriptions bounds the entries of one subscribe or unsubscribe.
	MaxSubscriptions = 4096
	// MaxRequestID bounds a playback request's id, in bytes.
	MaxRequestID = 256
)

// ErrBadMessage is the class of every client message the server refuses;
// the error says why, and goes back to the client in a status message.
var ErrBadMessage = errors.New("foxws: bad client message")

// Kind is what a parsed client message asks.
type Kind int

const (
	KindSubscribe   Kind = iota + 1 // Subscriptions
	KindUnsubscribe                 // SubscriptionIDs
	KindPlayback                    // Playback
)

// Subscription is one entry of a subscribe request.
type Subscription struct {
	ID        uint32 `json:"id"`
	ChannelID uint64 `json:"channelId"`
}

// PlaybackCommand is a playback request's command.
type PlaybackCommand uint8

const (
	Play  PlaybackCommand = 0
	Pause PlaybackCommand = 1
)

// PlaybackRequest is a client's playback control request: seek first (if
// Seek), then the speed, then play or pause.
type PlaybackRequest struct {
	Command   PlaybackCommand
	Speed     float32 // > 0; 0 when the request's was not a speed (kept as it is)
	Seek      bool
	SeekTime  uint64 // ns, absolute on the log's clock
	RequestID string
}

// PlaybackStatus is the state of the server's playback.
type PlaybackStatus uint8

const (
	StatusPlaying   PlaybackStatus = 0
	StatusPaused    PlaybackStatus = 1
	StatusBuffering PlaybackStatus = 2
	StatusEnded     PlaybackStatus = 3
)

func (s PlaybackStatus) String() string {
	switch s {
	case StatusPlaying:
		return "playing"
	case StatusPaused:
		return "paused"
	case StatusBuffering:
		return "buffering"
	case StatusEnded:
		return "ended"
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// PlaybackState is the server's answer to a playback request, and its
// notice when playback changed by itself (the end reached).
type PlaybackState struct {
	Status      PlaybackStatus
	CurrentTime uint64 // ns, absolute on the log's clock
	Speed       float32
	DidSeek     bool
	RequestID   string // "" when not an answer
}

// Request is one parsed client message.
type Request struct {
	Kind            Kind
	Subscriptions   []Subscription
	SubscriptionIDs []uint32
	Playback        PlaybackRequest
}

// ParseText parses a JSON client message. Known operations this server
// does not offer (client publishing, parameters, services, the connection
// graph, assets: capabilities it does not advertise) are refused by name.
func ParseText(data []byte) (Request, error) {
	if !utf8.Valid(data) {
		return Request{}, fmt.Errorf("%w: text message is not UTF-8", ErrBadMessage)
	}
	var head struct {
		Op *string `json:"op"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Request{}, fmt.Errorf("%w: malformed JSON: %v", ErrBadMessage, err)
	}
	if head.Op == nil {
		return Request{}, fmt.Errorf("%w: JSON message without \"op\"", ErrBadMessage)
	}
	switch op := *head.Op; op {
	case "subscribe":
		var m struct {
			Subscriptions *[]Subscription `json:"subscriptions"`
		}
		if err := strict(data, &m); err != nil {
			return Request{}, fmt.Errorf("%w: subscribe: %v", ErrBadMessage, err)
		}
		if m.Subscriptions == nil {
			return Request{}, fmt.Errorf("%w: subscribe without \"subscriptions\"", ErrBadMessage)
		}
		if len(*m.Subscriptions) > MaxSubscriptions {
			return Request{}, fmt.Errorf("%w: subscribe: %d subscriptions, at most %d", ErrBadMessage, len(*m.Subscriptions), MaxSubscriptions)
		}
		return Request{Kind: KindSubscribe, Subscriptions: *m.Subscriptions}, nil
	case "unsubscribe":
		var m struct {
			SubscriptionIDs *[]uint32 `json:"subscriptionIds"`
		}
		if err := strict(data, &m); err != nil {
			return Request{}, fmt.Errorf("%w: unsubscribe: %v", ErrBadMessage, err)
		}
		if m.SubscriptionIDs == nil {
			return Request{}, fmt.Errorf("%w: unsubscribe without \"subscriptionIds\"", ErrBadMessage)
		}
		if len(*m.SubscriptionIDs) > MaxSubscriptions {
			return Request{}, fmt.Errorf("%w: unsubscribe: %d ids, at most %d", ErrBadMessage, len(*m.SubscriptionIDs), MaxSubscriptions)
		}
		return Request{Kind: KindUnsubscribe, SubscriptionIDs: *m.SubscriptionIDs}, nil
	case "advertise", "unadvertise":
		return Request{}, fmt.Errorf("%w: %s: this server does not take client channels (no clientPublish capability)", ErrBadMessage, op)
	case "getParameters", "setParameters", "subscribeParameterUpdates", "unsubscribeParameterUpdates":
		return Request{}, fmt.Errorf("%w: %s: this server has no parameters (no parameters capability)", ErrBadMessage, op)
	case "subscribeConnectionGraph", "unsubscribeConnectionGraph":
		return Request{}, fmt.Errorf("%w: %s: no connectionGraph capability", ErrBadMessage, op)
	case "fetchAsset":
		return Request{}, fmt.Errorf("%w: fetchAsset: no assets capability", ErrBadMessage)
	default:
		return Request{}, fmt.Errorf("%w: unknown op %s", ErrBadMessage, quote(op))
	}
}

// strict decodes data into v; fields v does not name are ignored (the
// protocol lets messages grow), wrong types and numbers out of range are
// errors.
func strict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	return d.Decode(v)
}

// quote quotes s for an error, cut to 64 bytes.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.Quote(s)
}

// ParseBinary parses a binary client message; sdk tells whether the
// connection speaks foxglove.sdk.v1 (playback control requests are part
// of that subprotocol only).
func ParseBinary(data []byte, sdk bool) (Request, error) {
	if len(data) == 0 {
		return Request{}, fmt.Errorf("%w: empty binary message", ErrBadMessage)
	}
	switch op := data[0]; {
	case op == opPlaybackControl && sdk:
		p, err := parsePlayback(data[1:])
		if err != nil {
			return Request{}, err
		}
		return Request{Kind: KindPlayback, Playback: p}, nil
	case op == opClientData:
		return Request{}, fmt.Errorf("%w: client message data: this server does not take client channels (no clientPublish capability)", ErrBadMessage)
	case op == opServiceCallReq:
		return Request{}, fmt.Errorf("%w: service call request: this server has no services", ErrBadMessage)
	default:
		return Request{}, fmt.Errorf("%w: unknown binary opcode %d", ErrBadMessage, op)
	}
}

// parsePlayback parses a PlaybackControlRequest's payload: command (1),
// speed (f32), had_seek (1), seek_time (u64, present either way),
// request_id length (u32) and bytes.
func parsePlayback(b []byte) (PlaybackRequest, error) {
	const fixed = 1 + 4 + 1 + 8 + 4
	if len(b) < fixed {
		return PlaybackRequest{}, fmt.Errorf("%w: playback request of %d bytes, at least %d", ErrBadMessage, len(b), fixed)
	}
	var p PlaybackRequest
	switch c := PlaybackCommand(b[0]); c {
	case Play, Pause:
		p.Command = c
	default:
		return PlaybackRequest{}, fmt.Errorf("%w: playback command %d (want 0 play or 1 pause)", ErrBadMessage, b[0])
	}
	p.Speed = math.Float32frombits(binary.LittleEndian.Uint32(b[1:]))
	if !(p.Speed > 0) || math.IsInf(float64(p.Speed), 0) {
		p.Speed = 0 // not a speed: the speed stays as it is (the answer says which)
	}
	p.Seek = b[5] != 0
	if p.Seek {
		p.SeekTime = binary.LittleEndian.Uint64(b[6:])
	}
	n := binary.LittleEndian.Uint32(b[14:])
	rest := b[fixed:]
	if n > MaxRequestID {
		return PlaybackRequest{}, fmt.Errorf("%w: playback request id of %d bytes, at most %d", ErrBadMessage, n, MaxRequestID)
	}
	if uint32(len(rest)) < n {
		return PlaybackRequest{}, fmt.Errorf("%w: playback request id of %d bytes, %d follow", ErrBadMessage, n, len(rest))
	}
	id := rest[:n] // what may follow is a later version's: ignored, as the SDK does
	if !utf8.Valid(id) {
		return PlaybackRequest{}, fmt.Errorf("%w: playback request id is not UTF-8", ErrBadMessage)
	}
	p.RequestID = string(id)
	return p, nil
}

// AppendPlaybackRequest appends r as a binary PlaybackControlRequest (a
// client's message: for tests and tools).
func AppendPlaybackRequest(dst []byte, r PlaybackRequest) []byte {
	dst = append(dst, opPlaybackControl, byte(r.Command))
	dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(r.Speed))
	seek := byte(0)
	if r.Seek {
		seek = 1
	}
	dst = append(dst, seek)
	dst = binary.LittleEndian.AppendUint64(dst, r.SeekTime)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(r.RequestID)))
	return append(dst, r.RequestID...)
}

// ---- server messages ----

// messageDataHead is a message data message's bytes before the message:
// opcode, subscription id, log time.
const messageDataHead = 1 + 4 + 8

// appendMessageDataHead appends the head of a message data message.
func appendMessageDataHead(dst []byte, subID uint32, logTime uint64) []byte {
	dst = append(dst, OpMessageData)
	dst = binary.LittleEndian.AppendUint32(dst, subID)
	return binary.LittleEndian.AppendUint64(dst, logTime)
}

// appendTime appends a binary time message.
func appendTime(dst []byte, ns uint64) []byte {
	return binary.LittleEndian.AppendUint64(append(dst, OpTime), ns)
}

// AppendPlaybackState appends a binary PlaybackState: status (1), current
// time (u64), speed (f32), did_seek (1), request id length (u32) and bytes.
func AppendPlaybackState(dst []byte, s PlaybackState) []byte {
	dst = append(dst, OpPlaybackState, byte(s.Status))
	dst = binary.LittleEndian.AppendUint64(dst, s.CurrentTime)
	dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(s.Speed))
	seek := byte(0)
	if s.DidSeek {
		seek = 1
	}
	dst = append(dst, seek)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s.RequestID)))
	return append(dst, s.RequestID...)
}

// ParsePlaybackState parses a binary PlaybackState (a server's message,
// opcode included: for clients and tests), as the SDK parses it.
func ParsePlaybackState(b []byte) (PlaybackState, error) {
	const fixed = 1 + 1 + 8 + 4 + 1 + 4
	if len(b) < fixed || b[0] != OpPlaybackState {
		return PlaybackState{}, fmt.Errorf("%w: not a playback state of at least %d bytes", ErrBadMessage, fixed)
	}
	st := PlaybackState{Status: PlaybackStatus(b[1]), CurrentTime: binary.LittleEndian.Uint64(b[2:]),
		Speed: math.Float32frombits(binary.LittleEndian.Uint32(b[10:])), DidSeek: b[14] != 0}
	n := binary.LittleEndian.Uint32(b[15:])
	if uint32(len(b)-fixed) < n || st.Status > StatusEnded {
		return PlaybackState{}, fmt.Errorf("%w: playback state: status %d, request id of %d bytes, %d follow", ErrBadMessage, b[1], n, len(b)-fixed)
	}
	st.RequestID = string(b[fixed:][:n])
	return st, nil
}

// stamp is a time in a serverInfo: {sec, nsec}.
type stamp struct {
	Sec  uint32 `json:"sec"`
	Nsec uint32 `json:"nsec"`
}

func toStamp(ns uint64) *stamp {
	return &stamp{Sec: uint32(min(ns/1e9, math.MaxUint32)), Nsec: uint32(ns % 1e9)}
}

// serverInfo is the first message of a connection.
type serverInfo struct {
	Op            string            `json:"op"`
	Name          string            `json:"name"`
	Capabilities  []string          `json:"capabilities"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	SessionID     string            `json:"sessionId,omitempty"`
	DataStartTime *stamp            `json:"dataStartTime,omitempty"`
	DataEndTime   *stamp            `json:"dataEndTime,omitempty"`
}

// Advertised is one channel of an advertise message.
type Advertised struct {
	ID             uint64            `json:"id"`
	Topic          string            `json:"topic"`
	Encoding       string            `json:"encoding"`
	SchemaName     string            `json:"schemaName"`
	SchemaEncoding string            `json:"schemaEncoding"`
	Schema         string            `json:"schema"`
	Metadata       map[string]string `json:"metadata,omitempty"`
}

// advertisement is a channel's entry: the schema as text, base64 for the
// binary encodings (protobuf), as the SDK encodes it.
func advertisement(id uint64, topic string, s foxglove.Schema, md map[string]string) Advertised {
	data := string(s.Data)
	if s.Encoding == "protobuf" || s.Encoding == "flatbuffer" {
		data = base64.StdEncoding.EncodeToString(s.Data)
	}
	return Advertised{ID: id, Topic: topic, Encoding: s.MessageEncoding(), SchemaName: s.Name, SchemaEncoding: s.Encoding,
		Schema: data, Metadata: md}
}

func marshalAdvertise(chs []Advertised) []byte {
	sort.Slice(chs, func(i, j int) bool { return chs[i].ID < chs[j].ID })
	return mustJSON(struct {
		Op       string       `json:"op"`
		Channels []Advertised `json:"channels"`
	}{"advertise", chs})
}

// Status levels.
const (
	LevelInfo    = 0
	LevelWarning = 1
	LevelError   = 2
)

func marshalStatus(level int, msg, id string) []byte {
	return mustJSON(struct {
		Op      string `json:"op"`
		Level   int    `json:"level"`
		Message string `json:"message"`
		ID      string `json:"id,omitempty"`
	}{"status", level, msg, id})
}

// mustJSON marshals a value of this file's types, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("foxws: marshal %T: %v", v, err))
	}
	return b
}
