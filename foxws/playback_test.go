package foxws_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/vrlog/vrlog/foxws"
	"github.com/vrlog/vrlog/foxws/foxwstest"
)

// recorded is a Playback that keeps the requests it gets: the server's
// plumbing under test, not a player (the viewer's tests drive a real one).
type recorded struct {
	mu   sync.Mutex
	reqs []foxws.PlaybackRequest
}

func (p *recorded) Range() (uint64, uint64) { return 1e9, 5e9 }
func (p *recorded) State() foxws.PlaybackState {
	return foxws.PlaybackState{Status: foxws.StatusPaused, CurrentTime: 1e9, Speed: 1}
}
func (p *recorded) Control(r foxws.PlaybackRequest) foxws.PlaybackState {
	p.mu.Lock()
	p.reqs = append(p.reqs, r)
	p.mu.Unlock()
	st := foxws.PlaybackState{Status: foxws.StatusPlaying, CurrentTime: 2e9, Speed: r.Speed, DidSeek: r.Seek}
	if r.Command == foxws.Pause {
		st.Status = foxws.StatusPaused
	}
	return st
}

func TestPlaybackOnlyOverSDK(t *testing.T) {
	pb := &recorded{}
	s, url := serve(t, foxws.Options{Playback: pb})
	sdk, other, v1 := foxwstest.Dial(t, url, foxws.SubprotocolSDK), foxwstest.Dial(t, url, foxws.SubprotocolSDK), foxwstest.Dial(t, url, foxws.SubprotocolV1)
	if caps := fmt.Sprint(sdk.Info["capabilities"]); caps != "[time playbackControl]" || sdk.Info["dataStartTime"] == nil {
		t.Fatalf("sdk serverInfo %v", sdk.Info)
	}
	if caps := fmt.Sprint(v1.Info["capabilities"]); caps != "[time]" || v1.Info["dataStartTime"] != nil {
		t.Fatalf("v1 serverInfo %v", v1.Info)
	}
	for _, c := range []*foxwstest.Client{sdk, other} {
		c.Read() // advertise
		if m := c.Read(); m.Op != foxws.OpPlaybackState || m.State.Status != foxws.StatusPaused || m.State.CurrentTime != 1e9 {
			t.Fatalf("state on connecting: %+v", m)
		}
	}
	sdk.SendRaw(websocket.MessageBinary, foxws.AppendPlaybackRequest(nil, foxws.PlaybackRequest{Command: foxws.Play, Speed: 2, Seek: true, SeekTime: 3e9, RequestID: "req-1"}))
	for _, c := range []*foxwstest.Client{sdk, other} {
		m := c.Read()
		if m.Op != foxws.OpPlaybackState || m.State != (foxws.PlaybackState{Status: foxws.StatusPlaying, CurrentTime: 2e9, Speed: 2, DidSeek: true, RequestID: "req-1"}) {
			t.Fatalf("answer %+v", m.State)
		}
	}
	s.PlaybackChanged(foxws.PlaybackState{Status: foxws.StatusEnded, CurrentTime: 5e9, Speed: 2})
	if m := other.Read(); m.State.Status != foxws.StatusEnded || m.State.RequestID != "" {
		t.Fatalf("end notice %+v", m.State)
	}
	v1.Read() // advertise; then nothing of the playback
	if m, err := v1.TryRead(300 * time.Millisecond); err == nil {
		t.Fatalf("v1 client got %+v", m)
	}
	if len(pb.reqs) != 1 || pb.reqs[0].SeekTime != 3e9 {
		t.Fatalf("requests %+v", pb.reqs)
	}
}
