package parquetexport

import (
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"strings"
	"testing"
)

// docs/analytics.md names every column of the record export.
func TestColumnsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/analytics.md")
	if err != nil {
		t.Fatal(err)
	}
	fields := append([]string{"decoded", "header", "payload"}, fieldNames(RecordColumns)...)
	for _, d := range registry {
		fields = append(fields, fieldNames(d.Fields())...)
	}
	for _, f := range fields {
		if !strings.Contains(string(doc), "`"+f+"`") {
			t.Errorf("docs/analytics.md: column `%s` undocumented", f)
		}
	}
}

func fieldNames(fs []arrow.Field) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}
