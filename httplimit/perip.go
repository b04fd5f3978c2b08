package httplimit

import (
	"fmt"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// MustPerIP returns the policy behind the adapters' one-line form
// (stdhttp.PerIP("100/m") and its twins): limit, a ParseLimit string such as
// "100/m" or "10/s burst 20", per client IP (the peer address, no proxy
// trusted), with GCRA (bursts up to the burst, then the steady rate) on a
// memory store of its own (at most memory.DefaultMaxKeys clients; its sweeper
// runs for the life of the program), and the standard headers.
//
// It panics on a malformed limit, as regexp.MustCompile does: it is for
// limits written in the program, which fail the moment it starts. Build the
// limiter and call New for anything else (a limit read from configuration,
// another key, store or algorithm).
func MustPerIP(limit string) *Policy {
	p, err := perIP(limit)
	if err != nil {
		panic(fmt.Sprintf("ratewarden: PerIP(%q): %v", truncate(limit), err))
	}
	return p
}

func perIP(limit string) (*Policy, error) {
	l, err := core.ParseLimit(limit)
	if err != nil {
		return nil, err
	}
	st, err := memory.New()
	if err != nil {
		return nil, err
	}
	lim, err := core.NewLimiter(st, core.GCRA, l)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return New(lim)
}
