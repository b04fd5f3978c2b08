// Package echo5mw runs the conformance kit against echo5mw through Echo v5's router:
// adaptertest.Run (every policy case, Groups among them) and
// adaptertest.RunRules (a rules.Set), and the route-policy checks. It holds
// tests only: they live in the conformance module, beside the rules module
// they need, so that the adapter's own module requires its framework and the
// root module alone, and the conformance app of each framework is written
// once.
package echo5mw
