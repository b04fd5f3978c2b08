// Package keyfuncs answers "who is this client?" for the rate limiter: it
// builds Func values that read a framework-neutral Request and return the key
// a limit is counted under. Every adapter (stdhttp, ginmw, echomw, fibermw)
// hands its request over as a Request, so a request gets the same key in every
// framework.
//
//   - IP: the client address, with trusted proxies (a unix socket
//     included) and IPv6 grouping.
//   - FrameworkIP: the client address as Gin, Echo or Fiber resolved it
//     from their own proxy settings.
//   - Header: an API key or any other header, length-bounded.
//   - ContextValue: the user or tenant that authentication middleware
//     stored in the request's context (Gin's and Echo's c.Set and Fiber's
//     c.Locals included).
//   - the verified subject of a bearer JSON Web Token: package keyfuncs/jwtkey,
//     apart so that only apps that key by JWT link golang-jwt.
//   - Compose, Route, Method, Static: keys per user and route, per method, or
//     one global key.
//   - Fallback: an API key, else the IP address.
//
// A key function that cannot find a key returns an error wrapping ErrKey;
// the HTTP policy answers such a request with its key-error response (401 by default) and never lets it through unlimited. The
// constructors that return an error check every argument and option up front
// and report a bad one with an error wrapping core.ErrInvalidOption; nothing in
// this package panics on any input. All key functions are safe for concurrent
// use.
//
// # Client addresses and trusted proxies
//
// The only address a server can rely on is the network peer's: the TCP
// connection's other end. Headers such as X-Forwarded-For, Forwarded and
// X-Real-IP are written by whoever sent the request, so by default IP ignores
// them: a client that sends "X-Forwarded-For: 1.2.3.4" to escape its limit, or
// to spend someone else's, changes nothing. Honouring these headers from
// anyone is a well-known vulnerability (several rate limiters have had
// advisories for it).
//
// Behind a reverse proxy or load balancer every request comes from the proxy,
// so every client would share the proxy's key. WithTrustedProxies names the
// proxies' addresses. Only when the peer is one of them are the headers read,
// and X-Forwarded-For and Forwarded are walked from the right, where the
// trusted proxies appended what they saw: each trusted hop is skipped, and the
// first address that is not a trusted proxy is the client. Whatever the client
// wrote itself lies further left and is never reached. Trust only the proxies
// that really set or append these headers, and honour
// (WithForwardingHeaders) only the headers they set: a header that a proxy
// passes through untouched is still the client's own writing. When several are present and honoured, the
// default order is X-Forwarded-For (which nearly every proxy appends), then
// Forwarded, then X-Real-IP.
//
// # Unix sockets
//
// Behind a reverse proxy that connects over a unix socket (nginx's
// "proxy_pass http://unix:/run/app.sock:"), the peer has no IP address: servers
// report it as "@". IP then returns an error wrapping ErrPeerNotIP, which the
// HTTP policy answers as a server configuration error, not as the client's
// fault. WithTrustedProxies(TrustUnixSocket) ("unix") trusts such a peer, so
// that the client is read from the forwarding headers the proxy sets.
//
// # The request behind the view
//
// Request.Context is the request's context, in which ContextValue finds what
// authentication middleware stored; each adapter's Native function returns
// its framework's own request (*http.Request, *gin.Context, echo.Context,
// *fiber.Ctx) for key functions that need more.
//
// # IPv6 grouping
//
// An IPv4 address is usually one subscriber (or many, behind a NAT). An IPv6
// subscriber is normally assigned a whole /64 (often a /56 or /48), and can
// pick a fresh address from its 2^64 for every request. Keyed by full
// address, such a client would never be limited, and would fill the store
// with keys. IP therefore keys IPv6 clients by their /64 ("2001:db8:1:2::/64")
// by default; WithIPv6Prefix changes the length (48 or 56 for stricter
// grouping, 128 for none). IPv4-mapped IPv6 addresses ("::ffff:192.0.2.1", as
// dual-stack listeners report IPv4 peers) are keyed as the IPv4 address they
// carry, and IPv6 zones are dropped.
//
// # Bounded keys
//
// Keys end up in a store, possibly Redis, so a client must not be able to
// make them huge: header values, context values, routes and claims longer than
// DefaultMaxValueLength bytes are replaced by their SHA-256 hash, and bearer
// tokens longer than DefaultMaxTokenLength are refused before decoding.
package keyfuncs
