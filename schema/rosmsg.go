package schema

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// ROS 2 message definitions (.msg): parsed into types for the CDR
// decoder, and gathered with their dependencies into one text in MCAP's
// "ros2msg" schema encoding (the type's definition, then each dependency
// after a line of 80 '=' and "MSG: pkg/Type").

//go:embed msg
var builtinMsgs embed.FS

const msgSeparator = "================================================================================"

// rosType is a parsed message type.
type rosType struct {
	name   string // pkg/msg/Type
	fields []rosField
}

type rosField struct {
	name  string
	prim  string   // a primitive's name, or "" for a message
	msg   *rosType // a nested message
	array int      // 0 a scalar, -1 a sequence (bounded or not), N a fixed array of N
	bound int      // a bounded sequence's or string's bound (0: none)
}

var primSizes = map[string]int{
	"bool": 1, "byte": 1, "char": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2,
	"int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "float32": 4, "float64": 8, "string": 0,
}

func primKind(p string) kind {
	switch p {
	case "int8", "int16", "int32", "int64":
		return kInt
	case "float32", "float64":
		return kFloat
	case "string":
		return kOther
	}
	return kUint
}

// normalizeROSName makes pkg/Type and pkg/msg/Type the latter.
func normalizeROSName(n string) string {
	if p := strings.Split(n, "/"); len(p) == 2 {
		return p[0] + "/msg/" + p[1]
	}
	return n
}

// shortName is pkg/Type, as MCAP's ros2msg text names dependencies.
func shortName(n string) string { return strings.Replace(n, "/msg/", "/", 1) }

var rosNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*/msg/[A-Za-z][A-Za-z0-9_]*$`)

// validROSName: pkg/msg/Type, each part an identifier.
func validROSName(n string) bool { return rosNameRE.MatchString(n) }

var fieldRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_/]*)(<=\d+)?(\[(<=)?(\d*)\])?\s+([A-Za-z][A-Za-z0-9_]*)(\s*=.*|\s+.*)?$`)

// fieldType is a field's base type, resolved against its package: a
// primitive, or pkg/msg/Type.
func fieldType(base, pkg string) string {
	switch {
	case primSizes[base] > 0 || base == "string":
		return base
	case base == "Header":
		return "std_msgs/msg/Header"
	case base == "time":
		return "builtin_interfaces/msg/Time"
	case base == "duration":
		return "builtin_interfaces/msg/Duration"
	case !strings.Contains(base, "/"):
		return pkg + "/msg/" + base
	}
	return normalizeROSName(base)
}

// parseMsgFields lists a definition's fields as (base type, rest) without
// resolving nested types; constants are left out.
type rawField struct {
	typ, name string
	array     int
	bound     int
	strBound  int
}

func parseMsg(text, pkg string) ([]rawField, error) {
	var out []rawField
	for n, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		m := fieldRE.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: %q: want TYPE NAME", n+1, line)
		}
		if strings.HasPrefix(strings.TrimSpace(m[7]), "=") {
			continue // a constant
		}
		f := rawField{typ: fieldType(m[1], pkg), name: m[6]}
		if _, prim := primSizes[f.typ]; !prim && !validROSName(f.typ) {
			return nil, fmt.Errorf("line %d: type %s: want a primitive, TYPE, PKG/TYPE or PKG/msg/TYPE", n+1, m[1])
		}
		if m[2] != "" {
			f.strBound, _ = strconv.Atoi(m[2][2:])
		}
		if m[3] != "" {
			switch {
			case m[5] == "":
				f.array = -1
			case m[4] != "":
				f.array = -1
				f.bound, _ = strconv.Atoi(m[5])
			default:
				f.array, _ = strconv.Atoi(m[5])
				if f.array <= 0 || f.array > 1<<20 {
					return nil, fmt.Errorf("line %d: array length %s", n+1, m[5])
				}
			}
		}
		if m[1] == "wstring" {
			return nil, fmt.Errorf("line %d: wstring is not supported", n+1)
		}
		out = append(out, f)
	}
	return out, nil
}

func pkgOf(name string) string { return strings.SplitN(name, "/", 2)[0] }

// gatherMsg reads the definition of typ (from file, else from the
// msg_path roots, else vrlog's copies of the common ones) and of every type
// it uses, into one ros2msg text.
func gatherMsg(typ, file, msgPath, dir string) ([]byte, error) {
	if !validROSName(typ) {
		return nil, fmt.Errorf("type %s: want PKG/msg/TYPE", typ)
	}
	var roots []string
	for _, r := range filepath.SplitList(msgPath) {
		if r == "" {
			continue
		}
		if !filepath.IsAbs(r) {
			r = filepath.Join(dir, r)
		}
		roots = append(roots, r)
	}
	find := func(name string) (string, error) {
		if name == typ && file != "" {
			p := file
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			b, err := os.ReadFile(p)
			return string(b), err
		}
		parts := strings.Split(name, "/")
		for _, r := range roots {
			if b, err := os.ReadFile(filepath.Join(r, parts[0], "msg", parts[2]+".msg")); err == nil {
				return string(b), nil
			}
		}
		if b, err := builtinMsgs.ReadFile("msg/" + parts[0] + "/" + parts[2] + ".msg"); err == nil {
			return string(b), nil
		}
		return "", fmt.Errorf("definition of %s not found (give msg=FILE for the type and msg_path=DIR for what it uses: DIR/PKG/msg/TYPE.msg)", name)
	}
	var sb strings.Builder
	seen := map[string]bool{}
	var queue []string
	queue = append(queue, typ)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		text, err := find(name)
		if err != nil {
			return nil, err
		}
		fields, err := parseMsg(text, pkgOf(name))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if name != typ {
			sb.WriteString(msgSeparator + "\nMSG: " + shortName(name) + "\n")
		}
		sb.WriteString(strings.TrimRight(text, "\n") + "\n")
		for _, f := range fields {
			if _, prim := primSizes[f.typ]; !prim {
				queue = append(queue, f.typ)
			}
		}
	}
	return []byte(sb.String()), nil
}

// parseROS2Msg parses a ros2msg text (the type, then its dependencies)
// into the type named name.
func parseROS2Msg(text, name string) (*rosType, error) {
	defs := map[string]string{}
	sections := strings.Split(text, msgSeparator)
	defs[name] = sections[0]
	for _, s := range sections[1:] {
		s = strings.TrimLeft(s, "\n")
		head, body, _ := strings.Cut(s, "\n")
		n, ok := strings.CutPrefix(strings.TrimSpace(head), "MSG: ")
		if !ok {
			return nil, fmt.Errorf("a section without its MSG: line")
		}
		n = normalizeROSName(n)
		if !validROSName(n) {
			return nil, fmt.Errorf("MSG: %s: want PKG/TYPE", n)
		}
		defs[n] = body
	}
	types := map[string]*rosType{}
	var build func(n string, depth int) (*rosType, error)
	build = func(n string, depth int) (*rosType, error) {
		if t, ok := types[n]; ok {
			if t.fields == nil && depth > 0 {
				return nil, fmt.Errorf("%s contains itself", n)
			}
			return t, nil
		}
		text, ok := defs[n]
		if !ok {
			return nil, fmt.Errorf("definition of %s missing", n)
		}
		t := &rosType{name: n}
		types[n] = t
		raw, err := parseMsg(text, pkgOf(n))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", n, err)
		}
		fields := make([]rosField, 0, len(raw))
		for _, f := range raw {
			rf := rosField{name: f.name, array: f.array, bound: f.bound}
			if _, prim := primSizes[f.typ]; prim {
				rf.prim = f.typ
				if f.typ == "string" && f.array == 0 {
					rf.bound = f.strBound
				}
			} else if rf.msg, err = build(f.typ, depth+1); err != nil {
				return nil, err
			}
			fields = append(fields, rf)
		}
		if len(fields) == 0 { // ROS 2 gives an empty message one uint8
			fields = append(fields, rosField{name: "structure_needs_at_least_one_member", prim: "uint8"})
		}
		t.fields = fields
		return t, nil
	}
	return build(name, 0)
}
