package analyzer

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// svg builds one inline SVG plot. Coordinates are in the viewBox; CSS
// scales the plot to the page width, so every plot of one width shares its
// x mapping and the time plots line up under each other.
type svg struct {
	b    strings.Builder
	w, h float64
}

// Plot geometry (viewBox units). Time plots span the page; histograms are
// half as wide, two to a row.
const (
	fullW    = 1160.0
	halfW    = 570.0
	padL     = 72.0 // room for y tick labels
	padR     = 24.0
	padT     = 14.0
	padB     = 30.0 // room for x tick labels
	fontSize = 12.0
)

func newSVG(w, h float64, attrs string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" %s>`, w, h, attrs)
	return s
}

func (s *svg) f(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

func (s *svg) html() template.HTML {
	s.b.WriteString(`</svg>`)
	return template.HTML(s.b.String())
}

// text writes a label; class picks its style (see report.css).
func (s *svg) text(x, y float64, anchor, class, label string) {
	s.f(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, esc(label))
}

// title makes the enclosing element's value show on hover (no script needed).
func title(label string) string { return "<title>" + esc(label) + "</title>" }

func esc(s string) string { return template.HTMLEscapeString(s) }

// attr quotes an attribute value.
func attr(s string) string { return `"` + template.HTMLEscapeString(s) + `"` }

// linear maps [lo, hi] onto [a, b].
type linear struct{ lo, hi, a, b float64 }

func (m linear) at(v float64) float64 {
	if m.hi == m.lo {
		return m.a
	}
	return m.a + (v-m.lo)/(m.hi-m.lo)*(m.b-m.a)
}

// clamp keeps v inside the mapped range.
func (m linear) clamp(v float64) float64 { return m.at(min(max(v, m.lo), m.hi)) }

// niceStep is the 1, 2 or 5 × 10^k step that cuts span into about n parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag*1.0000001 {
			return m * mag
		}
	}
	return 10 * mag
}

// ticks are the multiples of step within [lo, hi].
func ticks(lo, hi, step float64) []float64 {
	var out []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v+0) // +0 turns -0 into 0
	}
	return out
}

// tickLabel prints v with as many decimals as step needs.
func tickLabel(v, step float64) string {
	d := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	return strconv.FormatFloat(v, 'f', d, 64)
}

// ms prints a duration given in ms with a precision that suits its size.
func ms(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 10000:
		return fmt.Sprintf("%.1f s", v/1000)
	case a >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case a >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case a >= 10:
		return fmt.Sprintf("%.1f ms", v)
	case a >= 1:
		return fmt.Sprintf("%.2f ms", v)
	default:
		return fmt.Sprintf("%.3f ms", v)
	}
}

// frame draws a plot's axes: y ticks (with their labels from label) and
// light grid lines across the plot area [x0, x1] × [yTop, yBottom].
func (s *svg) yAxis(y linear, step float64, x0, x1 float64, label func(float64) string) {
	for _, v := range ticks(y.lo, y.hi, step) {
		py := y.at(v)
		s.f(`<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x0, x1, py, py)
		s.text(x0-6, py+4, "end", "ytick", label(v))
	}
	s.f(`<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x0, x0, y.b, y.a)
}

// xAxis draws the x ticks of x (in axis units, labelled by label) along y0.
func (s *svg) xAxis(x linear, step, y0 float64, label func(float64) string) {
	s.f(`<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x.a, x.b, y0, y0)
	for _, v := range ticks(x.lo, x.hi, step) {
		px := x.at(v)
		s.f(`<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, px, px, y0, y0+4)
		s.text(px, y0+17, "middle", "xtick", label(v))
	}
}
