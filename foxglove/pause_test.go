package foxglove

import (
	"encoding/json"
	"testing"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// The recorder's pause records go out as JSON with their schema, not as
// opaque bytes: Foxglove and the MCAP export show when the recording was
// paused and what it did not write.
func TestPauseEncoded(t *testing.T) {
	c := logfmt.Channel{ID: 1, Name: "vrlog/pause", Transport: logfmt.TransportInternal, Topic: "vrlog/pause", Schema: codec.SchemaPause}
	e := NewEncoder(&c, 0)
	if s := e.Schema(); s.Name != codec.SchemaPause || s.Encoding != "jsonschema" || !json.Valid(s.Data) {
		t.Fatalf("schema %s %s", s.Name, s.Encoding)
	}
	p := codec.Pause{FromWallNs: 1e18, FromMonoNs: 5e9, ToWallNs: 1e18 + 2e9, ToMonoNs: 7e9, Unwritten: map[string]uint64{"vr/r1/state": 200, `a"b`: 1}}
	head, tail, err := e.Encode(nil, &logfmt.Record{Channel: 1, RecvWallNs: p.ToWallNs, RecvMonoNs: p.ToMonoNs, Payload: codec.AppendPause(nil, &p)})
	if err != nil || tail != nil {
		t.Fatal(err)
	}
	var m struct {
		Timestamp  struct{ Sec, Nsec int64 }
		FromWallNs int64            `json:"from_wall_ns"`
		Unwritten  map[string]int64 `json:"unwritten"`
	}
	if err := json.Unmarshal(head, &m); err != nil {
		t.Fatalf("%s: %v", head, err)
	}
	if m.Timestamp.Sec != 1e9+2 || m.FromWallNs != 1e18 || m.Unwritten["vr/r1/state"] != 200 || m.Unwritten[`a"b`] != 1 {
		t.Fatalf("%s", head)
	}
}
