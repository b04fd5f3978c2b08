// Package servertest sends the same requests to each example server
// (examples/stdhttp, gin, echo, echo5, fiber and fiber3), started by its own test on a real
// loopback listener through its framework's own router, and checks that they
// answer alike: Classic without -rules, RulesMode with examples/rules.yaml,
// its file edited while the server runs.
//
// Each server's test passes a Start function that builds the server from a
// flags.Setup, as its main does, and serves it; ServeHandler makes one of a
// constructor that returns an http.Handler:
//
//	var start = servertest.ServeHandler(newHandler)
//
//	func TestClassic(t *testing.T)   { servertest.Classic(t, start) }
//	func TestRulesMode(t *testing.T) { servertest.RulesMode(t, start) }
package servertest
