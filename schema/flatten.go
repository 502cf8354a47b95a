package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Flatten calls visit for each leaf of a decoded message (Decode's JSON),
// in order: an object's members by dotted path ("header.stamp.sec"), an
// array as one leaf (its JSON text), a string as its text, a number as
// written (exact: no float64 round trip), true, false and null as such.
// CSV export makes a column of each path.
func Flatten(msg []byte, visit func(path, value string)) error {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	return flatten(dec, msg, "", visit, 0)
}

func flatten(dec *json.Decoder, msg []byte, path string, visit func(path, value string), depth int) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("schema: flatten: nested deeper than %d", maxJSONDepth)
	}
	start := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("schema: flatten: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			for dec.More() {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return fmt.Errorf("schema: flatten: %w", err)
				}
			}
			if _, err := dec.Token(); err != nil {
				return fmt.Errorf("schema: flatten: %w", err)
			}
			raw := bytes.TrimLeft(msg[start:dec.InputOffset()], " \t\r\n,:")
			var c bytes.Buffer
			json.Compact(&c, raw)
			visit(path, c.String())
			return nil
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return fmt.Errorf("schema: flatten: %w", err)
			}
			p := k.(string)
			if path != "" {
				p = path + "." + p
			}
			if err := flatten(dec, msg, p, visit, depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	case string:
		visit(path, t)
	case json.Number:
		visit(path, t.String())
	case bool:
		visit(path, fmt.Sprint(t))
	case nil:
		visit(path, "")
	}
	return nil
}
