// Package grpcmw runs the rule-driven checks of a rules.Set against real gRPC
// servers and connections, through grpcmw. It holds tests only: they live in
// the conformance module so that the adapter's own module requires its
// framework and the root module alone, never the rules module. The harness
// its tests share with grpcmw's own is a copy: test files cannot be imported
// across modules.
package grpcmw
