package textfit

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Table is an aligned table, two spaces between columns. Wider than the
// width it is written to, it is split into groups of columns, one under
// the other, each repeating the first Keep columns (the row's name), so
// no line wraps.
type Table struct {
	Indent string // before every line
	Keep   int    // leading columns repeated in every group
	Right  bool   // cells aligned right (numbers), else left
	rows   [][]string
}

// Row adds a row (the first one is usually the header).
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Write prints the table fitted to width (0: one group, however wide).
func (t *Table) Write(w io.Writer, width int) error {
	n := 0
	for _, r := range t.rows {
		n = max(n, len(r))
	}
	widths := make([]int, n)
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for gi, g := range groups(widths, min(t.Keep, n), width-utf8.RuneCountInString(t.Indent)) {
		if gi > 0 {
			b.WriteByte('\n')
		}
		for _, r := range t.rows {
			line := t.Indent
			for k, col := range g {
				c := ""
				if col < len(r) {
					c = r[col]
				}
				pad := strings.Repeat(" ", widths[col]-utf8.RuneCountInString(c))
				if k > 0 {
					line += "  "
				}
				if t.Right {
					line += pad + c
				} else {
					line += c + pad
				}
			}
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// groups splits the columns into groups that each fit width (the first
// keep columns in every group); width <= 0 is one group.
func groups(widths []int, keep, width int) [][]int {
	all := make([]int, len(widths))
	for i := range all {
		all[i] = i
	}
	if width <= 0 || span(widths, all) <= width || keep >= len(widths) {
		return [][]int{all}
	}
	var gs [][]int
	cur := append([]int(nil), all[:keep]...)
	for i := keep; i < len(widths); i++ {
		next := append(append([]int(nil), cur...), i)
		if len(cur) > keep && span(widths, next) > width {
			gs = append(gs, cur)
			next = append(append([]int(nil), all[:keep]...), i)
		}
		cur = next
	}
	return append(gs, cur)
}

// span is the width of the columns cols side by side.
func span(widths []int, cols []int) int {
	s := 0
	for i, c := range cols {
		if i > 0 {
			s += 2
		}
		s += widths[c]
	}
	return s
}
