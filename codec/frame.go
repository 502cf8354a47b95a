package codec

import "fmt"

const (
	frameMagic = "VRFM"
	// FrameHeaderSize is the size of the frame header (the iceoryx2 user header).
	FrameHeaderSize = 48
	// FrameHeaderAlign is the frame header's alignment, as declared to iceoryx2.
	FrameHeaderAlign = 8
)

// PixelEncoding says how pixel bytes are laid out.
type PixelEncoding uint16

// Pixel encodings of vrsdk.Frame/1.
const (
	RGB8   PixelEncoding = 1
	BGR8   PixelEncoding = 2
	RGBA8  PixelEncoding = 3
	BGRA8  PixelEncoding = 4
	Mono8  PixelEncoding = 5
	Mono16 PixelEncoding = 6
)

var encodings = [...]struct {
	name string
	bpp  uint32
}{
	RGB8: {"rgb8", 3}, BGR8: {"bgr8", 3}, RGBA8: {"rgba8", 4}, BGRA8: {"bgra8", 4}, Mono8: {"mono8", 1}, Mono16: {"mono16", 2},
}

// Valid reports whether e is a known encoding.
func (e PixelEncoding) Valid() bool { return e >= RGB8 && int(e) < len(encodings) }

// BytesPerPixel is 0 for an unknown encoding.
func (e PixelEncoding) BytesPerPixel() uint32 {
	if !e.Valid() {
		return 0
	}
	return encodings[e].bpp
}

// String is the ROS-style name (rgb8, mono16, ...).
func (e PixelEncoding) String() string {
	if !e.Valid() {
		return fmt.Sprintf("encoding(%d)", uint16(e))
	}
	return encodings[e].name
}

// ParsePixelEncoding is the inverse of String.
func ParsePixelEncoding(s string) (PixelEncoding, error) {
	for e := RGB8; e.Valid(); e++ {
		if encodings[e].name == s {
			return e, nil
		}
	}
	return 0, fmt.Errorf("codec: unknown pixel encoding %q (want rgb8, bgr8, rgba8, bgra8, mono8 or mono16)", s)
}

// MarshalText makes encodings readable in JSON.
func (e PixelEncoding) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText parses a name written by MarshalText.
func (e *PixelEncoding) UnmarshalText(b []byte) error {
	v, err := ParsePixelEncoding(string(b))
	*e = v
	return err
}

// FrameHeader is the camera frame's metadata, carried as the iceoryx2 user
// header. Elapsed is derived at decode time.
type FrameHeader struct {
	Seq      uint64        `json:"seq"`
	TNs      int64         `json:"t_ns"`
	Elapsed  float64       `json:"elapsed"`
	CameraID uint32        `json:"camera_id"`
	Width    uint32        `json:"width"`
	Height   uint32        `json:"height"`
	Stride   uint32        `json:"stride"`
	Encoding PixelEncoding `json:"encoding"`
	DataSize uint64        `json:"data_size"`
}

// Frame is a decoded frame; Pixels aliases the payload it was decoded from.
type Frame struct {
	FrameHeader
	Pixels []byte `json:"-"`
}

// DecodeFrameHeader decodes and validates a frame header without touching a
// pixel; it does not allocate.
func DecodeFrameHeader(b []byte, epochNs int64) (FrameHeader, error) {
	if err := checkPrefix(SchemaFrame, b, frameMagic, FrameHeaderSize); err != nil {
		return FrameHeader{}, err
	}
	if len(b) < FrameHeaderSize {
		f, off := frameLayout.fieldAt(len(b))
		return FrameHeader{}, decodeErr(SchemaFrame, f, off, ErrTruncated, "need %d bytes, have %d", FrameHeaderSize, len(b))
	}
	if len(b) > FrameHeaderSize {
		return FrameHeader{}, decodeErr(SchemaFrame, "end", FrameHeaderSize, ErrTrailingBytes, "header is %d bytes, have %d", FrameHeaderSize, len(b))
	}
	h := FrameHeader{
		Encoding: PixelEncoding(le.Uint16(b[6:])),
		Seq:      le.Uint64(b[8:]),
		TNs:      int64(le.Uint64(b[16:])),
		CameraID: le.Uint32(b[24:]),
		Width:    le.Uint32(b[28:]),
		Height:   le.Uint32(b[32:]),
		Stride:   le.Uint32(b[36:]),
		DataSize: le.Uint64(b[40:]),
	}
	if !h.Encoding.Valid() {
		return FrameHeader{}, decodeErr(SchemaFrame, "encoding", 6, ErrInvalid, "unknown pixel encoding %d", uint16(h.Encoding))
	}
	if min := uint64(h.Width) * uint64(h.Encoding.BytesPerPixel()); uint64(h.Stride) < min {
		return FrameHeader{}, decodeErr(SchemaFrame, "stride", 36, ErrInvalid, "stride %d < width %d × %d bytes per pixel", h.Stride, h.Width, h.Encoding.BytesPerPixel())
	}
	if want := uint64(h.Stride) * uint64(h.Height); h.DataSize != want {
		return FrameHeader{}, decodeErr(SchemaFrame, "data_size", 40, ErrInvalid, "data_size %d != stride %d × height %d", h.DataSize, h.Stride, h.Height)
	}
	h.Elapsed = Elapsed(h.TNs, epochNs)
	return h, nil
}

// DecodeFrame decodes the header and checks the payload's size against it.
// The returned Frame's Pixels aliases payload.
func DecodeFrame(header, payload []byte, epochNs int64) (Frame, error) {
	h, err := DecodeFrameHeader(header, epochNs)
	if err != nil {
		return Frame{}, err
	}
	if uint64(len(payload)) != h.DataSize {
		return Frame{}, decodeErr(SchemaFrame, "payload", 0, ErrInvalid, "payload is %d bytes, header says %d", len(payload), h.DataSize)
	}
	return Frame{FrameHeader: h, Pixels: payload}, nil
}

// FrameStamp reads seq and t_ns from a frame header after full validation.
func FrameStamp(header []byte) (seq uint64, tNs int64, err error) {
	h, err := DecodeFrameHeader(header, 0)
	return h.Seq, h.TNs, err
}

// AppendFrameHeader appends the encoding of h to dst. DataSize is written as
// given; NewFrameHeader fills it consistently.
func AppendFrameHeader(dst []byte, h *FrameHeader) []byte {
	dst = append(dst, frameMagic...)
	dst = le.AppendUint16(dst, 1)
	dst = le.AppendUint16(dst, uint16(h.Encoding))
	dst = le.AppendUint64(dst, h.Seq)
	dst = le.AppendUint64(dst, uint64(h.TNs))
	dst = le.AppendUint32(dst, h.CameraID)
	dst = le.AppendUint32(dst, h.Width)
	dst = le.AppendUint32(dst, h.Height)
	dst = le.AppendUint32(dst, h.Stride)
	dst = le.AppendUint64(dst, h.DataSize)
	return dst
}

// NewFrameHeader fills stride (unpadded) and data size for a width×height
// image in encoding e.
func NewFrameHeader(seq uint64, tNs int64, cameraID, width, height uint32, e PixelEncoding) FrameHeader {
	stride := width * e.BytesPerPixel()
	return FrameHeader{Seq: seq, TNs: tNs, CameraID: cameraID, Width: width, Height: height,
		Stride: stride, Encoding: e, DataSize: uint64(stride) * uint64(height)}
}

// ShiftFrameHeader adds delta to the header's t_ns in place (replay --restamp).
func ShiftFrameHeader(b []byte, delta int64) error {
	if _, err := DecodeFrameHeader(b, 0); err != nil {
		return err
	}
	shift(b[16:], delta)
	return nil
}

var frameLayout = layout{{"magic", 0}, {"version", 4}, {"encoding", 6}, {"seq", 8}, {"t_ns", 16},
	{"camera_id", 24}, {"width", 28}, {"height", 32}, {"stride", 36}, {"data_size", 40}}
