// Package textfit lays text out to a width: lines wrapped at spaces and
// commas with a hanging indent (Wrap, Writer), tables split into groups of
// columns that each fit (Table). Width 0 means no limit: the stable layout
// that scripts read off a terminal. Terminal detection is cliutil's.
package textfit

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// Wrap breaks line into lines of at most width columns (runes), at spaces
// (dropped) or after commas (kept), continuation lines indented by
// Hang(line). A line whose aligned field begins past half the width (a
// long flag name in --help) puts the field on lines of its own, indented
// 6 more than the line. A word longer than the room is cut. width <= 0, or
// a line that fits, returns the line alone.
func Wrap(line string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return []string{line}
	}
	lead, field := fields(line)
	if field > width/2 {
		rs := []rune(line)
		head := strings.TrimRight(string(rs[:field]), " ")
		tail := strings.Repeat(" ", lead+6) + string(rs[field:])
		return append(WrapIndent(head, width, lead+6), WrapIndent(tail, width, lead+6)...)
	}
	return WrapIndent(line, width, Hang(line, width))
}

// WrapIndent is Wrap with continuation lines indented by indent columns.
func WrapIndent(line string, width, indent int) []string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return []string{line}
	}
	indent = min(max(indent, 0), width/2)
	pad := strings.Repeat(" ", indent)
	var out []string
	rest := []rune(line)
	lead := 0 // columns of rest already taken by the indent
	for len(rest) > 0 {
		room := width - lead
		if len(rest) <= room {
			out = append(out, pad[:lead]+string(rest))
			break
		}
		cut, next := breakAt(rest, room)
		out = append(out, pad[:lead]+strings.TrimRight(string(rest[:cut]), " "))
		rest = rest[next:]
		for len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
		lead = indent
	}
	return out
}

// breakAt is where to end a line of at most room runes of s: after the
// last space or comma that leaves something on the line, else at room.
func breakAt(s []rune, room int) (cut, next int) {
	for i := room; i > 0; i-- {
		switch {
		case s[i] == ' ' && strings.TrimSpace(string(s[:i])) != "":
			return i, i + 1
		case s[i-1] == ',':
			return i, i
		}
	}
	return room, room
}

// Hang is the hanging indent for line's continuations: the column where
// its last aligned field begins (after a run of two or more spaces, as
// in "  --flag value  usage" or "key:      value"), else its own
// indentation; never more than half of width.
func Hang(line string, width int) int {
	lead, col := fields(line)
	if width > 0 && col > width/2 {
		return lead
	}
	return col
}

// fields are the columns where line's text and its aligned field begin
// (the field after the first run of two or more spaces; lead when none).
func fields(line string) (lead, field int) {
	rs := []rune(line)
	for lead < len(rs) && rs[lead] == ' ' {
		lead++
	}
	for i := lead; i+2 < len(rs); i++ {
		if rs[i] == ' ' && rs[i+1] == ' ' {
			j := i
			for j < len(rs) && rs[j] == ' ' {
				j++
			}
			return lead, j
		}
	}
	return lead, lead
}

// Writer wraps every line written through it to a width (Wrap); width <=
// 0 passes text through. Call Flush after the last write for a final line
// without a newline.
type Writer struct {
	// Extra indents the continuations of a line that has no aligned
	// field further than the line itself (cat's records: 4).
	Extra int
	// Fill lays out prose (--help): the rest of a wrapped line joins the
	// next line when that one continues it (the same indentation as the
	// continuation, no aligned field of its own), so no word is left alone
	// on a line; and code is never wrapped: the lines of an EXAMPLES:
	// block (to the next blank line) and the lines of a command continued
	// with a trailing backslash.
	Fill  bool
	w     io.Writer
	width int
	buf   []byte
	err   error

	held     []string // Fill: a wrapped line's pieces, its last one held for the next line
	heldSrc  string   // the line they are
	examples bool     // Fill: inside an EXAMPLES: block
	cont     bool     // Fill: the previous line ended with a backslash
}

// NewWriter wraps what is written to w at width columns.
func NewWriter(w io.Writer, width int) *Writer { return &Writer{w: w, width: width} }

func (t *Writer) Write(p []byte) (int, error) {
	if t.width <= 0 {
		return t.w.Write(p)
	}
	t.buf = append(t.buf, p...)
	for t.err == nil {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			break
		}
		t.line(string(t.buf[:i]), true)
		t.buf = t.buf[i+1:]
	}
	return len(p), t.err
}

// Flush writes a final line that has no newline.
func (t *Writer) Flush() error {
	if len(t.buf) > 0 && t.err == nil {
		t.line(string(t.buf), false)
		t.buf = t.buf[:0]
	}
	t.release()
	return t.err
}

// release writes the held pieces of a wrapped line; a last piece of one
// word (a widow) takes a word of the line before it.
func (t *Writer) release() {
	if len(t.held) == 0 || t.err != nil {
		t.held = nil
		return
	}
	ls := t.held
	for w := t.width - 1; w > t.width*3/4 && widow(ls); w-- {
		if l := t.wrap(t.heldSrc, w); len(l) == len(ls) {
			ls = l
		}
	}
	if widow(ls) {
		ls = t.held
	}
	t.held = nil
	_, t.err = io.WriteString(t.w, strings.Join(ls, "\n")+"\n")
}

// widow reports whether ls ends in a line of one word.
func widow(ls []string) bool {
	return len(ls) > 1 && !strings.Contains(strings.TrimSpace(ls[len(ls)-1]), " ")
}

func (t *Writer) wrap(l string, width int) []string {
	if lead, field := fields(l); field == lead && t.Extra > 0 {
		return WrapIndent(l, width, lead+t.Extra)
	}
	return Wrap(l, width)
}

func (t *Writer) line(l string, nl bool) {
	if t.Fill {
		code := t.examples || t.cont
		trimmed := strings.TrimSpace(l)
		t.cont = strings.HasSuffix(l, "\\")
		switch {
		case trimmed == "":
			t.examples = false
		case strings.HasSuffix(trimmed, "EXAMPLES:"):
			t.examples = true
		}
		code = code || t.cont
		lead, field := fields(l)
		if n := len(t.held); n > 0 && !code && trimmed != "" && field == lead && lead == leadOf(t.held[n-1]) {
			// The next line continues the wrapped one: its rest joins it.
			_, t.err = io.WriteString(t.w, strings.Join(t.held[:n-1], "\n")+"\n")
			l = t.held[n-1] + " " + trimmed
			t.held = nil
		}
		t.release()
		if code {
			_, t.err = io.WriteString(t.w, l+"\n")
			return
		}
	}
	ls := t.wrap(l, t.width)
	if t.Fill && nl && len(ls) > 1 {
		t.held, t.heldSrc = ls, l
		return
	}
	s := strings.Join(ls, "\n")
	if nl {
		s += "\n"
	}
	_, t.err = io.WriteString(t.w, s)
}

// leadOf is the indentation of l in columns.
func leadOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
