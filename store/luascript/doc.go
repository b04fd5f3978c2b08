// Package luascript holds the Redis Lua scripts that apply ratewarden's six
// algorithms, and their argument and reply encoding, with no Redis client
// dependency: the go-redis store (store/redis) and the rueidis store
// (store/rueidis) are thin bindings over it.
//
// Each script reads, decides and writes atomically in one call, admitting
// exactly what core.Algorithm.ApplyAll admits: with several limits it tests
// all of them and writes only when every one admits. The meter and window
// scripts reply with their verdict, the time they used and the states they
// read, and Decode rebuilds the whole Decision with core itself, so the
// remaining quota, the reset and retry times and the governing limit are
// computed once, in Go, exactly as the memory store computes them. A binding
// does, per request:
//
//	call, err := cfg.Encode(req)          // script, KEYS and ARGV
//	reply := EVALSHA call.Script.SHA1 len(call.Keys) call.Keys... call.Args...
//	// on NOSCRIPT: EVAL call.Script.Source ... (never a replay after a lost reply)
//	d, err := luascript.Decode(req, reply) // verdict, time, states -> core.Decision
//
// Config.AppendCall is the same encoding as []any, for clients that take
// arguments that way (go-redis), with fewer allocations.
//
// # Time and numbers
//
// Times are whole microseconds. By default a script reads the server's TIME
// (seconds*1e6 + microseconds); with Config.CallerClock it uses
// TakeRequest.Now. Lua's numbers are doubles: core bounds every value below
// 2^53, where doubles are exact, and the per-limit figures that need a division
// (the emission interval, rounded up, and tau = burst x interval) are computed
// here in Go and passed as arguments, so a script never divides to get them.
//
// # Keys
//
// Every key starts with Config.Prefix and carries a hash tag built from the
// namespace and key, so all keys of one request fall in one Redis Cluster slot
// (no CROSSSLOT error with several limits); see Config.Encode for the layout.
// Each key expires (PEXPIRE / SET PX) when its state equals a fresh one, as
// core.Algorithm.FreshAt says, rounded up to the millisecond. The token
// bucket, leaky bucket and GCRA keep one integer, the fixed and sliding windows
// a short string of three integers (window start, count, previous count), and
// the sliding log a list of at most Rate timestamps.
package luascript
