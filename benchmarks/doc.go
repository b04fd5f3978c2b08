// Package benchmarks compares ratewarden, side by side in the same run, with
// the Go rate limiters users pick today. It is its own module so that the
// peers appear in no user's go.sum. Run everything with
//
//	go test -run '^$' -bench . ./benchmarks/
package benchmarks
