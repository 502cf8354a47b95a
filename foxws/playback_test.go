package foxws

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// recorded is a Playback that keeps the requests it gets: the server's
// plumbing under test, not a player (the viewer's tests drive a real one).
type recorded struct {
	mu   sync.Mutex
	reqs []PlaybackRequest
}

func (p *recorded) Range() (uint64, uint64) { return 1e9, 5e9 }
func (p *recorded) State() PlaybackState {
	return PlaybackState{Status: StatusPaused, CurrentTime: 1e9, Speed: 1}
}
func (p *recorded) Control(r PlaybackRequest) PlaybackState {
	p.mu.Lock()
	p.reqs = append(p.reqs, r)
	p.mu.Unlock()
	st := PlaybackState{Status: StatusPlaying, CurrentTime: 2e9, Speed: r.Speed, DidSeek: r.Seek}
	if r.Command == Pause {
		st.Status = StatusPaused
	}
	return st
}

func TestPlaybackOnlyOverSDK(t *testing.T) {
	pb := &recorded{}
	s, url := serve(t, Options{Playback: pb})
	sdk, other, v1 := dial(t, url, SubprotocolSDK), dial(t, url, SubprotocolSDK), dial(t, url, SubprotocolV1)
	if caps := fmt.Sprint(sdk.info["capabilities"]); caps != "[time playbackControl]" || sdk.info["dataStartTime"] == nil {
		t.Fatalf("sdk serverInfo %v", sdk.info)
	}
	if caps := fmt.Sprint(v1.info["capabilities"]); caps != "[time]" || v1.info["dataStartTime"] != nil {
		t.Fatalf("v1 serverInfo %v", v1.info)
	}
	for _, c := range []*testClient{sdk, other} {
		c.read() // advertise
		if m := c.read(); m.op != opPlaybackState || m.state.Status != StatusPaused || m.state.CurrentTime != 1e9 {
			t.Fatalf("state on connecting: %+v", m)
		}
	}
	sdk.sendRaw(2, AppendPlaybackRequest(nil, PlaybackRequest{Command: Play, Speed: 2, Seek: true, SeekTime: 3e9, RequestID: "req-1"}))
	for _, c := range []*testClient{sdk, other} {
		m := c.read()
		if m.op != opPlaybackState || m.state != (PlaybackState{Status: StatusPlaying, CurrentTime: 2e9, Speed: 2, DidSeek: true, RequestID: "req-1"}) {
			t.Fatalf("answer %+v", m.state)
		}
	}
	s.PlaybackChanged(PlaybackState{Status: StatusEnded, CurrentTime: 5e9, Speed: 2})
	if m := other.read(); m.state.Status != StatusEnded || m.state.RequestID != "" {
		t.Fatalf("end notice %+v", m.state)
	}
	v1.read() // advertise; then nothing of the playback
	if m, err := v1.tryRead(300 * time.Millisecond); err == nil {
		t.Fatalf("v1 client got %+v", m)
	}
	if len(pb.reqs) != 1 || pb.reqs[0].SeekTime != 3e9 {
		t.Fatalf("requests %+v", pb.reqs)
	}
}
