package recorder

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/schema"
)

// A declared channel whose records do not fit its declaration (a C
// struct declared 16 bytes, payloads of 36) is said once, as a problem
// of the channel (record prints it) and in its status, naming the first
// reason; a channel whose records fit, or fail now and then, is not.
func TestUndecodableDeclaredChannelSaidOnce(t *testing.T) {
	var set schema.Set
	for _, line := range []string{`sim/*/pose cstruct struct="uint64_t seq; int64_t t_ns" stamp=t_ns seq=seq`,
		`sim/*/ok cstruct struct="uint64_t seq; int64_t t_ns; double x; double y; uint32_t flags" stamp=t_ns seq=seq`} {
		d, err := schema.Parse(line, ".", "test")
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, d)
	}
	b := newBooks(&Config{Schemas: set}, nil, &subscriptions{})
	payload := func(i int) []byte {
		p := binary.LittleEndian.AppendUint64(nil, uint64(i))
		p = binary.LittleEndian.AppendUint64(p, uint64(1e18+int64(i)*1e7))
		return append(p, make([]byte, 20)...) // x, y, flags: 36 bytes
	}
	var problems []ChannelStatus
	for i := range 100 {
		for _, name := range []string{"sim/r1/pose", "sim/r1/ok"} {
			p := payload(i)
			if name == "sim/r1/ok" && i%3 == 0 {
				p = p[:20] // a third cut short: not said
			}
			s := sample{name: name, topic: name, transport: logfmt.TransportZenoh, rec: logfmt.Record{RecvMonoNs: int64(i), RecvWallNs: int64(i), Payload: p}}
			if a := b.take(&s, written); a.problem != nil {
				problems = append(problems, *a.problem)
			}
		}
	}
	if len(problems) != 1 || problems[0].Name != "sim/r1/pose" ||
		!strings.HasPrefix(problems[0].Warning, "10 of its first 10 records do not fit its declared schema sim/r1/pose: they are written, but have no stamp or seq (") ||
		!strings.Contains(problems[0].Warning, "trailing bytes: the struct is 16 bytes, have 36") {
		t.Fatalf("problems said: %+v", problems)
	}
	for _, c := range b.channels() {
		if (c.Warning == problems[0].Warning) != (c.Name == "sim/r1/pose") || c.Undecodable != map[string]uint64{"sim/r1/pose": 100, "sim/r1/ok": 34}[c.Name] {
			t.Fatalf("status of %s: %d undecodable, warning %q", c.Name, c.Undecodable, c.Warning)
		}
	}
}
