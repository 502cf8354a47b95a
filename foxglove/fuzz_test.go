package foxglove

import (
	"encoding/json"
	"testing"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/schema"
)

// FuzzDeclaredJSON: a declared JSON or C-struct channel's Foxglove message
// from any channel meta (a log's, so hostile: its JSON Schema too) and any
// payload: no panic, a schema that is JSON, and every message encoded is
// one JSON value, its "timestamp" added once at most.
func FuzzDeclaredJSON(f *testing.F) {
	for _, line := range []string{
		`a/*/b cstruct struct="uint64_t seq; int64_t t_ns; double x" stamp=t_ns seq=seq`,
		`a/*/b json stamp=header.stamp_ns seq=header.seq`,
	} {
		d, err := schema.Parse(line, ".", "seed")
		if err != nil {
			f.Fatal(err)
		}
		m := d.Resolve(&logfmt.Record{}, false).Meta()
		f.Add(m[schema.MetaEncoding], m[schema.MetaData], m[schema.MetaStamp], m[schema.MetaSeq],
			[]byte(`{"header": {"stamp_ns": 1767225600123456789, "seq": 3}, "x": [1, {"timestamp": 2}]}`))
	}
	f.Add("json", `{"type": "object", "properties": {"timestamp": {"type": "string"}}}`, "t", "n", []byte(`{"t": 1, "n": 2}`))
	f.Add("json", `{"type": "object", "properties": 7}`, "t", "n", []byte(` { } `))
	f.Fuzz(func(t *testing.T, enc, data, stamp, seq string, payload []byte) {
		c := logfmt.Channel{Name: "a/r1/b", Topic: "a/r1/b", Schema: "a/*/b",
			Meta: map[string]string{schema.MetaEncoding: enc, schema.MetaData: data, schema.MetaStamp: stamp, schema.MetaSeq: seq}}
		e := NewEncoder(&c, 0)
		if e.Kind() != KindDeclared {
			return
		}
		if s := e.Schema(); !json.Valid(s.Data) || s.Name != "a/r1/b" {
			t.Fatalf("schema %q: %s", s.Name, s.Data)
		}
		head, _, err := e.Encode([]byte("x"), &logfmt.Record{Payload: payload, CaptureNs: 1767225600123456789, HasStamp: true})
		if err != nil {
			return
		}
		if len(head) < 1 || head[0] != 'x' || !json.Valid(head[1:]) {
			t.Fatalf("message %q", head)
		}
	})
}
