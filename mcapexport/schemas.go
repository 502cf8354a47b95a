package mcapexport

// JSON Schemas (draft 2020-12) of the JSON messages this package writes.
// Foxglove uses them to list fields for plots and the raw message panel;
// tools/mcapcheck validates every exported message against them.

const (
	// SchemaRawImage is Foxglove's well-known name for a raw camera image.
	SchemaRawImage = "foxglove.RawImage"
	// SchemaUndecodable names the JSON messages of "<topic>:undecodable"
	// channels.
	SchemaUndecodable = "vrlog.Undecodable"
)

const jsonSchemaDialect = `"$schema": "https://json-schema.org/draft/2020-12/schema"`

// number allows null, which stands for NaN and ±Inf.
const number = `{"type": ["number", "null"]}`

const timeSchema = `{"type": "object", "title": "time", "properties": {"sec": {"type": "integer", "minimum": 0}, "nsec": {"type": "integer", "minimum": 0, "maximum": 999999999}}, "required": ["sec", "nsec"]}`

const vec3Schema = `{"type": "object", "properties": {"x": ` + number + `, "y": ` + number + `, "z": ` + number + `}, "required": ["x", "y", "z"]}`

const stateSchema = `{` + jsonSchemaDialect + `,
  "title": "vrsdk.State/1",
  "description": "Robot state snapshot (vrsdk wire format v1, docs/wire-format.md). t_ns fields are unix nanoseconds on the simulator clock; elapsed is (t_ns - epoch_ns)/1e9 with the export's epoch.",
  "type": "object",
  "properties": {
    "timestamp": ` + timeSchema + `,
    "seq": {"type": "integer", "minimum": 0},
    "t_ns": {"type": "integer"},
    "elapsed": ` + number + `,
    "estimate_t_ns": {"type": "integer"},
    "position": ` + vec3Schema + `,
    "orientation": {"type": "object", "properties": {"x": ` + number + `, "y": ` + number + `, "z": ` + number + `, "w": ` + number + `}, "required": ["x", "y", "z", "w"]},
    "linear_velocity": ` + vec3Schema + `,
    "angular_velocity": ` + vec3Schema + `,
    "sensors": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0}, "t_ns": {"type": "integer"}}, "required": ["id", "t_ns"]}}
  },
  "required": ["timestamp", "seq", "t_ns", "elapsed", "estimate_t_ns", "position", "orientation", "linear_velocity", "angular_velocity", "sensors"]
}`

// rawImageSchema follows foxglove.RawImage as Foxglove publishes it (JSON
// encoding: bytes as a base64 string).
const rawImageSchema = `{` + jsonSchemaDialect + `,
  "title": "foxglove.RawImage",
  "description": "A raw image",
  "type": "object",
  "properties": {
    "timestamp": ` + timeSchema + `,
    "frame_id": {"type": "string", "description": "Frame of reference for the image (vrlog: camera_<camera_id>)"},
    "width": {"type": "integer", "minimum": 0, "description": "Image width in pixels"},
    "height": {"type": "integer", "minimum": 0, "description": "Image height in pixels"},
    "encoding": {"type": "string", "description": "Encoding of the raw image data: rgb8, bgr8, rgba8, bgra8, mono8, mono16"},
    "step": {"type": "integer", "minimum": 0, "description": "Byte length of a single row"},
    "data": {"type": "string", "contentEncoding": "base64", "description": "Raw image data"}
  },
  "required": ["timestamp", "frame_id", "width", "height", "encoding", "step", "data"]
}`

const timeReplySchema = `{` + jsonSchemaDialect + `,
  "title": "vrsdk.TimeReply/1",
  "description": "Simulator's reply to a clock-sync query: receive (t2) and send (t3) stamps, unix ns on the simulator clock.",
  "type": "object",
  "properties": {"t2_ns": {"type": "integer"}, "t3_ns": {"type": "integer"}},
  "required": ["t2_ns", "t3_ns"]
}`

const clockProbeSchema = `{` + jsonSchemaDialect + `,
  "title": "vrlog.ClockProbe/1",
  "description": "One clock-sync exchange: t1/t4 on the recorder clock, t2/t3 on the simulator clock; offset = ((t2-t1)+(t3-t4))/2, rtt = (t4-t1)-(t3-t2).",
  "type": "object",
  "properties": {
    "t1_ns": {"type": "integer"}, "t2_ns": {"type": "integer"}, "t3_ns": {"type": "integer"}, "t4_ns": {"type": "integer"},
    "offset_ns": {"type": "integer"}, "rtt_ns": {"type": "integer"}
  },
  "required": ["t1_ns", "t2_ns", "t3_ns", "t4_ns", "offset_ns", "rtt_ns"]
}`

const undecodableSchema = `{` + jsonSchemaDialect + `,
  "title": "vrlog.Undecodable",
  "description": "A record whose bytes did not decode as its channel's schema, kept verbatim.",
  "type": "object",
  "properties": {
    "schema": {"type": "string"},
    "error": {"type": "string"},
    "header": {"type": "string", "contentEncoding": "base64"},
    "payload": {"type": "string", "contentEncoding": "base64"}
  },
  "required": ["schema", "error", "header", "payload"]
}`
