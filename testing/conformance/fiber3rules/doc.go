// Package fiber3rules runs the rule-driven checks of a rules.Set against
// Fiber v3's router, through fiber3mw. It holds tests only: they live in the
// conformance module so that the adapter's own module requires its framework
// and the root module alone, never the rules module.
package fiber3rules
