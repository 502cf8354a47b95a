package foxws

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseText(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Kind
		err      string // in the error; "" = no error
	}{
		{"subscribe", `{"op":"subscribe","subscriptions":[{"id":1,"channelId":3},{"id":2,"channelId":4}]}`, KindSubscribe, ""},
		{"subscribe_extra_field", `{"op":"subscribe","subscriptions":[{"id":1,"channelId":3,"x":1}],"y":2}`, KindSubscribe, ""},
		{"unsubscribe", `{"op":"unsubscribe","subscriptionIds":[1,2]}`, KindUnsubscribe, ""},
		{"malformed", `{"op":"subscribe",`, 0, "malformed JSON"},
		{"not_object", `[1,2]`, 0, "malformed JSON"},
		{"no_op", `{"subscriptions":[]}`, 0, `without "op"`},
		{"op_not_string", `{"op":5}`, 0, "malformed JSON"},
		{"unknown_op", `{"op":"explode"}`, 0, `unknown op "explode"`},
		{"advertise", `{"op":"advertise","channels":[]}`, 0, "clientPublish"},
		{"parameters", `{"op":"getParameters","parameterNames":[]}`, 0, "no parameters"},
		{"graph", `{"op":"subscribeConnectionGraph"}`, 0, "connectionGraph"},
		{"asset", `{"op":"fetchAsset","uri":"x","requestId":1}`, 0, "assets"},
		{"subscribe_missing", `{"op":"subscribe"}`, 0, `without "subscriptions"`},
		{"subscribe_negative_id", `{"op":"subscribe","subscriptions":[{"id":-1,"channelId":3}]}`, 0, "subscribe"},
		{"subscribe_big_id", `{"op":"subscribe","subscriptions":[{"id":4294967296,"channelId":3}]}`, 0, "subscribe"},
		{"subscribe_float", `{"op":"subscribe","subscriptions":[{"id":1.5,"channelId":3}]}`, 0, "subscribe"},
		{"subscribe_string", `{"op":"subscribe","subscriptions":"all"}`, 0, "subscribe"},
		{"unsubscribe_missing", `{"op":"unsubscribe"}`, 0, `without "subscriptionIds"`},
		{"too_many", `{"op":"unsubscribe","subscriptionIds":[` + strings.Repeat("1,", MaxSubscriptions) + `1]}`, 0, "at most"},
		{"not_utf8", "{\"op\":\"\xff\"}", 0, "UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseText([]byte(tc.in))
			if tc.err == "" {
				if err != nil || req.Kind != tc.want {
					t.Fatalf("%+v %v", req, err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrBadMessage) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one with %q", err, tc.err)
			}
		})
	}
}

func TestParseBinary(t *testing.T) {
	ok := AppendPlaybackRequest(nil, PlaybackRequest{Command: Pause, Speed: 2, Seek: true, SeekTime: 42, RequestID: "r"})
	for _, tc := range []struct {
		name string
		in   []byte
		sdk  bool
		err  string
	}{
		{"playback", ok, true, ""},
		{"playback_trailing", append(append([]byte{}, ok...), 9, 9), true, ""},
		{"playback_v1", ok, false, "unknown binary opcode 3"},
		{"empty", nil, true, "empty"},
		{"short", ok[:10], true, "at least"},
		{"bad_command", append([]byte{3, 7}, ok[2:]...), true, "playback command 7"},
		{"id_too_long", func() []byte { b := append([]byte{}, ok...); b[15] = 0xff; b[16] = 0xff; return b }(), true, "at most"},
		{"id_short", ok[:len(ok)-1], true, "follow"},
		{"client_publish", []byte{1, 0, 0, 0, 0}, true, "clientPublish"},
		{"service_call", []byte{2}, true, "services"},
		{"unknown", []byte{0x77}, true, "unknown binary opcode 119"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseBinary(tc.in, tc.sdk)
			if tc.err == "" {
				if err != nil || req.Kind != KindPlayback {
					t.Fatalf("%+v %v", req, err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrBadMessage) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one with %q", err, tc.err)
			}
		})
	}
	// A speed that is not one keeps the speed (0 in the request).
	for _, sp := range []float32{0, -1, float32(math.NaN()), float32(math.Inf(1))} {
		req, err := ParseBinary(AppendPlaybackRequest(nil, PlaybackRequest{Speed: sp}), true)
		if err != nil || req.Playback.Speed != 0 {
			t.Errorf("speed %v: %+v %v", sp, req.Playback, err)
		}
	}
}

// FuzzParseText: any text gets a request or an ErrBadMessage, never a
// panic, and what parses is within the limits.
func FuzzParseText(f *testing.F) {
	for _, s := range []string{`{"op":"subscribe","subscriptions":[{"id":1,"channelId":3}]}`, `{"op":"unsubscribe","subscriptionIds":[1]}`,
		`{"op":"advertise"}`, `{"op":"x"}`, `{`, `null`, `{"op":null}`, `{"op":"subscribe","subscriptions":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := ParseText(b)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) {
				t.Fatalf("error outside ErrBadMessage: %v", err)
			}
			return
		}
		if len(req.Subscriptions) > MaxSubscriptions || len(req.SubscriptionIDs) > MaxSubscriptions {
			t.Fatalf("over the limits: %+v", req)
		}
	})
}

// FuzzParseBinary: the same for binary messages, and a parsed playback
// request encodes back to a message that parses to it.
func FuzzParseBinary(f *testing.F) {
	f.Add(AppendPlaybackRequest(nil, PlaybackRequest{Command: Play, Speed: 1, RequestID: "some-id"}), true)
	f.Add(AppendPlaybackRequest(nil, PlaybackRequest{Command: Pause, Speed: 0.5, Seek: true, SeekTime: 1 << 62}), true)
	f.Add([]byte{1, 2, 3}, false)
	f.Add([]byte{}, true)
	f.Fuzz(func(t *testing.T, b []byte, sdk bool) {
		req, err := ParseBinary(b, sdk)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) {
				t.Fatalf("error outside ErrBadMessage: %v", err)
			}
			return
		}
		p := req.Playback
		if len(p.RequestID) > MaxRequestID || (p.Speed != 0 && !(p.Speed > 0)) {
			t.Fatalf("over the limits: %+v", p)
		}
		again, err := ParseBinary(AppendPlaybackRequest(nil, p), true)
		if err != nil || again.Playback != p {
			t.Fatalf("round trip: %+v %v, want %+v", again.Playback, err, p)
		}
	})
}
