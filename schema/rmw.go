package schema

import (
	"encoding/binary"
	"fmt"

	"github.com/vrlog/vrlog/codec"
)

// ROS 2 over zenoh (rmw_zenoh) attaches to every message its publisher's
// sequence number and send time: the zenoh attachment (a record's header)
// holds, in zenoh-ext's serialization, the string "sequence_number", an
// int64, "source_timestamp", an int64 (ns since the unix epoch), and
// "source_gid", 16 bytes (strings and byte buffers are a LEB128 length and
// their bytes; integers are little-endian).
const (
	RMWSequenceNumber = "rmw_zenoh.sequence_number"  // the counter rmw_zenoh attaches
	RMWSourceTime     = "rmw_zenoh.source_timestamp" // the send time rmw_zenoh attaches
)

// rmwAttachment reads the sequence number and source timestamp of an
// rmw_zenoh attachment.
func rmwAttachment(h []byte) (seq, ts int64, err error) {
	at := 0
	key := func(want string) error {
		n, k := binary.Uvarint(h[at:])
		if k <= 0 || n != uint64(len(want)) || len(h)-at-k < len(want) || string(h[at+k:at+k+len(want)]) != want {
			return &codec.DecodeError{Schema: "rmw_zenoh attachment", Field: want, Offset: at, Err: codec.ErrInvalid, Detail: fmt.Sprintf("want the key %q", want)}
		}
		at += k + len(want)
		return nil
	}
	i64 := func(field string) (int64, error) {
		if len(h)-at < 8 {
			return 0, &codec.DecodeError{Schema: "rmw_zenoh attachment", Field: field, Offset: at, Err: codec.ErrTruncated, Detail: "need 8 bytes"}
		}
		v := int64(binary.LittleEndian.Uint64(h[at:]))
		at += 8
		return v, nil
	}
	if err = key("sequence_number"); err != nil {
		return 0, 0, err
	}
	if seq, err = i64("sequence_number"); err != nil {
		return 0, 0, err
	}
	if err = key("source_timestamp"); err != nil {
		return 0, 0, err
	}
	if ts, err = i64("source_timestamp"); err != nil {
		return 0, 0, err
	}
	if err = key("source_gid"); err != nil {
		return 0, 0, err
	}
	// the gid: 16 bytes, with or without their length (zenoh-c's buffer,
	// zenoh-cpp's array)
	if rest := h[at:]; len(rest) != 16 && (len(rest) != 17 || rest[0] != 16) {
		return 0, 0, &codec.DecodeError{Schema: "rmw_zenoh attachment", Field: "source_gid", Offset: at, Err: codec.ErrInvalid, Detail: fmt.Sprintf("%d bytes, want 16", len(rest))}
	}
	return seq, ts, nil
}

// HasRMWAttachment reports whether a record's header is an rmw_zenoh
// attachment (Resolve takes its sequence number then).
func HasRMWAttachment(header []byte) bool {
	_, _, err := rmwAttachment(header)
	return err == nil
}
