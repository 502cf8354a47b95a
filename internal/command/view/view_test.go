package view

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/internal/cliutil"
)

const sample = "../../../testdata/sample.vrlog"

func invoke(t *testing.T, args ...string) (code int, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	app := cliutil.Single(Command())
	app.Writer, app.ErrWriter = &out, &errb
	code = cliutil.Execute(app, append([]string{"view"}, args...))
	return code, errb.String()
}

// Every mistake on the command line is a usage error (exit 2) that says
// what to do; a log that cannot be read is an input error (exit 2 with
// the file named); a port in use a runtime error (exit 3).
func TestUsageErrors(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.vrlog")
	os.WriteFile(junk, []byte("not a log"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "give one or more logs to view, or --live"},
		{[]string{"--live", sample}, 2, "no LOG argument"},
		{[]string{"-k", "vr/**", sample}, 2, "add --live"},
		{[]string{"--live"}, 2, "nothing to view live"},
		{[]string{"--live", "-k", "vr/**", "--start", "3"}, 2, "apply to logs, not to --live"},
		{[]string{sample, "--speed", "0"}, 2, "--speed 0"},
		{[]string{sample, "--addr", "8765"}, 2, `--addr "8765": want HOST:PORT`},
		{[]string{sample, "--client-queue", "0"}, 2, "--client-queue 0"},
		{[]string{sample, "--max-clients", "0"}, 2, "--max-clients 0"},
		{[]string{sample, "--write-timeout", "0s"}, 2, "--write-timeout"},
		{[]string{sample, "--channel", "vr/[x"}, 2, "--channel"},
		{[]string{sample, "--start", "99999"}, 2, "--start/--end/--duration"},
		{[]string{"nothere.vrlog"}, 2, "nothere.vrlog"},
		{[]string{junk}, 2, "junk.vrlog"},
	} {
		code, stderr := invoke(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("view %v: exit %d, %q; want exit %d with %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}
