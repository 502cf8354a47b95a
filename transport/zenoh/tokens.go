package zenoh

import (
	"context"
	"slices"
	"time"
)

// FindTokens lists the keys of the liveliness tokens matching keyexpr,
// sorted. A session learns the network's tokens in its first moments
// (a peer meets the others through the one it connects to): a liveliness
// query sent before then returns at once with none, or with some. So
// FindTokens asks again until timeout while it sees none, and once it
// sees some, until none new has arrived for settle (or timeout).
func (s *Session) FindTokens(ctx context.Context, keyexpr string, timeout, settle time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	var keys []string
	var grewAt time.Time
	for {
		got, err := s.LiveTokens(keyexpr, min(settle, max(time.Until(deadline), time.Millisecond)))
		if err != nil {
			return nil, err
		}
		for _, k := range got {
			if !slices.Contains(keys, k) {
				keys, grewAt = append(keys, k), time.Now()
			}
		}
		if (len(keys) > 0 && time.Since(grewAt) >= settle) || !time.Now().Before(deadline) {
			slices.Sort(keys)
			return keys, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
