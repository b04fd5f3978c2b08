// Package conformance is the module of the adapters' rule-driven tests: each
// package below runs a rules.Set through one adapter against its framework's
// real router (ginrules, echorules, echo5rules, fiberrules, fiber3rules) or
// real gRPC connections (grpcrules). The module requires every adapter and
// the rules module, so that no adapter module requires the rules module for
// its tests. It is never published.
package conformance
