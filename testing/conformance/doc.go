// Package conformance is the module of the adapters' conformance runs: each
// package below, named after its adapter, runs testing/adaptertest's kit
// (Run and RunRules) through one adapter against its framework's real router
// (ginmw, echomw, echo5mw, fibermw, fiber3mw), or a rules.Set through grpcmw
// over real gRPC connections (grpcmw). The module requires every adapter and
// the rules module, so that no adapter module requires the rules module for
// its tests. It is never published.
package conformance
