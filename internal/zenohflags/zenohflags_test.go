package zenohflags

import (
	"os"
	"strings"
	"testing"
)

// docs/deployment.md's table of the session flags names every flag by
// each of its names: the README uses --no-multicast, which the table
// did not name (only --no-multicast-scouting).
func TestDeploymentDocNamesEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../docs/deployment.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Flags() {
		for _, n := range f.Names() {
			if !strings.Contains(string(b), "`--"+n+"`") && !strings.Contains(string(b), "`--"+n+" ") {
				t.Errorf("docs/deployment.md does not name --%s", n)
			}
		}
	}
}
