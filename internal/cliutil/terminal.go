package cliutil

import (
	"io"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/vrlog/vrlog/textfit"
)

// Terminal is the size of the terminal w writes to (80 columns, 24 rows
// for what the terminal does not say: under script(1) or a CI pseudo-
// terminal the rows are often 0 while the columns are known); ok is false
// when w is not a terminal. The one
// terminal check of every verb: status tables, progress bars, text
// fitted to the width.
func Terminal(w io.Writer) (width, height int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile || !term.IsTerminal(int(f.Fd())) {
		return 0, 0, false
	}
	width, height, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 80, 24, true
	}
	return knownSize(width, height)
}

// knownSize is width×height with 80 columns or 24 rows for a size the
// terminal reports as 0.
func knownSize(width, height int) (int, int, bool) {
	if width <= 0 {
		width = 80
	}
	if height <= 0 {
		height = 24
	}
	return width, height, true
}

// IsTerminal reports whether w is a terminal (live status lines, progress
// bars and keyboard control only then).
func IsTerminal(w io.Writer) bool {
	_, _, ok := Terminal(w)
	return ok
}

// TextWidth is the width that text written to w fits: the terminal's, 0
// (no limit: the stable layout scripts read) when w is not a terminal.
func TextWidth(w io.Writer) int {
	width, _, _ := Terminal(w)
	return width
}

// Width is the width the running verb's standard output fits
// (TextWidth of the stdout the runner was given).
func Width(c *cli.Context) int {
	if st, ok := c.Context.Value(stateKey{}).(*runState); ok {
		return st.width
	}
	return 0
}

// StdoutIsTerminal reports whether the running verb's standard output is
// a terminal (where a binary output is refused: RefuseBinaryOnTerminal).
func StdoutIsTerminal(c *cli.Context) bool { return Width(c) > 0 }

// RefuseBinaryOnTerminal is the usage error for a binary output (a log,
// an MCAP file) given as standard output while that is a terminal, as
// other tools refuse it: it would only fill the screen with bytes. nil
// otherwise.
func RefuseBinaryOnTerminal(c *cli.Context, out, what string) error {
	if !StdoutIsTerminal(c) {
		return nil
	}
	return Usage("-o %s: standard output is a terminal, and %s is binary: redirect it (> out) or pipe it, or give -o FILE", out, what)
}

// HelpWidth is what --help wraps at off a terminal.
const HelpWidth = 80

// helpWidth makes --help wrap at width, at HelpWidth when 0 (off a
// terminal). It wraps the whole rendered text (textfit.Writer), so a flag's
// usage continues under its own column.
func helpWidth(width int) {
	if width <= 0 {
		width = HelpWidth
	}
	cli.HelpPrinter = func(out io.Writer, templ string, data any) {
		w := textfit.NewWriter(out, width)
		w.Fill = true
		cli.HelpPrinterCustom(w, templ, data, nil)
		w.Flush()
	}
}
