package controller

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/vrlog/vrlog/codec"
)

// CommandSize is the size of an encoded Command.
const CommandSize = 56

const commandMagic = "VRCM"

// ErrCommand: bytes that are not a Command.
var ErrCommand = errors.New("controller: not a vrlog example command")

// Command is what the controller publishes for each state it processes
// (docs/replay.md, "The example controller"): little-endian, 56 bytes:
//
//	0  [4]byte magic "VRCM"      24 i64 state_t_ns
//	4  u16 version 1             32 f64 force x
//	6  u16 reserved 0            40 f64 force y
//	8  u64 seq (from 0)          48 f64 force z
//	16 u64 state_seq
//
// StateSeq and StateTNs name the state it answers, so a test can match
// every command to its input.
type Command struct {
	Seq      uint64
	StateSeq uint64
	StateTNs int64
	Force    codec.Vec3
}

var le = binary.LittleEndian

// AppendCommand appends the encoding of c.
func AppendCommand(dst []byte, c Command) []byte {
	dst = append(dst, commandMagic...)
	dst = le.AppendUint16(dst, 1)
	dst = le.AppendUint16(dst, 0)
	dst = le.AppendUint64(dst, c.Seq)
	dst = le.AppendUint64(dst, c.StateSeq)
	dst = le.AppendUint64(dst, uint64(c.StateTNs))
	for _, f := range [...]float64{c.Force.X, c.Force.Y, c.Force.Z} {
		dst = le.AppendUint64(dst, math.Float64bits(f))
	}
	return dst
}

// DecodeCommand decodes a Command.
func DecodeCommand(b []byte) (Command, error) {
	if len(b) != CommandSize || string(b[:4]) != commandMagic || le.Uint16(b[4:]) != 1 || le.Uint16(b[6:]) != 0 {
		return Command{}, fmt.Errorf("%w (%d bytes)", ErrCommand, len(b))
	}
	f := func(o int) float64 { return math.Float64frombits(le.Uint64(b[o:])) }
	return Command{Seq: le.Uint64(b[8:]), StateSeq: le.Uint64(b[16:]), StateTNs: int64(le.Uint64(b[24:])),
		Force: codec.Vec3{X: f(32), Y: f(40), Z: f(48)}}, nil
}
