package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vrlog/vrlog/keyexpr"
)

// Encodings a declaration may name.
const (
	EncProtobuf = "protobuf" // protobuf wire format, from a .proto or a FileDescriptorSet
	EncJSON     = "json"     // a JSON object per payload
	EncROS2     = "ros2msg"  // ROS 2 CDR (XCDR1, with its 4-byte encapsulation header), from .msg definitions
	EncCStruct  = "cstruct"  // a fixed binary layout (a C struct)
	EncNone     = "none"     // bytes vrlog does not decode: stamps from the transport only
)

// Transport-level stamp and counter sources a declaration may name
// instead of a field path.
const (
	ZenohTimestamp = "zenoh.timestamp" // the sample's zenoh (HLC) timestamp
	ZenohSourceSN  = "zenoh.source_sn" // the publisher's source info sequence number
	Count          = "count"           // no counter: records are counted (no skip can be seen)
)

// MaxSchemaData bounds a declaration's schema (a FileDescriptorSet, the
// .msg texts): stored in the channel block, which readers bound to 16 MiB
// (docs/log-format.md §3), base64 included, beside the rest of the meta.
const MaxSchemaData = 4 << 20

// ErrDecl: a declaration is malformed or names what its schema lacks.
var ErrDecl = errors.New("schema: bad declaration")

// Decl is one channel declaration: which channels (Pattern, a key
// expression matched against the channel's name and topic), how their
// payload is encoded, and where the stamp and counter live. Data holds
// the schema itself, self-contained (a FileDescriptorSet, the .msg texts,
// the struct layout, a JSON schema), so that the declaration stored in a
// log needs no file.
type Decl struct {
	Pattern  string
	Encoding string
	Name     string // message name: "team.Pose", "geometry_msgs/msg/PoseStamped", ...
	Data     []byte
	Stamp    string // field path, "sec_path+nsec_path", ZenohTimestamp, or "" (zenoh timestamp where the first sample has one)
	Unit     string // of an integer or float stamp: ns, us, ms, s or 100ns ("" from the type)
	Epoch    string // unix (default), gps, tai, uts, or none (a clock of unknown epoch: no latency)
	Seq      string // field path, ZenohSourceSN, Count, or "" (source info where the first sample has it)
	Kind     string // state (default) or frame: the channel's role in analyze's lag pairing
	Endian   string // cstruct: little (default) or big
	// Where the declaration was written, for errors: "schemas.txt:12" or "--schema".
	Where string
	pat   keyexpr.Pattern
	named bool // Name is the message's (name=, message=, type=), not the pattern
}

// Match reports whether d declares a channel of that name or topic.
func (d *Decl) Match(name, topic string) bool { return d.pat.Match(name) || d.pat.Match(topic) }

// Set is the declarations of a recording; the last that matches a
// channel wins (as --compression).
type Set []*Decl

// Find returns the declaration of a channel, or nil. A declaration that
// names no message (json, cstruct or none without name=) is the channel's
// own: its Name is the channel's name, which tools show as its schema
// (the pattern, team/*/cmd, names no message).
func (s Set) Find(name, topic string) *Decl {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].Match(name, topic) {
			d := *s[i]
			if !d.named {
				d.Name = name
			}
			return &d
		}
	}
	return nil
}

// ParseFile reads a declarations file: one declaration a line (Parse),
// blank lines and # comments ignored. File names in it are relative to
// the file's directory. Every declaration is compiled, so an error names
// the line and the field.
func ParseFile(path string) (Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	var set Set
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		d, err := parse(line, filepath.Dir(path), fmt.Sprintf("%s:%d", path, n))
		if err != nil {
			return nil, err
		}
		set = append(set, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	return set, nil
}

// Parse reads one declaration, e.g.
//
//	team/*/pose protobuf proto=pose.proto message=team.Pose stamp=header.stamp seq=header.seq
//
// PATTERN ENCODING then key=value options (values may be "quoted"); file
// names are relative to dir. where names it in errors.
func Parse(line, dir, where string) (*Decl, error) { return parse(line, dir, where) }

func parse(line, dir, where string) (*Decl, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrDecl, where, fmt.Sprintf(format, args...))
	}
	words, err := split(line)
	if err != nil {
		return nil, bad("%v", err)
	}
	if len(words) < 2 {
		return nil, bad("want PATTERN ENCODING [key=value ...], have %q", line)
	}
	d := &Decl{Pattern: words[0], Encoding: words[1], Where: where}
	if d.pat, err = keyexpr.Parse(d.Pattern); err != nil {
		return nil, bad("pattern %v", err)
	}
	opts := map[string]string{}
	for _, w := range words[2:] {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, bad("option %q: want key=value", w)
		}
		if _, dup := opts[k]; dup {
			return nil, bad("option %s given twice", k)
		}
		opts[k] = v
	}
	take := func(k string) string { v := opts[k]; delete(opts, k); return v }
	d.Stamp, d.Unit, d.Epoch, d.Seq, d.Kind = take("stamp"), take("unit"), take("epoch"), take("seq"), take("kind")
	d.Name = take("name")
	file := func(k, p string) ([]byte, error) {
		if p == "" {
			return nil, nil
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, bad("%s: %v", k, err)
		}
		return b, nil
	}
	switch d.Encoding {
	case EncProtobuf:
		msg := take("message")
		if msg == "" {
			return nil, bad("protobuf: message=NAME is required (the fully qualified message name, e.g. team.Pose)")
		}
		d.Name = msg
		proto, desc := take("proto"), take("descriptor")
		includes := strings.Split(take("include"), ":")
		switch {
		case (proto == "") == (desc == ""):
			return nil, bad("protobuf: give one of proto=FILE.proto or descriptor=FILE (a FileDescriptorSet)")
		case proto != "":
			if d.Data, err = compileProto(proto, dir, includes); err != nil {
				return nil, bad("proto=%s: %v", proto, err)
			}
		default:
			if d.Data, err = file("descriptor", desc); err != nil {
				return nil, err
			}
		}
	case EncROS2:
		typ := take("type")
		if typ == "" {
			return nil, bad("ros2msg: type=PKG/msg/TYPE is required (e.g. geometry_msgs/msg/PoseStamped)")
		}
		d.Name = normalizeROSName(typ)
		if d.Data, err = gatherMsg(d.Name, take("msg"), take("msg_path"), dir); err != nil {
			return nil, bad("ros2msg %s: %v", d.Name, err)
		}
	case EncCStruct:
		layout := take("struct")
		if layout == "" {
			return nil, bad(`cstruct: struct="TYPE NAME; ..." is required (e.g. struct="uint64_t seq; int64_t t_ns; double x")`)
		}
		d.Data = []byte(layout)
		d.Endian = take("endian")
		if align := take("align"); align != "" {
			if align != "packed" && align != "natural" {
				return nil, bad("cstruct: align=%s: want packed or natural", align)
			}
			d.Data = []byte("align " + align + "; " + layout)
		}
	case EncJSON:
		if d.Data, err = file("json_schema", take("json_schema")); err != nil {
			return nil, err
		}
	case EncNone:
	default:
		return nil, bad("encoding %q: want protobuf, json, ros2msg, cstruct or none", d.Encoding)
	}
	if len(opts) > 0 {
		keys := make([]string, 0, len(opts))
		for k := range opts {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return nil, bad("%s: unknown option %s", d.Encoding, strings.Join(keys, ", "))
	}
	if d.Encoding == EncJSON && len(d.Data) > 0 && !json.Valid(d.Data) {
		return nil, bad("json_schema: not JSON")
	}
	if len(d.Data) > MaxSchemaData {
		return nil, bad("the schema is %d bytes, more than the %d a channel's meta holds", len(d.Data), MaxSchemaData)
	}
	if d.named = d.Name != ""; !d.named {
		d.Name = d.Pattern // until Set.Find gives it the channel's
	}
	if _, err := Compile(d); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return d, nil
}

// split cuts a line into words at spaces; a word may be, or end in, a
// double-quoted Go string (key="a b").
func split(line string) ([]string, error) {
	var words []string
	for {
		line = strings.TrimLeft(line, " \t")
		if line == "" || line[0] == '#' {
			return words, nil
		}
		end := strings.IndexAny(line, " \t\"")
		if end < 0 {
			return append(words, line), nil
		}
		if line[end] != '"' {
			words = append(words, line[:end])
			line = line[end:]
			continue
		}
		q, err := strconv.QuotedPrefix(line[end:])
		if err != nil {
			return nil, fmt.Errorf("unterminated or malformed quoted value in %q", line)
		}
		s, _ := strconv.Unquote(q)
		words = append(words, line[:end]+s)
		line = line[end+len(q):]
	}
}
