package foxglove

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/codec"
)

func TestAppendStateJSONNaN(t *testing.T) {
	s := codec.State{Seq: 1, TNs: -5}
	s.Position.X = nan()
	b := AppendStateJSON(nil, &s)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if m["position"].(map[string]any)["x"] != nil || !strings.Contains(string(b), `"timestamp":{"sec":0,"nsec":0}`) {
		t.Fatalf("%s", b)
	}
}

func nan() float64 { var z float64; return z / z }

func TestAppendStringEscapes(t *testing.T) {
	in := "a\"b\\c\n\x01\xffé"
	b := appendString(nil, in)
	var out string
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if out != "a\"b\\c\n\x01\ufffdé" {
		t.Fatalf("%q", out)
	}
}
