package cliutil

import (
	"math"

	"github.com/urfave/cli/v2"
)

// Float is the value of a float flag when it is finite and ok accepts it,
// else a usage error naming the flag and want (its valid range). NaN fails
// every comparison a later "v <= 0: use the default" test makes, and Inf
// makes a limit that nothing crosses: both would make a gate pass.
func Float(c *cli.Context, flag, want string, ok func(float64) bool) (float64, error) {
	v := c.Float64(flag)
	if math.IsNaN(v) || math.IsInf(v, 0) || !ok(v) {
		return 0, Usage("--%s %v: want %s", flag, v, want)
	}
	return v, nil
}

// NonNegative refuses a negative value of any of these duration flags (a
// negative --duration once meant "run forever").
func NonNegative(c *cli.Context, flags ...string) error {
	for _, f := range flags {
		if d := c.Duration(f); d < 0 {
			return Usage("--%s %v: want a duration >= 0", f, d)
		}
	}
	return nil
}

// Positive refuses a duration flag that is zero or negative when it is set.
func Positive(c *cli.Context, flags ...string) error {
	for _, f := range flags {
		if d := c.Duration(f); c.IsSet(f) && d <= 0 {
			return Usage("--%s %v: want a duration > 0", f, d)
		}
	}
	return nil
}
