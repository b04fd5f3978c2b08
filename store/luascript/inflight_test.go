package luascript

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// failing is a Backend whose calls all fail, counting them.
type failing struct{ calls *int }

func (f failing) Eval(context.Context, *Script, []string, []string, []int64) ([]int64, error) {
	*f.calls++
	return nil, errors.New("connection refused")
}

func TestInFlightScriptsAreFilledIn(t *testing.T) {
	for _, s := range InFlightScripts() {
		for _, placeholder := range []string{"NOW2", "NOW4", "EXPIRE3", "EXPIRE5", "ARGV[NOW]", "ARGV[MINTTL]"} {
			expect.False(t, strings.Contains(s.Source, placeholder), "%s holds %s", s, placeholder)
		}
		expect.Len(t, s.SHA1, 40)
	}
}

// Bad limits are refused before any call; a failed call wraps ErrRedis; a
// lease from another store is refused.
func TestInFlightBadInput(t *testing.T) {
	calls := 0
	st, err := New(failing{&calls})
	must.NoError(t, err)
	ctx := context.Background()
	_, err = st.Acquire(ctx, core.LeaseRequest{Key: "k", InFlight: core.Concurrent(100_000)})
	expect.ErrorIs(t, err, core.ErrInvalidLimit)
	expect.Zero(t, calls)
	_, err = st.Acquire(ctx, core.LeaseRequest{Key: "k", InFlight: core.Concurrent(2)})
	expect.ErrorIs(t, err, ErrRedis)
	expect.Equal(t, 1, calls)
	expect.ErrorIs(t, st.Release(ctx, core.Lease{}), core.ErrInvalidOption)
	expired := make([]bool, 1)
	expect.ErrorIs(t, st.Renew(ctx, core.SystemClock{}.Now(), []core.Lease{{Key: "x"}}, expired), core.ErrInvalidOption)
	err = st.Renew(ctx, core.SystemClock{}.Now(), []core.Lease{{Key: "x", ID: "1", Duration: core.DefaultLease}}, expired)
	expect.ErrorIs(t, err, ErrRedis)
	_, err = st.PeekSlots(ctx, core.LeaseRequest{Key: "k", InFlight: core.Concurrent(2)})
	expect.ErrorIs(t, err, ErrRedis)
}

// A key's slots are hash-tagged as its rate state is, so one script call
// touches one Cluster slot; a long key is hashed.
func TestInFlightKey(t *testing.T) {
	st, err := New(failing{new(int)}, WithPrefix("p:"))
	must.NoError(t, err)
	expect.Equal(t, "p:{ns%3A:a%7Bb}:c", st.InFlightKey("ns:", "a{b"))
	long := st.InFlightKey("", strings.Repeat("k", 10<<10))
	expect.Less(t, len(long), 100)
	expect.True(t, strings.HasPrefix(long, "p:{#"))
}
