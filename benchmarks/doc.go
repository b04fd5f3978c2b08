// Package benchmarks compares ratewarden, side by side in the same run, with
// the Go rate limiters users pick today. It is its own module so that the
// peers appear in no user's go.sum. Run everything with
//
//	go test -run '^$' -bench . ./benchmarks/
//
// Every peer row calls the peer's own code path through its public API; none
// is an approximation of a library. Rows named floor-* run no limiter: they
// do the least the row's work needs (a clock read and a compare-and-swap on
// one word, five constant header fields), so the other rows read against
// them. The in-process rows report allowed/op and fail when a row meant to
// admit denied, or one meant to deny admitted.
//
// The files, by topic: memory_test.go (one hot key, admitted and denied; a
// million keys), memory_peers_test.go (those rows' peers), memory_heap_test.go
// (heap per key at several key counts, long keys, a flood of unique keys),
// http_test.go and http_added_test.go (the middleware of every framework, on
// allowed requests), http_denied_test.go (denied requests through Fiber),
// grpc_test.go (a unary gRPC call over bufconn through a floor interceptor,
// go-grpc-middleware's ratelimit on x/time/rate, and grpcmw with its
// metadata off and on; allowed and denied), grpc_added_test.go (what each
// interceptor adds over the floor, in alternating blocks), grpcmw_ratelimit_test.go
// (grpcmw behind go-grpc-middleware's ratelimit interceptors, a test),
// features_test.go (what each production feature adds), redis_test.go (the
// Redis stores, and their exactness across clients), redis_memory_test.go
// (what each Redis limiter costs Redis in memory per key), redis_cpu_test.go,
// redis_cpu_callgrind_test.go and redis_cpu.sh (what each limiter's Lua
// script costs the Redis server per call, timed and in instructions),
// rules_test.go (matching a request against 100 policies of a rules
// document, beside net/http's ServeMux) and rules_reload_test.go (a reload of
// 1,000 policies, and decisions while reloads run). hotkey_runs.sh runs the
// hot-key rows in separate processes.
package benchmarks
