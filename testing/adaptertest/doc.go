// Package adaptertest is the conformance table every ratewarden HTTP adapter
// passes: one script of real HTTP requests (spoofed forwarding headers,
// rotating IPv6 addresses, bad JWTs, huge headers, HEAD, content negotiation,
// skip and cost functions, two limits, a failing store, the leaky-bucket hold
// and a client that hangs up) that must give the same statuses, headers and
// bodies whichever framework serves them.
//
// An adapter's test describes how to build an app around its middleware with
// an Adapter and calls Run:
//
//	func TestConformance(t *testing.T) {
//		adaptertest.Run(t, adaptertest.Adapter{New: newApp, Disconnects: true})
//	}
package adaptertest
