package codec

import (
	"encoding/json"
	"fmt"
)

// SchemaPause is a recording's pause (vrlog rec pause, then resume): one
// record on the recorder's internal pause channel, stamped when the
// recording went on, whose JSON payload (Pause) says when it stopped
// writing and what it received meanwhile and did not write.
const SchemaPause = "vrlog.Pause/1"

// Pause is a pause record's payload: its span on the recorder's clocks
// (the record's own receive stamps are its end) and, per channel, the
// records received during it and not written.
type Pause struct {
	FromWallNs int64             `json:"from_wall_ns"`
	FromMonoNs int64             `json:"from_mono_ns"`
	ToWallNs   int64             `json:"to_wall_ns"`
	ToMonoNs   int64             `json:"to_mono_ns"`
	Unwritten  map[string]uint64 `json:"unwritten"`
}

// AppendPause appends p's payload to dst.
func AppendPause(dst []byte, p *Pause) []byte {
	b, _ := json.Marshal(p) // a struct of numbers and a map of strings: never fails
	return append(dst, b...)
}

// DecodePause reads a pause record's payload.
func DecodePause(b []byte) (Pause, error) {
	var p Pause
	if err := json.Unmarshal(b, &p); err != nil {
		return Pause{}, fmt.Errorf("codec: pause record: %w", err)
	}
	if p.ToMonoNs < p.FromMonoNs {
		return Pause{}, fmt.Errorf("codec: pause record: it ends (%d) before it starts (%d)", p.ToMonoNs, p.FromMonoNs)
	}
	return p, nil
}
