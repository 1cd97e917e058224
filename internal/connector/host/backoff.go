package host

import (
	"math/rand/v2"
	"time"
)

// backoff returns the wait before reconnection attempt n (0-based) with
// exponential backoff and full jitter: a uniformly random duration in
// [0, min(max, base·2ⁿ)). Full jitter spreads hosts that lost the same
// hub, so they do not all come back in the same instant. rnd returns a
// float in [0, 1).
func backoff(n int, base, max time.Duration, rnd func() float64) time.Duration {
	return time.Duration(rnd() * float64(backoffCap(n, base, max)))
}

// backoffCap is the upper bound of attempt n's wait.
func backoffCap(n int, base, max time.Duration) time.Duration {
	c := base
	for i := 0; i < n && c < max; i++ {
		c *= 2
	}
	return min(c, max)
}

func randFloat() float64 { return rand.Float64() }
