package filexfer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseRangeRequest(t *testing.T) {
	good := `{"file":"run.vrlog","sha256":"` + sha + `","offset":0,"length":1048576}`
	if r, err := ParseRangeRequest([]byte(good)); err != nil || r.File != "run.vrlog" || r.Length != 1<<20 {
		t.Fatalf("%+v, %v", r, err)
	}
	bad := map[string]string{
		"empty":           ``,
		"not json":        `run.vrlog`,
		"array":           `["run.vrlog"]`,
		"null":            `null`,
		"parent":          `{"file":"../etc/passwd","sha256":"` + sha + `","offset":0,"length":1}`,
		"dotdot":          `{"file":"..","sha256":"` + sha + `","offset":0,"length":1}`,
		"dot":             `{"file":".","sha256":"` + sha + `","offset":0,"length":1}`,
		"absolute":        `{"file":"/etc/passwd","sha256":"` + sha + `","offset":0,"length":1}`,
		"subdir":          `{"file":"a/b.vrlog","sha256":"` + sha + `","offset":0,"length":1}`,
		"backslash":       `{"file":"..\\x","sha256":"` + sha + `","offset":0,"length":1}`,
		"hidden":          `{"file":".run.vrlog.0123.part","sha256":"` + sha + `","offset":0,"length":1}`,
		"nul":             `{"file":"a\u0000b","sha256":"` + sha + `","offset":0,"length":1}`,
		"control":         `{"file":"a\nb","sha256":"` + sha + `","offset":0,"length":1}`,
		"long name":       `{"file":"` + strings.Repeat("a", 256) + `","sha256":"` + sha + `","offset":0,"length":1}`,
		"no sha":          `{"file":"run.vrlog","offset":0,"length":1}`,
		"upper sha":       `{"file":"run.vrlog","sha256":"` + strings.ToUpper(sha) + `","offset":0,"length":1}`,
		"short sha":       `{"file":"run.vrlog","sha256":"0123","offset":0,"length":1}`,
		"negative offset": `{"file":"run.vrlog","sha256":"` + sha + `","offset":-1,"length":1}`,
		"zero length":     `{"file":"run.vrlog","sha256":"` + sha + `","offset":0,"length":0}`,
		"huge length":     `{"file":"run.vrlog","sha256":"` + sha + `","offset":0,"length":8388609}`,
		"float offset":    `{"file":"run.vrlog","sha256":"` + sha + `","offset":1.5,"length":1}`,
		"overflow":        `{"file":"run.vrlog","sha256":"` + sha + `","offset":99999999999999999999,"length":1}`,
		"unknown field":   `{"file":"run.vrlog","sha256":"` + sha + `","offset":0,"length":1,"path":"/etc"}`,
		"two values":      `{"file":"run.vrlog","sha256":"` + sha + `","offset":0,"length":1}{}`,
		"oversized":       `{"file":"run.vrlog","sha256":"` + sha + `","offset":0,"length":1}` + strings.Repeat(" ", maxRequest),
	}
	for name, p := range bad {
		if r, err := ParseRangeRequest([]byte(p)); !errors.Is(err, ErrRequest) {
			t.Errorf("%s: %+v, %v: want ErrRequest", name, r, err)
		}
	}
}

func TestParseListRequest(t *testing.T) {
	for _, ok := range []string{"", "  ", "{}", " {} "} {
		if err := ParseListRequest([]byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"x", `{"dir":"/"}`, "[]", "{}{}", `{"a":1}`} {
		if err := ParseListRequest([]byte(bad)); !errors.Is(err, ErrRequest) {
			t.Errorf("%q: %v: want ErrRequest", bad, err)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"gpu-box", "r1", "host_2"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "*", "**", "a/b", "a$*", "a?b", "a#b"} {
		if err := CheckName(bad); !errors.Is(err, ErrRequest) {
			t.Errorf("%q: %v: want ErrRequest", bad, err)
		}
	}
}

// FuzzParseRangeRequest: no input panics, and whatever is accepted names
// a plain file that opening through the directory's root keeps inside it.
func FuzzParseRangeRequest(f *testing.F) {
	for _, s := range []string{
		`{"file":"run.vrlog","sha256":"` + sha + `","offset":0,"length":1048576}`,
		`{"file":"../x","sha256":"` + sha + `","offset":0,"length":1}`,
		`{"file":"run.vrlog","sha256":"` + sha + `","offset":-1,"length":1}`,
		`{}`, `null`, `[`, "",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "in.vrlog"), []byte("x"), 0o644)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRangeRequest(b)
		if err != nil {
			if !errors.Is(err, ErrRequest) {
				t.Fatalf("%q: error %v does not match ErrRequest", b, err)
			}
			return
		}
		if r.File != filepath.Base(r.File) || filepath.IsAbs(r.File) || strings.HasPrefix(r.File, ".") ||
			r.Offset < 0 || r.Length <= 0 || r.Length > MaxChunk || len(r.SHA256) != 64 {
			t.Fatalf("%q accepted as %+v", b, r)
		}
		if !filepath.IsLocal(r.File) {
			t.Fatalf("%q accepted as %+v: not local", b, r)
		}
	})
}
