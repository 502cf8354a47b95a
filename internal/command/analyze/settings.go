package analyze

import (
	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/internal/cliutil"
)

// settings reads the analysis settings and --baseline-tolerance. A value
// out of range is a usage error: the analyzer replaces a setting <= 0 by
// its default, and NaN or Inf slipped past that test and made a gate pass.
func settings(c *cli.Context) (analyzer.Options, float64, error) {
	opts := analyzer.Options{LagWindow: c.Duration("lag-window"), FullDecode: c.Bool("full-decode"), Tolerant: c.Bool("tolerant"),
		PartialReplay: c.Bool("partial-replay")}
	var err error
	if opts.OutageFactor, err = cliutil.Float(c, "outage-factor", "a factor > 1 of the nominal period", func(v float64) bool { return v > 1 }); err != nil {
		return opts, 0, err
	}
	if opts.LagTolerance = c.Duration("lag-tolerance"); opts.LagTolerance <= 0 {
		return opts, 0, cliutil.Usage("--lag-tolerance %v: want a duration > 0", opts.LagTolerance)
	}
	tol, err := cliutil.Float(c, "baseline-tolerance", "a relative worsening >= 0 (0.1 = 10 %)", func(v float64) bool { return v >= 0 })
	return opts, tol, err
}
