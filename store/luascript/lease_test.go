package luascript_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/luascript"
)

// replying is a Backend that answers every call with a fixed reply, as a
// tampered script or a proxy that alters replies would.
type replying struct{ reply []int64 }

func (r replying) Eval(_ context.Context, _ *luascript.Script, _, _ []string, dst []int64) ([]int64, error) {
	return append(dst, r.reply...), nil
}

// TestLeaseTokensRefusesTamperedReplies: a reply granting more than asked,
// fewer than the cost, or what the limits cannot admit is an error, never
// a grant.
func TestLeaseTokensRefusesTamperedReplies(t *testing.T) {
	const now = 1_700_000_000_000_000
	gcra := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(100)}, Cost: 2}
	window := core.TakeRequest{Key: "k", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerSecond(100)}, Cost: 1}
	tests := []struct {
		name  string
		req   core.TakeRequest
		reply []int64
		err   error
	}{
		{"more than asked", gcra, []int64{11, now, 0}, core.ErrTokenGrant},
		{"fewer than the cost", gcra, []int64{1, now, 0}, core.ErrTokenGrant},
		{"negative", gcra, []int64{-1, now, 0}, core.ErrTokenGrant},
		{"beyond the burst", gcra, []int64{10, now, now + 995_000}, core.ErrTokenGrant},
		{"beyond the window's count", window, []int64{10, now, now - now%1_000_000, 95, 0}, core.ErrTokenGrant},
		{"a denial the limits admit", window, []int64{0, now, 0, 0, 0}, core.ErrTokenGrant},
		{"short", gcra, []int64{5, now}, luascript.ErrRedis},
		{"time out of range", gcra, []int64{5, -4, 0}, luascript.ErrRedis},
		{"negative state", window, []int64{5, now, 0, -1, 0}, luascript.ErrRedis},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := luascript.New(replying{tt.reply}, luascript.WithLocalCache(0))
			must.NoError(t, err)
			g, err := st.LeaseTokens(context.Background(), tt.req, 10, 100*time.Millisecond)
			must.ErrorIs(t, err, tt.err)
			must.ErrorIs(t, err, luascript.ErrRedis)
			expect.Equal(t, core.TokenGrant{}, g)
		})
	}
	st, err := luascript.New(replying{[]int64{10, now, 0}})
	must.NoError(t, err)
	g, err := st.LeaseTokens(context.Background(), gcra, 10, 100*time.Millisecond)
	must.NoError(t, err)
	expect.Equal(t, int64(10), g.Granted)
	expect.Equal(t, 100*time.Millisecond, g.TTL)
	expect.True(t, g.Decision.Allowed)
	expect.Equal(t, int64(90), g.Decision.Remaining)
	if errors.Is(err, core.ErrTokenGrant) {
		t.Fatal("a grant within its terms")
	}
}

// TestLeaseScripts: every leasable algorithm has a lease script, listed
// for bindings that load scripts ahead of use.
func TestLeaseScripts(t *testing.T) {
	scripts := luascript.LeaseScripts()
	expect.Len(t, scripts, 4)
	seen := map[string]bool{}
	for _, s := range scripts {
		expect.False(t, seen[s.SHA1], s.String())
		seen[s.SHA1] = true
		expect.Contains(t, s.Source, "ARGV[opt + 2]")
	}
}
