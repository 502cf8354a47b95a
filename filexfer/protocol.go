package filexfer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/vrlog/vrlog/keyexpr"
)

// Schemas name the JSON layouts of the replies.
const (
	ListingSchema = "vrlog.record.files/1"
	ErrorSchema   = "vrlog.record.error/1"
)

// Encodings of the replies: a listing, a byte range, an error.
const (
	ListingEncoding = "application/json"
	RangeEncoding   = "application/octet-stream"
	ErrorEncoding   = "application/json;vrlog.record.error"
)

// MaxChunk is the largest byte range one request may ask for: what the
// server reads into memory for it (times its workers) and what one zenoh
// reply carries.
const MaxChunk = 8 << 20

// maxRequest bounds a request's payload: a file name and two numbers.
const maxRequest = 1024

// Sentinel errors; match with errors.Is.
var (
	// ErrRequest: a request that does not parse or asks for something no
	// recorder could serve (answered as an error reply, code bad-request).
	ErrRequest = errors.New("filexfer: bad request")
	// ErrRefused: the recorder answered the request with an error (the
	// RemoteError says which).
	ErrRefused = errors.New("filexfer: the recorder refused")
	// ErrNoAnswer: no recorder of that name answered within the timeout.
	ErrNoAnswer = errors.New("filexfer: no answer")
	// ErrChanged: the file is not the one listed any more (replaced or
	// grown under the same name), or a fetched copy does not match its
	// listed size and checksum.
	ErrChanged = errors.New("filexfer: the file changed")
)

// Error codes of RemoteError.
const (
	CodeBadRequest = "bad-request" // does not parse, or addressed by a wildcard
	CodeNotFound   = "not-found"   // no such finished file in the output directory
	CodeChanged    = "changed"     // the file is not the one the request's checksum names
	CodeBusy       = "busy"        // too many requests waiting: ask again later
	CodeInternal   = "internal"    // the recorder could not read its own file
)

// RemoteError is an error reply from a recorder's file server.
type RemoteError struct {
	Schema  string `json:"schema"`
	Code    string `json:"code"`
	Message string `json:"error"`
}

func (e *RemoteError) Error() string { return e.Code + ": " + e.Message }

// Unwrap makes every RemoteError match ErrRefused (and CodeChanged
// ErrChanged too).
func (e *RemoteError) Unwrap() []error {
	if e.Code == CodeChanged {
		return []error{ErrRefused, ErrChanged}
	}
	return []error{ErrRefused}
}

// FilesKey is where a recorder lists its finished files; RangeKey where it
// serves their bytes.
func FilesKey(name string) string { return "vrlog/record/" + name + "/files" }
func RangeKey(name string) string { return "vrlog/record/" + name + "/file" }

// CheckName validates a recorder's name: one level of a zenoh key,
// without wildcards.
func CheckName(name string) error {
	if !keyexpr.IsName(name) {
		return fmt.Errorf("%w: recorder name %q: want one level of a zenoh key without wildcards (e.g. gpu-box)", ErrRequest, name)
	}
	return nil
}

// File is one finished log a recorder serves.
type File struct {
	Name string `json:"name"` // a plain file name in the recorder's output directory
	Size int64  `json:"size"`
	// SHA256 is the hex SHA-256 of the whole file, computed by the
	// recorder's host from the file on its disk.
	SHA256 string `json:"sha256"`
	// Recovered: the recording that wrote this file did not finish it (a
	// crash, kill -9, power loss); the file is the verified copy that
	// vrlog recover made on the recorder's host from RecoveredFrom.
	Recovered     bool   `json:"recovered,omitempty"`
	RecoveredFrom string `json:"recovered_from,omitempty"`
	Recording     string `json:"recording,omitempty"` // the recording's id (every file of one recording shares it)
	ModifiedNs    int64  `json:"modified_ns"`
}

// Pending is a log in the output directory that is not served (yet).
type Pending struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	Why  string `json:"why"` // being written by PID n, or why it could not be recovered
}

// Listing is a recorder's answer on FilesKey.
type Listing struct {
	Schema  string    `json:"schema"`
	Name    string    `json:"name"` // the recorder's name
	Host    string    `json:"host"` // its host name
	Files   []File    `json:"files"`
	Pending []Pending `json:"pending,omitempty"`
}

// RangeRequest asks for Length bytes of File from Offset; SHA256 names
// the version of the file the client listed.
type RangeRequest struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
}

// CheckFileName accepts a plain file name: no directory part, no "." or
// "..", not hidden (temporary and partial files are), no control bytes.
// The server serves only names of its own listing anyway; this refuses
// the rest before any lookup.
func CheckFileName(name string) error {
	switch {
	case name == "" || len(name) > 255:
		return fmt.Errorf("%w: file name of %d bytes", ErrRequest, len(name))
	case !utf8.ValidString(name) || strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("%w: file name %q: want a plain name in the recorder's output directory", ErrRequest, name)
	case name[0] == '.':
		return fmt.Errorf("%w: file name %q: hidden files (temporary, partial) are never served", ErrRequest, name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: file name %q has control characters", ErrRequest, name)
		}
	}
	return nil
}

// ParseRangeRequest decodes a request on RangeKey: one JSON object with
// exactly the fields of RangeRequest, a plain file name, a hex SHA-256,
// 0 <= Offset and 0 < Length <= MaxChunk.
func ParseRangeRequest(payload []byte) (RangeRequest, error) {
	var r RangeRequest
	if err := decodeStrict(payload, &r); err != nil {
		return RangeRequest{}, err
	}
	if err := CheckFileName(r.File); err != nil {
		return RangeRequest{}, err
	}
	if !isSHA256(r.SHA256) {
		return RangeRequest{}, fmt.Errorf("%w: sha256 %q: want 64 lowercase hex digits", ErrRequest, r.SHA256)
	}
	if r.Offset < 0 || r.Length <= 0 || r.Length > MaxChunk {
		return RangeRequest{}, fmt.Errorf("%w: offset %d, length %d: want offset >= 0 and 0 < length <= %d", ErrRequest, r.Offset, r.Length, MaxChunk)
	}
	return r, nil
}

// ParseListRequest accepts a request on FilesKey: no payload, or an empty
// JSON object.
func ParseListRequest(payload []byte) error {
	if len(bytes.TrimSpace(payload)) == 0 {
		return nil
	}
	var none struct{}
	return decodeStrict(payload, &none)
}

// decodeStrict decodes one bounded JSON object with known fields only.
func decodeStrict(payload []byte, v any) error {
	if len(payload) > maxRequest {
		return fmt.Errorf("%w: %d bytes: a request is at most %d", ErrRequest, len(payload), maxRequest)
	}
	d := json.NewDecoder(bytes.NewReader(payload))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrRequest, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return fmt.Errorf("%w: more than one JSON value", ErrRequest)
	}
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// checkKey refuses a query addressed by a wildcard: only a query on the
// recorder's own literal key is answered, so that a query on ** (which
// zenoh's access control rules on vrlog/record/** do not cover) cannot
// reach it.
func checkKey(got, want string) error {
	if got != want {
		return fmt.Errorf("%w: query on %q: ask %s itself, not a wildcard", ErrRequest, got, want)
	}
	return nil
}
