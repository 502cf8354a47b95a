package sim

import (
	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
)

// checkNumbers refuses numeric flags out of range (exit 2), NaN and Inf
// included: a negative --duration ran forever, a NaN rate passed "<= 0".
func checkNumbers(c *cli.Context) error {
	if err := cliutil.NonNegative(c, "duration", "start-delay", "restart-after", "outage", "jitter", "frame-lag"); err != nil {
		return err
	}
	for _, f := range []string{"state-hz", "frame-hz"} {
		if _, err := cliutil.Float(c, f, "a rate in (0, 1e6] Hz", func(v float64) bool { return v > 0 && v <= 1e6 }); err != nil {
			return err
		}
	}
	if _, err := cliutil.Float(c, "drop-random", "a probability from 0 to 1", func(v float64) bool { return v >= 0 && v <= 1 }); err != nil {
		return err
	}
	if n := c.Int("drop-every"); n < 0 {
		return cliutil.Usage("--drop-every %d: want N >= 0 (0: none)", n)
	}
	return nil
}
