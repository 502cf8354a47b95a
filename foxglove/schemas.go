package foxglove

import (
	"encoding/json"
	"strings"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/schema"
)

// Schema is the schema of a Foxglove channel's messages: its name (a
// protobuf message's full name, or the vrlog schema), its encoding
// ("protobuf": a binary FileDescriptorSet; "jsonschema": a JSON Schema) and
// its bytes.
type Schema struct {
	Name     string
	Encoding string
	Data     []byte
}

// MessageEncoding is the encoding of the messages that go with s:
// "protobuf", "cdr" (a ros2msg schema) or "json".
func (s Schema) MessageEncoding() string {
	switch s.Encoding {
	case "protobuf":
		return "protobuf"
	case "ros2msg":
		return "cdr"
	}
	return "json"
}

// Kind says how a channel's records become messages.
type Kind int

const (
	KindJSON      Kind = iota // decoded by its codec, a JSON message
	KindRawImage              // vrsdk.Frame/1: protobuf foxglove.RawImage
	KindHeartbeat             // the recorder's marks: JSON vrlog.Heartbeat/1
	KindOpaque                // unknown schema: JSON vrlog.Opaque (bytes in base64)
	KindNative                // a declared protobuf or ROS 2 CDR schema: the payload as it is
	KindDeclared              // a declared JSON or C struct schema: its JSON
)

// builtinSchema returns the schema of the messages of a channel whose
// vrlog schema is name (one vrlog defines, else vrlog.Opaque), and how its
// records are encoded.
func builtinSchema(name string) (Schema, Kind) {
	switch name {
	case codec.SchemaState:
		return Schema{codec.SchemaState, "jsonschema", []byte(stateSchema)}, KindJSON
	case codec.SchemaFrame:
		return Schema{SchemaRawImage, "protobuf", rawImageDescriptor}, KindRawImage
	case codec.SchemaTimeReply:
		return Schema{codec.SchemaTimeReply, "jsonschema", []byte(timeReplySchema)}, KindJSON
	case codec.SchemaClockProbe:
		return Schema{codec.SchemaClockProbe, "jsonschema", []byte(clockProbeSchema)}, KindJSON
	case codec.SchemaReplayClock:
		return Schema{codec.SchemaReplayClock, "jsonschema", []byte(replayClockSchema)}, KindJSON
	case codec.SchemaHeartbeat:
		return Schema{codec.SchemaHeartbeat, "jsonschema", []byte(heartbeatSchema)}, KindHeartbeat
	case codec.SchemaPause:
		return Schema{codec.SchemaPause, "jsonschema", []byte(pauseSchema)}, KindJSON
	}
	return Schema{SchemaOpaque, "jsonschema", []byte(opaqueSchema)}, KindOpaque
}

// declaredSchema is the schema of a channel with a declared schema
// (package schema, docs/schemas.md) and how its records are encoded:
// protobuf with its FileDescriptorSet and ROS 2 CDR with its ros2msg text
// carry the payload as it is (Foxglove and the MCAP libraries decode
// them); JSON and a C struct's fields go as JSON with a JSON schema.
//
// A JSON or C-struct message is named by its declaration's name=, else by
// its channel (channel): a log recorded before declarations named their
// channels has the declaration's pattern there (team/*/cmd), which names
// no message.
func declaredSchema(sc *schema.Codec, channel string) (Schema, Kind) {
	d := sc.Decl()
	switch d.Encoding {
	case schema.EncProtobuf:
		return Schema{d.Name, "protobuf", d.Data}, KindNative
	case schema.EncROS2:
		return Schema{d.Name, "ros2msg", d.Data}, KindNative
	}
	name := d.Name
	if strings.Contains(name, "*") {
		name = channel
	}
	return Schema{name, "jsonschema", sc.JSONSchema()}, KindDeclared
}

// stampedSchema is a declared JSON message's schema with a foxglove-style
// "timestamp" {sec, nsec} property, the record's capture stamp: as the
// built-in schemas' messages, so that Foxglove, whose numbers are
// JavaScript's, plots a stamp past 2^53 ns exactly. ok false, and js as
// it is, when the schema is not an object's or has a "timestamp" already.
// A schema that lists no properties (JSON declared without json_schema)
// stays as it is: it allows any, and a message's own "timestamp" too.
func stampedSchema(js []byte) (_ []byte, ok bool) {
	var doc map[string]any
	if json.Unmarshal(js, &doc) != nil || (doc["type"] != nil && doc["type"] != "object") {
		return js, false
	}
	if doc["properties"] == nil {
		return js, true
	}
	props, _ := doc["properties"].(map[string]any)
	if props == nil {
		return js, false
	}
	if _, taken := props["timestamp"]; taken {
		return js, false
	}
	var ts any
	json.Unmarshal([]byte(timeSchema), &ts) // a constant: it parses
	props["timestamp"] = ts
	doc["properties"] = props
	b, err := json.Marshal(doc)
	if err != nil {
		return js, false
	}
	return b, true
}

// PoseSchema is the schema of a state channel's "<topic>:pose" companion.
func PoseSchema() Schema { return Schema{SchemaPoseInFrame, "protobuf", poseInFrameDescriptor} }

// UndecodableSchema is the schema of a "<topic>:undecodable" companion.
func UndecodableSchema() Schema {
	return Schema{SchemaUndecodable, "jsonschema", []byte(undecodableSchema)}
}

// JSON Schemas (draft 2020-12) of the JSON messages this package writes.
// Foxglove uses them to list fields for plots and the raw message panel;
// tools/mcapcheck validates every exported message against them.

const (
	// SchemaRawImage is Foxglove's well-known name for a raw camera image.
	SchemaRawImage = "foxglove.RawImage"
	// SchemaUndecodable names the JSON messages of "<topic>:undecodable"
	// channels.
	SchemaUndecodable = "vrlog.Undecodable"
	// SchemaOpaque names the JSON messages of a channel whose schema vrlog
	// does not know: its bytes in base64 (MCAP's empty "no encoding" is
	// flagged as unsupported by viewers).
	SchemaOpaque = "vrlog.Opaque"
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

const replayClockSchema = `{` + jsonSchemaDialect + `,
  "title": "vrlog.ReplayClock/1",
  "description": "A replay's position on the log's clock, published on its clock key (docs/wire-format.md).",
  "type": "object",
  "properties": {
    "timestamp": ` + timeSchema + `,
    "log_time_ns": {"type": "integer"}, "position_ns": {"type": "integer"}, "seq": {"type": "integer", "minimum": 0},
    "rate": ` + number + `, "pass": {"type": "integer", "minimum": 0},
    "capture": {"type": "boolean"}, "restamped": {"type": "boolean"}, "running": {"type": "boolean"}, "record": {"type": "boolean"}
  },
  "required": ["timestamp", "log_time_ns", "position_ns", "seq", "rate", "pass", "capture", "restamped", "running", "record"]
}`

const heartbeatSchema = `{` + jsonSchemaDialect + `,
  "title": "vrlog.Heartbeat/1",
  "description": "The recorder's mark that it was recording (channel vrlog/recorder): its receive wall stamp, unix ns.",
  "type": "object",
  "properties": {"timestamp": ` + timeSchema + `, "recv_wall_ns": {"type": "integer"}},
  "required": ["timestamp", "recv_wall_ns"]
}`

const pauseSchema = `{` + jsonSchemaDialect + `,
  "title": "vrlog.Pause/1",
  "description": "A recording's pause (channel vrlog/pause), at its end: when the recorder stopped writing and went on, on its wall and monotonic clocks (ns), and the records of each channel it received meanwhile and did not write.",
  "type": "object",
  "properties": {
    "timestamp": ` + timeSchema + `,
    "from_wall_ns": {"type": "integer"}, "from_mono_ns": {"type": "integer"},
    "to_wall_ns": {"type": "integer"}, "to_mono_ns": {"type": "integer"},
    "unwritten": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}
  },
  "required": ["timestamp", "from_wall_ns", "from_mono_ns", "to_wall_ns", "to_mono_ns", "unwritten"]
}`

const opaqueSchema = `{` + jsonSchemaDialect + `,
  "title": "vrlog.Opaque",
  "description": "A record of a schema vrlog does not decode (the channel's vrlog.schema), its transport header and payload verbatim.",
  "type": "object",
  "properties": {
    "schema": {"type": "string"},
    "header": {"type": "string", "contentEncoding": "base64"},
    "payload": {"type": "string", "contentEncoding": "base64"}
  },
  "required": ["schema", "header", "payload"]
}`
