// Package recctl is a recorder's control plane over zenoh (docs/cli.md,
// "Driving a recorder remotely"). A recorder started with a name NAME
// holds the liveliness token vrlog/record/NAME and answers queries on
// vrlog/record/NAME/VERB, VERB one of status, start, stop, pause, resume,
// split and snapshot; a query's payload is a small JSON request, and
// every answer, a refusal included, is a JSON Reply. Server is the
// recorder's side (mounted on its session), List and Ask the client's
// (`vrlog recorders`, `vrlog rec`). Who may query is decided before the
// queries reach a recorder, by zenoh's own access control
// (docs/deployment.md).
package recctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/vrlog/vrlog/keyexpr"
)

// Verb is a control request.
type Verb string

const (
	Status   Verb = "status"
	Start    Verb = "start"
	Stop     Verb = "stop"
	Pause    Verb = "pause"
	Resume   Verb = "resume"
	Split    Verb = "split"
	Snapshot Verb = "snapshot"
)

// Verbs are every verb, in the order help texts name them.
var Verbs = []Verb{Status, Start, Stop, Pause, Resume, Split, Snapshot}

// Prefix is the key space of the recorders' control planes.
const Prefix = "vrlog/record"

// TokenKey is the liveliness token of the recorder name; Key the key of
// its verb.
func TokenKey(name string) string    { return Prefix + "/" + name }
func Key(name string, v Verb) string { return Prefix + "/" + name + "/" + string(v) }

// Schemas name the JSON layouts of Reply and StatusReport.
const (
	ReplySchema  = "vrlog.recorder.reply/1"
	StatusSchema = "vrlog.recorder.status/1"
)

// MaxRequest bounds a request's payload: the largest is a file name and
// a note.
const MaxRequest = 16 << 10

// ErrRequest: a request that does not parse.
var ErrRequest = errors.New("recctl: bad request")

// CheckName validates a recorder's name: one key level, no wildcard.
func CheckName(name string) error {
	if !keyexpr.IsName(name) {
		return fmt.Errorf("%w: recorder name %q: want one zenoh key level without wildcards (e.g. cam-host)", ErrRequest, name)
	}
	return nil
}

// Request is a control request's payload: {"file": ..., "note": ...}.
// Only start takes a file (a name in the recorder's output directory,
// {time} and {n} filled in); start and snapshot take a note.
type Request struct {
	File string `json:"file,omitempty"`
	Note string `json:"note,omitempty"`
}

// ParseVerb reads a verb.
func ParseVerb(s string) (Verb, error) {
	for _, v := range Verbs {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("%w: unknown verb %q (want %s)", ErrRequest, s, verbList())
}

func verbList() string {
	var s []string
	for _, v := range Verbs {
		s = append(s, string(v))
	}
	return strings.Join(s, ", ")
}

// ParseRequest decodes verb's payload: empty or a JSON object of the
// fields the verb takes, at most MaxRequest bytes, nothing after it.
func ParseRequest(v Verb, payload []byte) (Request, error) {
	var r Request
	if len(payload) > MaxRequest {
		return r, fmt.Errorf("%w: %d bytes, at most %d", ErrRequest, len(payload), MaxRequest)
	}
	if len(bytes.TrimSpace(payload)) == 0 {
		return r, nil
	}
	d := json.NewDecoder(bytes.NewReader(payload))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return Request{}, fmt.Errorf("%w: %s: want a JSON object such as {\"file\": \"run.vrlog\", \"note\": \"...\"}: %v", ErrRequest, v, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return Request{}, fmt.Errorf("%w: %s: more after the JSON object", ErrRequest, v)
	}
	switch {
	case r.File != "" && v != Start:
		return Request{}, fmt.Errorf("%w: %s takes no file (only start does)", ErrRequest, v)
	case r.Note != "" && v != Start && v != Snapshot:
		return Request{}, fmt.Errorf("%w: %s takes no note (start and snapshot do)", ErrRequest, v)
	case strings.ContainsRune(r.Note, 0) || strings.ContainsRune(r.File, 0):
		return Request{}, fmt.Errorf("%w: %s: a NUL in a text", ErrRequest, v)
	}
	return r, nil
}

// Code says why a request was refused, for scripts.
type Code string

const (
	CodeBadRequest Code = "bad-request"  // the request does not parse
	CodeState      Code = "out-of-state" // not in the recorder's state (stop while idle)
	CodeMode       Code = "wrong-mode"   // not in the recorder's mode (split in snapshot mode)
	CodeName       Code = "bad-name"     // a file name outside the recorder's directory
	CodeExists     Code = "exists"       // the file asked for exists
	CodeClosed     Code = "closed"       // the recorder is shutting down
	CodeFailed     Code = "failed"       // the request was carried out and failed (a file that could not be written)
)

// Reply is every answer of a recorder: what the request did, or why it
// was refused (OK false: Code and Error), and the state after it.
type Reply struct {
	Schema string `json:"schema"`
	Name   string `json:"name"` // the recorder's
	Verb   Verb   `json:"verb"`
	OK     bool   `json:"ok"`
	Code   Code   `json:"code,omitempty"`
	Error  string `json:"error,omitempty"`
	State  string `json:"state"`
	// File is the file now written (start, resume) or written next
	// (split), absolute.
	File string `json:"file,omitempty"`
	// Finished is the file the request finished (stop, split); nil when
	// none was open.
	Finished *FileReport `json:"finished,omitempty"`
	// Snapshot is the snapshot taken (snapshot).
	Snapshot *SnapshotReport `json:"snapshot,omitempty"`
	// Status is the recorder's status (status).
	Status *StatusReport `json:"status,omitempty"`
}

// FileReport is a finished file.
type FileReport struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Records uint64 `json:"records"`
}

// SnapshotReport is a snapshot written.
type SnapshotReport struct {
	Path     string  `json:"path"`
	Records  uint64  `json:"records"`
	Bytes    int64   `json:"bytes"`
	BeforeS  float64 `json:"before_s"`
	AfterS   float64 `json:"after_s"`
	Short    string  `json:"short,omitempty"`
	HeldOpen string  `json:"held_open,omitempty"`
}

// StatusReport is a recorder's status.
type StatusReport struct {
	Schema  string `json:"schema"`
	Name    string `json:"name"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Version string `json:"version"`
	State   string `json:"state"`
	Mode    string `json:"mode"` // files or snapshot
	Dir     string `json:"dir"`  // the output directory, absolute
	// File is the file being written, absolute ("" when none is open).
	File         string  `json:"file"`
	Files        int     `json:"files"` // files written so far, the current one included
	UptimeS      float64 `json:"uptime_s"`
	BytesWritten int64   `json:"bytes_written"`
	Records      uint64  `json:"records"` // in the current file
	// BacklogBytes is what was received and is not written yet;
	// DiskKeepsUp is false while it passes a quarter of QueueBytes (the
	// bound per subscription past which records are dropped) or records
	// were dropped in the last second.
	BacklogBytes int64           `json:"backlog_bytes"`
	QueueBytes   int64           `json:"queue_bytes"`
	DiskKeepsUp  bool            `json:"disk_keeps_up"`
	Drops        uint64          `json:"drops"`
	Zenoh        string          `json:"zenoh,omitempty"`
	Channels     []ChannelReport `json:"channels"`
}

// ChannelReport is one channel's figures in a status.
type ChannelReport struct {
	Name      string  `json:"name"`
	Transport string  `json:"transport"`
	Schema    string  `json:"schema,omitempty"`
	Records   uint64  `json:"records"`
	Hz        float64 `json:"hz"`
	MBps      float64 `json:"mb_per_s"`
	Drops     uint64  `json:"drops"`
	Unwritten uint64  `json:"unwritten,omitempty"`
	Skipped   uint64  `json:"skipped"`
	Error     string  `json:"error,omitempty"`
	Warning   string  `json:"warning,omitempty"`
}
