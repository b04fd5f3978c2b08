package keyfuncs

import (
	"fmt"
)

var (
	errNoResolver    = fmt.Errorf("%w: keyfuncs.FrameworkIP: the adapter's framework resolves no client IP (net/http has none): use keyfuncs.IP, with WithTrustedProxies behind a proxy", ErrKey)
	errFrameworkIP   = fmt.Errorf("%w: the framework's client IP is not an IP address (a forwarding header it trusts holds something else?)", ErrKey)
	errFrameworkPeer = fmt.Errorf(`%w, and the framework named no client (a unix socket or a custom listener): configure the framework to trust the proxy in front of it, or use keyfuncs.IP with WithTrustedProxies("unix")`, ErrPeerNotIP)
)

// FrameworkIP returns a key function that keys a request by the client IP
// address as the web framework resolved it, for apps that already configured
// that resolution (its trusted proxies and headers) and want one answer
// everywhere. The adapter's Request supplies it (ClientIPResolver):
//
//   - Gin: c.ClientIP(). Gin trusts every peer as a proxy unless
//     engine.SetTrustedProxies is called: by default any client can choose
//     its key by sending X-Forwarded-For or X-Real-IP (Engine.RemoteIPHeaders),
//     whose entries Gin walks from the right past trusted proxies. Gin also
//     trusts a unix-socket peer always, and believes
//     Engine.TrustedPlatform's header (such as gin.PlatformCloudflare)
//     from anyone.
//   - Echo v4: c.RealIP(). With an Echo.IPExtractor set (echo.ExtractIPDirect,
//     echo.ExtractIPFromXFFHeader with its TrustOption, ...), its answer.
//     Without one, Echo returns the first (leftmost, client-written) entry of
//     X-Forwarded-For, else X-Real-IP, from any peer: every client chooses its
//     own key. Set an IPExtractor before using FrameworkIP with Echo.
//   - Echo v5: c.RealIP(). Without an IPExtractor it is the peer address (v5
//     reads no header by default); echo.ExtractIPFromXFFHeader with trust
//     options reads the header from trusted proxies, and
//     echo.LegacyIPExtractor brings back v4's client-written answer. v5's
//     extractors trust no unix-socket peer: RealIP is "" there, which
//     FrameworkIP refuses.
//   - Fiber v2: c.IP(). Without Config.ProxyHeader it is the peer address
//     (fasthttp reports 0.0.0.0 for a peer that is not TCP, which FrameworkIP
//     refuses). With ProxyHeader, the header's value from any peer unless
//     Config.EnableTrustedProxyCheck limits it to Config.TrustedProxies; the
//     whole value, unless Config.EnableIPValidation picks its first (leftmost,
//     client-written) valid address. So with "X-Forwarded-For" a list is
//     refused as not an address, and with validation the client chooses its
//     key: use a header that the proxy overwrites (X-Real-IP), with the trusted
//     proxy check on.
//   - Fiber v3: c.IP(). ProxyHeader is read only with Config.TrustProxy set
//     and the peer trusted by Config.TrustProxyConfig (its Proxies, or
//     Loopback, Private, LinkLocal, UnixSocket); otherwise the peer address.
//     A list in the header needs EnableIPValidation, with v2's caveat.
//   - net/http resolves nothing: the key function returns an error wrapping
//     ErrKey that says to use IP with WithTrustedProxies, which does for
//     net/http (and every other adapter) what the frameworks do.
//
// The answer must be an IP address ("ip", "[ipv6]" or either with a port);
// anything else, or an unspecified address (0.0.0.0, ::), is a key error
// wrapping ErrKey, and wrapping ErrPeerNotIP too when the peer itself has no
// IP address. The address is keyed as IP keys it: IPv4-mapped addresses as
// IPv4, zones dropped, IPv6 grouped by WithIPv6Prefix bits (default 64) and
// IPv4 by WithIPv4Prefix bits (default 32), the only options that apply; the
// constructor returns an error wrapping core.ErrInvalidOption for any other
// or an invalid one. The key function is safe for concurrent use.
func FrameworkIP(opts ...Option) (Func, error) {
	cfg := config{ctor: "FrameworkIP", ip: ipConfig{v4Bits: 32, v6Bits: 64}}
	if err := cfg.apply(opts); err != nil {
		return nil, err
	}
	c := cfg.ip
	return func(r Request) (string, error) {
		res, ok := r.(ClientIPResolver)
		if !ok {
			return "", errNoResolver
		}
		a, text, ok := parseHostPort(trimOWS(res.ClientIP()))
		if !ok || a.IsUnspecified() {
			if _, _, peerOK := parseHostPort(r.RemoteAddr()); !peerOK {
				return "", errFrameworkPeer
			}
			return "", errFrameworkIP
		}
		return c.format(a, text), nil
	}, nil
}
