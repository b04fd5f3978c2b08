// Package ginrules runs the rule-driven checks of a rules.Set against Gin's
// router, through ginmw. It holds tests only: they live in the conformance
// module so that the adapter's own module requires its framework and the
// root module alone, never the rules module.
package ginrules
