package analyze

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/internal/cliutil"
)

// settings reads the analysis settings and --baseline-tolerance. A value
// out of range is a usage error: the analyzer replaces a setting <= 0 by
// its default, and NaN or Inf slipped past that test and made a gate pass.
func settings(c *cli.Context) (analyzer.Options, analyzer.Tolerances, error) {
	opts := analyzer.Options{LagWindow: c.Duration("lag-window"), FullDecode: c.Bool("full-decode"), Tolerant: c.Bool("tolerant"),
		PartialReplay: c.Bool("partial-replay")}
	var err error
	if opts.OutageFactor, err = cliutil.Float(c, "outage-factor", "a factor > 1 of the nominal period", func(v float64) bool { return v > 1 }); err != nil {
		return opts, analyzer.Tolerances{}, err
	}
	if opts.LagTolerance = c.Duration("lag-tolerance"); opts.LagTolerance <= 0 {
		return opts, analyzer.Tolerances{}, cliutil.Usage("--lag-tolerance %v: want a duration > 0", opts.LagTolerance)
	}
	tol, err := tolerances(c.StringSlice("baseline-tolerance"))
	return opts, tol, err
}

// tolerances reads --baseline-tolerance [METRIC=]T, repeatable: T alone
// for every metric that is not a timing percentile, METRIC=T for one
// (a timing percentile is compared only so).
func tolerances(specs []string) (analyzer.Tolerances, error) {
	t := analyzer.Tolerances{Default: analyzer.DefaultBaselineTolerance, Metric: map[string]float64{}}
	for _, s := range specs {
		metric, val, named := strings.Cut(s, "=")
		if !named {
			metric, val = "", s
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			if err == nil {
				val = fmt.Sprint(v)
			}
			return t, cliutil.Usage("--baseline-tolerance %s: want a relative worsening >= 0 (0.1 = 10 %%), for every metric or METRIC=T", val)
		}
		switch {
		case !named:
			t.Default = v
		case analyzer.IsBaselineMetric(metric):
			t.Metric[metric] = v
		default:
			var names []string
			for _, m := range analyzer.BaselineMetrics {
				names = append(names, m.Name)
			}
			return t, cliutil.Usage("--baseline-tolerance %s: no metric %q (the metrics: %s)", s, metric, strings.Join(names, ", "))
		}
	}
	return t, nil
}
