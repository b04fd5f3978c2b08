package keyfuncs

import "github.com/ratewarden/ratewarden/core"

// Policy returns core's HTTP policy for lim with the adapters' shared default:
// the key is the client IP (the peer address, no proxy trusted, see IP) unless
// opts hold a core.WithKeyFunc. All four adapters build their policy with it,
// so the default is decided in one place.
func Policy(lim *core.Limiter, opts ...core.HTTPOption) (*core.HTTPPolicy, error) {
	ip, err := IP()
	if err != nil {
		return nil, err
	}
	return core.NewHTTPPolicy(lim, append([]core.HTTPOption{core.WithKeyFunc(ip)}, opts...)...)
}
