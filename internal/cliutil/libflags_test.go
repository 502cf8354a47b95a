package cliutil

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The libraries speak their own language: no string of theirs names a
// command-line flag (the verbs name them, as replay maps a
// replayer.ConfigError's field to its flag). There were some 28 error
// strings in 10 packages that did.
func TestLibrariesNameNoFlag(t *testing.T) {
	flag := regexp.MustCompile(`(^|[\s(,;:'"])--[a-z][a-z0-9-]*`)
	allowed := map[string]bool{
		"vrlog replay --capture":  true, // a response log's "tool" metadata: the command that wrote it
		"vrlog view --live":       true, // the live viewer's server name: the command serving
		"vrlog record --snapshot": true, // a snapshot's "tool" metadata: the command that wrote it
	}
	for _, pkg := range []string{"analyzer", "logfmt", "livecheck", "replayctl", "outfile", "player", "replayer", "codec", "keyexpr",
		"sampler", "hostclock", "textfit", "internal/ui", "foxglove", "foxws", "viewer", "mcapexport", "fleetctl",
		"recorder", "recorder/files", "recorder/snapshot", "recorder/output", "recctl", "filexfer"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", pkg, "*.go"))
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", pkg)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fs := token.NewFileSet()
			f, err := parser.ParseFile(fs, path, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err == nil && flag.MatchString(s) && !allowed[s] {
					t.Errorf("%s: a flag in %q", fs.Position(lit.Pos()), s)
				}
				return true
			})
		}
	}
}
