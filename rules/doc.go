// Package rules says which rate limit applies to which request, in a
// document kept outside the code: a file, or Redis.
//
// A rules document (YAML or JSON; docs/rules.md is its reference and
// [Schema] its JSON Schema) names policies. Each says which requests it
// matches (route patterns, path prefixes, methods, hosts, headers), whose key
// counts (the client IP, a header, a JWT claim, a context value, or a
// composition), the algorithm and its limits, tiers picked per request,
// per-key overrides, cost, dry run and fail mode, and which other policies
// it replaces.
//
// [Parse] reads a document into a [Document], applying its defaults to every
// policy, and validates it: a document that fails is refused with a
// [*Problems] that lists every problem at once, each with its line, column
// and path ("rules.yaml:12:14: policies[1].limits[0]: ..."). Limits are read
// and checked exactly as in Go ([core.ParseLimit], the algorithm's own
// checks). Bounds ([MaxDocumentSize], [MaxDepth], [MaxAliasNodes] and the
// rest) keep a hostile or broken document from costing much time or memory.
// [Document.Validate] runs the same checks on a Document built in Go.
package rules
