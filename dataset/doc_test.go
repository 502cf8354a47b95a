package dataset

import (
	"os"
	"strings"
	"testing"
)

// docs/analytics.md names every column of the three tables.
func TestColumnsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/analytics.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, tb := range map[string]*table{TableRuns: runsTable, TableChannels: channelsTable, TableEvents: eventsTable} {
		for _, f := range tb.schema.Fields() {
			if !strings.Contains(string(doc), "`"+f.Name+"`") {
				t.Errorf("docs/analytics.md: %s column `%s` undocumented", name, f.Name)
			}
		}
	}
}
