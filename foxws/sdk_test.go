package foxws

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/foxglove"
)

// snapshot reads an SDK snapshot (testdata/sdk/README.md): its body after
// the insta header, as bytes (a "[0x.., ...]" list) or as text.
func snapshot(t *testing.T, name string) (raw []byte, text string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sdk", "foxglove__protocol__"+name+".snap"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(string(b), "---\n", 3)
	if len(parts) != 3 {
		t.Fatalf("%s: not an insta snapshot", name)
	}
	text = strings.TrimSpace(parts[2])
	for _, h := range regexp.MustCompile(`0x[0-9a-f]{2}`).FindAllString(text, -1) {
		v, _ := strconv.ParseUint(h[2:], 16, 8)
		raw = append(raw, byte(v))
	}
	return raw, text
}

func TestSDKPlaybackRequests(t *testing.T) {
	for name, want := range map[string]PlaybackRequest{
		"v1__client__tests__playback_control_request_encode_play":           {Command: Play, Speed: 1, RequestID: "some-id"},
		"v1__client__tests__playback_control_request_encode_pause":          {Command: Pause, Speed: 1, RequestID: "some-id"},
		"v1__client__tests__playback_control_request_encode_play_with_seek": {Command: Play, Speed: 1, Seek: true, SeekTime: 123_456_789, RequestID: "some-id"},
	} {
		raw, _ := snapshot(t, name)
		req, err := ParseBinary(raw, true)
		if err != nil || req.Kind != KindPlayback || req.Playback != want {
			t.Errorf("%s: %+v %v, want %+v", name, req.Playback, err, want)
		}
		if got := AppendPlaybackRequest(nil, want); !bytes.Equal(got, raw) {
			t.Errorf("%s: encoded % x, SDK % x", name, got, raw)
		}
		if _, err := ParseBinary(raw, false); err == nil {
			t.Errorf("%s: accepted over foxglove.websocket.v1", name)
		}
	}
}

func TestSDKServerBinary(t *testing.T) {
	for name, got := range map[string][]byte{
		"v1__server__tests__playback_state_encode_playing":                 AppendPlaybackState(nil, PlaybackState{Status: StatusPlaying, Speed: 1, CurrentTime: 12345}),
		"v1__server__tests__playback_state_encode_did_seek":                AppendPlaybackState(nil, PlaybackState{Status: StatusPlaying, Speed: 1, CurrentTime: 12345, DidSeek: true}),
		"v1__server__tests__playback_state_encode_playing_with_request_id": AppendPlaybackState(nil, PlaybackState{Status: StatusPlaying, Speed: 1, CurrentTime: 12345, RequestID: "i-am-a-request"}),
		"v1__server__tests__time_encode":                                   appendTime(nil, 1234567890),
		"v1__server__message_data__tests__encode":                          append(appendMessageDataHead(nil, 30, 1234), `{"key": "value"}`...),
	} {
		raw, _ := snapshot(t, name)
		if !bytes.Equal(got, raw) {
			t.Errorf("%s: % x, SDK % x", name, got, raw)
		}
	}
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(t *testing.T, name string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: snapshot: %v", name, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}

func TestSDKServerJSON(t *testing.T) {
	_, info := snapshot(t, "common__server__server_info__tests__encode_full")
	got := mustJSON(serverInfo{Op: "serverInfo", Name: "example server", Capabilities: []string{"clientPublish", CapTime, CapPlaybackControl},
		Metadata: map[string]string{"key": "value"}, SessionID: "1675789422160", DataStartTime: toStamp(1000000), DataEndTime: toStamp(1000005)})
	// supportedEncodings goes with clientPublish, which vrlog never offers.
	var m map[string]any
	json.Unmarshal(got, &m)
	m["supportedEncodings"] = []any{"json"}
	got, _ = json.Marshal(m)
	jsonEqual(t, "serverInfo", got, info)

	_, adv := snapshot(t, "common__server__advertise__tests__encode")
	var want struct {
		Channels []map[string]any `json:"channels"`
	}
	json.Unmarshal([]byte(adv), &want)
	// Channels 20 and 30 have schemas (JSON Schema text; protobuf bytes in
	// base64), as every vrlog channel has.
	got = marshalAdvertise([]Advertised{
		advertisement(30, "/t3", foxglove.Schema{Name: "t3-schema", Encoding: "protobuf", Data: []byte{0xde, 0xad, 0xbe, 0xef}}, nil),
		advertisement(20, "/t2", foxglove.Schema{Name: "t2-schema", Encoding: "jsonschema", Data: []byte(`{"type": "object"}`)}, nil),
	})
	wantJSON, _ := json.Marshal(map[string]any{"op": "advertise", "channels": want.Channels[1:3]})
	jsonEqual(t, "advertise", got, string(wantJSON))

}
