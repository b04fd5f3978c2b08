// Package core holds what every ratewarden user needs and nothing that drags a
// dependency: limits ([Limit]), the six algorithms as pure functions over a small
// [State], the [Store] contract, the [Limiter] that ties an algorithm, its limits,
// a store and a clock together, and the framework-neutral HTTP policy the
// adapters share.
//
// # Time
//
// Every algorithm works in whole microseconds since the Unix epoch (see [Micros]).
// That is the resolution of Redis's TIME command, so the in-memory store and the
// Redis scripts compute exactly the same decisions, and every intermediate value
// stays below 2^53, where Lua's numbers are exact. The emission interval of a
// limit (Period / Rate) is rounded up to a whole microsecond, so a limit is never
// exceeded; a rate above one event per microsecond per key is rejected.
//
// # Decisions
//
// A denied request consumes nothing: a client that backs off and retries is not
// punished for the retries. A cost of 0 is a peek that changes nothing; a negative
// cost is an error; a cost that could never fit (above the burst, or above the
// rate for the window algorithms) is denied with state unchanged and
// [Decision.Exceeds] set.
package core
