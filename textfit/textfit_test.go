package textfit

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		line  string
		width int
		want  []string
	}{
		{"short", 80, []string{"short"}},
		{"no limit at all however long", 0, []string{"no limit at all however long"}},
		{"   --channel value, -c value  select channels by name or topic", 60,
			[]string{"   --channel value, -c value  select channels by name or", "                              topic"}},
		{"   --channel value, -c value  select channels by name or topic", 40, // the usage column is past half the width: lines of its own
			[]string{"   --channel value, -c value", "         select channels by name or", "         topic"}},
		{"file:      a long value that goes on", 24, []string{"file:      a long value", "           that goes on"}},
		{`0.1 vr/r1/state {"seq":1,"t_ns":2,"pos":[1,2,3]}`, 24, []string{`0.1 vr/r1/state`, `{"seq":1,"t_ns":2,`, `"pos":[1,2,3]}`}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
	} {
		got := Wrap(c.line, c.width)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Wrap(%q, %d):\n%q, want\n%q", c.line, c.width, got, c.want)
		}
		for _, l := range got {
			if c.width > 0 && utf8.RuneCountInString(l) > c.width {
				t.Errorf("%q is wider than %d", l, c.width)
			}
		}
	}
}

func TestWriterWrapsEveryLine(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, 10)
	w.Write([]byte("one two three four\nfive"))
	w.Write([]byte(" six\nlast"))
	w.Flush()
	if want := "one two\nthree four\nfive six\nlast"; b.String() != want {
		t.Fatalf("%q, want %q", b.String(), want)
	}
}

func TestTableSplitsIntoGroups(t *testing.T) {
	tb := &Table{Indent: "  ", Keep: 1, Right: true}
	tb.Row("channel", "count", "rate Hz", "skipped")
	tb.Row("vr/r1/state", "300", "10.50", "3")
	var wide, narrow bytes.Buffer
	tb.Write(&wide, 0)
	tb.Write(&narrow, 30)
	if want := "      channel  count  rate Hz  skipped\n  vr/r1/state    300    10.50        3\n"; wide.String() != want {
		t.Errorf("unlimited:\n%s\nwant\n%s", wide.String(), want)
	}
	want := "      channel  count  rate Hz\n  vr/r1/state    300    10.50\n\n      channel  skipped\n  vr/r1/state        3\n"
	if narrow.String() != want {
		t.Errorf("30 columns:\n%s\nwant\n%s", narrow.String(), want)
	}
}

// --help (Fill): the rest of a wrapped line joins the line that continues
// it, no word is left alone on a line, and examples are never wrapped.
func TestWriterFillsProse(t *testing.T) {
	in := "   3  runtime failure (transport error, disk full, an output that could not be\n" +
		"      written, interrupted)\n" +
		"   --drop-every N  never publish every Nth sample of each stream (seq gaps)\n" +
		"EXAMPLES:\n" +
		"   sim --listen tcp/127.0.0.1:7447 --no-multicast --drop-every 50 --restart-after 5s\n" +
		"   replay run.vrlog --wait-for-subscribers 1 --wait-timeout 30s --lockstep vr/r1/cmd \\\n" +
		"\n" +
		"after a blank line prose wraps again, however long it goes on and on\n"
	var b bytes.Buffer
	w := NewWriter(&b, 60)
	w.Fill = true
	w.Write([]byte(in))
	w.Flush()
	want := "   3  runtime failure (transport error, disk full, an output\n" +
		"      that could not be written, interrupted)\n" +
		"   --drop-every N  never publish every Nth sample of each\n" +
		"                   stream (seq gaps)\n" +
		"EXAMPLES:\n" +
		"   sim --listen tcp/127.0.0.1:7447 --no-multicast --drop-every 50 --restart-after 5s\n" +
		"   replay run.vrlog --wait-for-subscribers 1 --wait-timeout 30s --lockstep vr/r1/cmd \\\n" +
		"\n" +
		"after a blank line prose wraps again, however long it goes\n" +
		"on and on\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
