package schema

import (
	"encoding/base64"
	"fmt"
	"sync"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// Channel meta keys of a declared channel (docs/log-format.md §5,
// docs/schemas.md). A channel carries them when the recorder was given a
// declaration for it, or (stamp and seq only) when its zenoh samples
// carry a timestamp; the channel's schema field holds the message name.
const (
	MetaEncoding = "vrlog.schema.encoding" // protobuf, json, ros2msg, cstruct or none
	MetaData     = "vrlog.schema.data"     // the schema: base64 FileDescriptorSet, ros2msg text, struct layout, JSON schema
	MetaStamp    = "vrlog.schema.stamp"    // field path(s), zenoh.timestamp or receive
	MetaUnit     = "vrlog.schema.unit"
	MetaEpoch    = "vrlog.schema.epoch"
	MetaSeq      = "vrlog.schema.seq" // field path, zenoh.source_sn or count
	MetaKind     = "vrlog.schema.kind"
	MetaEndian   = "vrlog.schema.endian"
)

// Resolve fixes what d left to the channel's first sample (first, whose
// zenoh timestamp, if any, is zenohTs): a stamp not named is the zenoh
// timestamp when the sample has one, else the receive stamp; a counter not
// named is the rmw_zenoh sequence number when the sample's header is an
// rmw_zenoh attachment, else the zenoh source sequence number when it has
// source info, else the record count.
func (d *Decl) Resolve(first *logfmt.Record, hasZenohTs bool) *Decl {
	r := *d
	if r.Stamp == "" {
		r.Stamp = Receive
		if hasZenohTs {
			r.Stamp = ZenohTimestamp
		}
	}
	if r.Seq == "" {
		switch {
		case HasRMWAttachment(first.Header):
			r.Seq = RMWSequenceNumber
		case first.HasPubSN:
			r.Seq = ZenohSourceSN
		default:
			r.Seq = Count
		}
	}
	return &r
}

// Meta is the channel meta that stores d (resolved: Resolve).
func (d *Decl) Meta() map[string]string {
	m := map[string]string{MetaEncoding: d.Encoding, MetaStamp: d.Stamp, MetaSeq: d.Seq}
	data := string(d.Data)
	if d.Encoding == EncProtobuf {
		data = base64.StdEncoding.EncodeToString(d.Data)
	}
	for k, v := range map[string]string{MetaData: data, MetaUnit: d.Unit, MetaEpoch: d.Epoch, MetaKind: d.Kind, MetaEndian: d.Endian} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// TransportMeta is the meta of an undeclared zenoh channel whose stamps
// come from the transport, or nil when its first sample (first, with its
// zenoh timestamp if hasZenohTs) carries none: a zenoh timestamp, else an
// rmw_zenoh attachment's source timestamp, for the stamp; the counter as
// Resolve picks it.
func TransportMeta(first *logfmt.Record, hasZenohTs bool) map[string]string {
	d := &Decl{Encoding: EncNone}
	switch {
	case hasZenohTs:
		d.Stamp = ZenohTimestamp
	case HasRMWAttachment(first.Header):
		d.Stamp = RMWSourceTime
	default:
		return nil
	}
	m := d.Resolve(first, hasZenohTs).Meta()
	delete(m, MetaEncoding) // the payload stays raw: its schema is unknown
	return m
}

// FromChannel returns the declaration a channel's meta stores; ok is
// false for a channel without one.
func FromChannel(c *logfmt.Channel) (d *Decl, ok bool, err error) {
	enc, declared := c.Meta[MetaEncoding]
	stamp, stamped := c.Meta[MetaStamp] // without an encoding: transport stamps (TransportMeta)
	if !declared && !stamped {
		return nil, false, nil
	}
	if !declared {
		enc = EncNone
	}
	d = &Decl{Pattern: c.Name, Encoding: enc, Name: c.Schema, Stamp: stamp, Unit: c.Meta[MetaUnit], Epoch: c.Meta[MetaEpoch],
		Seq: c.Meta[MetaSeq], Kind: c.Meta[MetaKind], Endian: c.Meta[MetaEndian], Data: []byte(c.Meta[MetaData]),
		Where: "channel " + c.Name}
	if enc == EncProtobuf {
		if d.Data, err = base64.StdEncoding.DecodeString(c.Meta[MetaData]); err != nil {
			return nil, true, fmt.Errorf("%w: channel %s: %s is not base64: %v", ErrDecl, c.Name, MetaData, err)
		}
	}
	return d, true, nil
}

// compiled caches the codecs compiled from channel meta: a log's channel
// table is read by several tools in one process, and a descriptor takes
// a while to build.
var compiled sync.Map // string (the meta, flattened) → *Codec or error

// ForChannel returns the codec of a declared channel (nil, false for one
// without a declaration); a declaration that does not compile is an
// error naming the channel.
func ForChannel(c *logfmt.Channel) (*Codec, bool, error) {
	d, ok, err := FromChannel(c)
	if !ok || err != nil {
		return nil, ok, err
	}
	key := c.Schema + "\x00" + flattenMeta(c.Meta)
	if v, hit := compiled.Load(key); hit {
		if e, bad := v.(error); bad {
			return nil, true, e
		}
		return v.(*Codec), true, nil
	}
	cd, err := Compile(d)
	if err != nil {
		err = fmt.Errorf("channel %s: %w", c.Name, err)
		compiled.Store(key, err)
		return nil, true, err
	}
	compiled.Store(key, cd)
	return cd, true, nil
}

func flattenMeta(m map[string]string) string {
	var s string
	for _, k := range []string{MetaEncoding, MetaData, MetaStamp, MetaUnit, MetaEpoch, MetaSeq, MetaKind, MetaEndian} {
		s += k + "=" + m[k] + "\x00"
	}
	return s
}

// Lookup returns a channel's codec: a built-in schema's (codec.Lookup),
// or its declaration's. ok is false for a channel vrlog cannot decode
// (raw, or a declaration that does not compile: ForChannel says why).
func Lookup(c *logfmt.Channel) (codec.Codec, bool) {
	if _, declared := c.Meta[MetaEncoding]; !declared {
		return codec.Lookup(c.Schema)
	}
	cd, _, err := ForChannel(c)
	if err != nil || cd.decl.Encoding == EncNone {
		return nil, false
	}
	return cd, true
}
