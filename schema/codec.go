package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// kind is what a field path resolves to.
type kind uint8

const (
	kInt     kind = iota + 1 // a signed integer
	kUint                    // an unsigned integer (bool and enum too)
	kFloat                   // a float
	kMessage                 // a nested message or struct
	kOther                   // a string, bytes, an array: not a stamp or a counter
)

func (k kind) String() string {
	return [...]string{"?", "signed integer", "unsigned integer", "float", "message", "string, bytes or array"}[k]
}

// num is one scalar read from a payload.
type num struct {
	k      kind
	absent bool // protobuf: the field is not in the message (its zero value)
	i      int64
	u      uint64
	f      float64
}

// ref is a format's handle on a resolved field.
type ref any

// format is one encoding's access to its payloads.
type format interface {
	// resolve finds the field at path; its kind, for the declaration's checks.
	resolve(path []string) (ref, kind, error)
	// read checks that the payload parses and reads the fields refs name
	// into out (len(refs)).
	read(header, payload []byte, refs []ref, out []num) error
	// json appends the whole message as JSON.
	json(dst, header, payload []byte) ([]byte, error)
	// write sets the fields refs name to vals, in place when the encoding
	// allows it (else a new payload: resized true).
	write(header, payload []byte, refs []ref, vals []num) (out []byte, resized bool, err error)
}

// Codec reads declared payloads: it implements codec.Codec (and
// codec.Resizer), and StampRecord, the recorder's stamp.
type Codec struct {
	decl  Decl
	f     format
	stamp stampSpec
	seq   seqSpec
	refs  []ref // stamp refs, then the seq ref
}

var _ codec.Resizer = (*Codec)(nil)

// Decl is the declaration c was compiled from.
func (c *Codec) Decl() *Decl { return &c.decl }

// Schema is the channel's schema name: the declared message name.
func (c *Codec) Schema() string { return c.decl.Name }

// Compile checks a declaration against its schema (the fields it names
// exist and have a stamp's or a counter's type) and returns its codec.
func Compile(d *Decl) (*Codec, error) {
	c := &Codec{decl: *d}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrDecl, fmt.Sprintf(format, args...))
	}
	var err error
	switch d.Encoding {
	case EncProtobuf:
		c.f, err = newProtoFormat(d.Data, d.Name)
	case EncJSON:
		c.f = jsonFormat{}
		if len(d.Data) > 0 && !json.Valid(d.Data) { // a log's meta: the MCAP export would store it as the schema
			err = errors.New("json_schema: not JSON")
		}
	case EncROS2:
		c.f, err = newCDRFormat(d.Data, d.Name)
	case EncCStruct:
		c.f, err = newStructFormat(string(d.Data), d.Endian)
	case EncNone:
		c.f = noneFormat{}
	default:
		err = fmt.Errorf("encoding %q: want protobuf, json, ros2msg, cstruct or none", d.Encoding)
	}
	if err != nil {
		return nil, bad("%s %s: %v", d.Encoding, d.Name, err)
	}
	if err := c.compileStamp(); err != nil {
		return nil, bad("%s %s: stamp=%s: %v", d.Encoding, d.Name, d.Stamp, err)
	}
	if err := c.compileSeq(); err != nil {
		return nil, bad("%s %s: seq=%s: %v", d.Encoding, d.Name, d.Seq, err)
	}
	switch d.Kind {
	case "", "state", "frame":
	default:
		return nil, bad("kind=%s: want state or frame", d.Kind)
	}
	return c, nil
}

// resolve resolves a dotted path, naming it in errors.
func (c *Codec) resolve(path string) (ref, kind, error) {
	if path == "" || strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, "..") {
		return nil, 0, fmt.Errorf("field path %q: want names joined by dots (header.stamp)", path)
	}
	r, k, err := c.f.resolve(strings.Split(path, "."))
	if err != nil {
		return nil, 0, fmt.Errorf("field %s: %w", path, err)
	}
	return r, k, nil
}

// errNoField: a path names no field of the schema.
var errNoField = errors.New("no such field")

// Stamp returns the declared seq and capture stamp (unix ns) of a sample
// whose stamp and counter are both in the payload; codec.ErrNoStamp when
// either comes from the transport (StampRecord reads those).
func (c *Codec) Stamp(header, payload []byte) (seq uint64, tNs int64, err error) {
	if !inSample(c.stamp.src) || !inSample(c.seq.src) {
		return 0, 0, codec.ErrNoStamp
	}
	return c.payloadStamp(header, payload)
}

// inSample: a source in the sample's own bytes (payload or header).
func inSample(src int) bool { return src == srcPayload || src == srcRMW }

// payloadStamp reads the stamp and counter the sample's bytes hold: the
// payload's fields, the rmw_zenoh attachment (0 where they come from
// elsewhere).
func (c *Codec) payloadStamp(header, payload []byte) (seq uint64, tNs int64, err error) {
	var buf [3]num
	vals := buf[:len(c.refs)]
	if err := c.f.read(header, payload, c.refs, vals); err != nil {
		return 0, 0, c.decodeErr(err)
	}
	if c.stamp.src == srcPayload {
		if tNs, err = c.stamp.ns(vals); err != nil {
			return 0, 0, c.decodeErr(err)
		}
	}
	if c.seq.src == srcPayload {
		v := vals[len(vals)-1]
		switch v.k {
		case kUint:
			seq = v.u
		default:
			seq = uint64(v.i)
		}
	}
	if c.stamp.src == srcRMW || c.seq.src == srcRMW {
		rseq, rts, err := rmwAttachment(header)
		if err != nil {
			return 0, 0, err
		}
		if c.stamp.src == srcRMW {
			tNs = rts
		}
		if c.seq.src == srcRMW {
			seq = uint64(rseq)
		}
	}
	return seq, tNs, nil
}

// Arrival is what the transport knew of a sample besides its bytes and
// its record's fields.
type Arrival struct {
	ZenohNs    int64 // the zenoh timestamp, unix ns
	HasZenohTs bool
	Count      uint64 // the channel's records so far, this one included (seq=count)
}

// StampRecord sets rec's capture stamp and seq (HasStamp) as the
// declaration says: from the payload, the zenoh timestamp, the zenoh
// source sequence number, or the record count. A payload that does not
// parse, or a transport stamp the sample lacks, is an error and leaves
// rec unstamped.
func (c *Codec) StampRecord(rec *logfmt.Record, a Arrival) error {
	seq, t, err := c.payloadStamp(rec.Header, rec.Payload)
	if err != nil {
		return err
	}
	if c.stamp.src == srcReceive {
		t = rec.RecvWallNs
	}
	if c.stamp.src == srcZenoh {
		if !a.HasZenohTs {
			return &codec.DecodeError{Schema: c.decl.Name, Field: ZenohTimestamp, Err: codec.ErrInvalid, Detail: "the sample has no zenoh timestamp"}
		}
		t = a.ZenohNs
	}
	switch c.seq.src {
	case srcZenoh:
		if !rec.HasPubSN {
			return &codec.DecodeError{Schema: c.decl.Name, Field: ZenohSourceSN, Err: codec.ErrInvalid, Detail: "the sample has no zenoh source info"}
		}
		seq = rec.PublisherSN
	case srcCount:
		seq = a.Count
	}
	rec.Seq, rec.CaptureNs, rec.HasStamp = seq, t, true
	return nil
}

// decodeErr makes a format's error a *codec.DecodeError naming the schema.
func (c *Codec) decodeErr(err error) error {
	if de, ok := errors.AsType[*codec.DecodeError](err); ok {
		if de.Schema == "" {
			de.Schema = c.decl.Name
		}
		return de
	}
	return &codec.DecodeError{Schema: c.decl.Name, Field: "payload", Err: codec.ErrInvalid, Detail: err.Error()}
}

// Decode returns the whole message as JSON (a json.RawMessage); epochNs is
// not used (the message has no elapsed).
func (c *Codec) Decode(header, payload []byte, _ int64) (any, error) {
	b, err := c.f.json(nil, header, payload)
	if err != nil {
		return nil, c.decodeErr(err)
	}
	return json.RawMessage(b), nil
}

// AppendJSON appends the message as JSON.
func (c *Codec) AppendJSON(dst, header, payload []byte) ([]byte, error) {
	b, err := c.f.json(dst, header, payload)
	if err != nil {
		return dst, c.decodeErr(err)
	}
	return b, nil
}

// Restamp adds delta to the payload's stamp in place (replay --restamp);
// codec.ErrResize when the shifted stamp does not fit in the same bytes
// (RestampResized gives it then), codec.ErrNoStamp when the stamp is not
// in the payload. Nothing changes on error.
func (c *Codec) Restamp(header, payload []byte, delta int64) error {
	_, resized, err := c.restamp(header, payload, delta)
	if err == nil && resized {
		return codec.ErrResize
	}
	return err
}

// RestampResized returns the payload with its stamp shifted by delta:
// payload itself, changed in place, when the stamp fits in its bytes.
func (c *Codec) RestampResized(header, payload []byte, delta int64) ([]byte, error) {
	out, _, err := c.restamp(header, payload, delta)
	return out, err
}

func (c *Codec) restamp(header, payload []byte, delta int64) ([]byte, bool, error) {
	if c.stamp.src != srcPayload {
		return nil, false, codec.ErrNoStamp
	}
	var buf [3]num
	vals := buf[:len(c.stamp.refs)]
	if err := c.f.read(header, payload, c.stamp.refs, vals); err != nil {
		return nil, false, c.decodeErr(err)
	}
	t, err := c.stamp.ns(vals)
	if err != nil {
		return nil, false, c.decodeErr(err)
	}
	if err := c.stamp.set(vals, t+delta); err != nil {
		return nil, false, c.decodeErr(err)
	}
	out, resized, err := c.f.write(header, payload, c.stamp.refs, vals)
	if err != nil {
		return nil, false, c.decodeErr(err)
	}
	return out, resized, nil
}

// clampInt converts a float to int64, false when it does not fit.
func clampInt(f float64) (int64, bool) {
	if math.IsNaN(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return 0, false
	}
	return int64(f), true
}

// Recheck decodes a recorded record's stamp again from its payload
// (analyze --full-decode): the payload's fields are read anew, the
// transport's (zenoh timestamp, source info, count) are the ones stored.
func (c *Codec) Recheck(r *logfmt.Record) (seq uint64, tNs int64, err error) {
	cp := *r
	if err := c.StampRecord(&cp, Arrival{ZenohNs: r.CaptureNs, HasZenohTs: r.HasStamp, Count: r.Seq}); err != nil {
		return 0, 0, err
	}
	return cp.Seq, cp.CaptureNs, nil
}

// Check reports whether a payload parses under the declaration (the
// stamp's fields are not read).
func (c *Codec) Check(header, payload []byte) error {
	if err := c.f.read(header, payload, nil, nil); err != nil {
		return c.decodeErr(err)
	}
	return nil
}

// JSONSchema is a JSON Schema of Decode's messages: a JSON declaration's
// own (json_schema=FILE) or one that says they are objects; a C struct's
// fields with their types.
func (c *Codec) JSONSchema() []byte {
	if c.decl.Encoding == EncJSON && len(c.decl.Data) > 0 {
		return c.decl.Data
	}
	b := []byte(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "title": `)
	b = strconv.AppendQuote(b, c.decl.Name)
	b = append(b, `, "type": "object"`...)
	if sf, ok := c.f.(*structFormat); ok {
		b = append(b, `, "properties": {`...)
		for i, f := range sf.fields {
			if i > 0 {
				b = append(b, ", "...)
			}
			typ := `{"type": "integer"}`
			if f.typ.k == kFloat {
				typ = `{"type": ["number", "null"]}`
			}
			if f.n > 1 {
				typ = `{"type": "array", "items": ` + typ + `}`
			}
			b = strconv.AppendQuote(b, f.name)
			b = append(b, ": "+typ...)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}
