// Package core is ratewarden's rate math, with no dependency and nothing about
// HTTP: limits ([Limit], [ParseLimit]), the six algorithms as pure functions
// over a small [State] ([Algorithm.ApplyAll]), the [Store] contract, and the
// [Limiter] that ties an algorithm, its limits, a store and a [Clock]
// together. Package httplimit and the adapters put a Limiter in front of HTTP
// requests; store/memory and the Redis stores keep its state.
//
// Time is whole microseconds since the Unix epoch ([Micros]), the resolution
// of Redis's TIME, so every store decides exactly alike and every value stays
// below 2^53, where Lua's numbers are exact. A denied request consumes nothing;
// a cost of 0 is a peek; a cost that could never fit is denied with
// [Decision.Exceeds] set.
//
// A Limiter keeps a circuit breaker on its store ([WithBreaker], on by
// default with [DefaultBreaker]'s settings): after repeated failures it
// returns [ErrBreakerOpen] at once instead of asking a store that is down,
// and probes it again after a growing interval.
//
// Calendar quotas ([Monthly], [Weekly], [Daily], [Limit.In],
// [Limit.AnchoredOn]; "10000/month in America/New_York anchor 15") count
// per calendar month, week or day in an IANA time zone, under the fixed and
// sliding windows; each calendar caches the window the clock is in, so a
// decision inside it computes no date.
//
// A penalty box ([WithBlockFor]) refuses a key that its limits denied for a
// fixed time, whatever the limits say meanwhile: the block is kept in the
// store beside the key's state and decided in the same atomic step
// ([Decision.Blocked], [Decision.BlockStarted]); a reset lifts it.
package core
