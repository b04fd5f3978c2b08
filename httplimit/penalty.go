package httplimit

import "github.com/ratewarden/ratewarden/core"

// The penalty box is the limiter's (core.WithBlockFor: the one Go option,
// which the limiter's tiers and Tier-built overrides share; rules documents
// set it with block_for): a key denied once is refused for the duration, on
// every instance sharing the store. The policy answers a request the block
// refuses as any denial (429, or the denied handler), with Retry-After and
// the RateLimit field's t the block's end (or the limits' own wait, when
// later) in whole seconds, rounded up,
// X-RateLimit-Remaining and r 0; its observer hears OutcomeBlocked, while
// the denial that starts the block is an OutcomeDenied whose Decision's
// BlockStarted is set (its RetryAfter the block's length, or the limits'
// wait when longer).

// deniedOutcome is what the observer hears of a denial d that is not a dry
// run's: OutcomeBlocked when the key's penalty box refused it.
func deniedOutcome(d *core.Decision) Outcome {
	if d.Blocked {
		return OutcomeBlocked
	}
	return OutcomeDenied
}
