package recorder

import (
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/internal/peertest"
)

// The package table of docs/recorder.md is the code's: each package
// imports exactly the recorder packages the table says (so data flows
// one way: the outputs know nothing of the pipeline before them).
func TestPipelineDocMatchesImports(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(peertest.Root(), "docs", "recorder.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z/]+)` \\| [^|]+ \\| ([^|]+) \\|$")
	rows := row.FindAllStringSubmatch(string(doc), -1)
	if len(rows) < 5 {
		t.Fatalf("docs/recorder.md: %d package rows", len(rows))
	}
	const mod = "github.com/vrlog/vrlog/"
	ours := func(p string) bool {
		return p == mod+"recorder" || strings.HasPrefix(p, mod+"recorder/") || p == mod+"recctl"
	}
	for _, r := range rows {
		var want []string
		if strings.TrimSpace(r[2]) != "none" {
			for _, w := range strings.Split(r[2], ",") {
				want = append(want, mod+strings.Trim(strings.TrimSpace(w), "`"))
			}
		}
		pkg, err := build.Import(mod+r[1], peertest.Root(), 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, imp := range pkg.Imports {
			if ours(imp) {
				got = append(got, imp)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s imports %v of the recorder's packages; docs/recorder.md says %v", r[1], got, want)
		}
	}
}
