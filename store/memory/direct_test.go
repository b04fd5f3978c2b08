package memory_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A closed store's errors reach the breaker on the direct path as on the
// general one: it opens after DefaultBreaker's failures and answers
// ErrBreakerOpen without asking the store.
func TestTakeMicrosFailuresOpenTheBreaker(t *testing.T) {
	st, err := memory.New()
	must.NoError(t, err)
	l, err := core.NewLimiter(st, core.GCRA, core.PerSecond(5))
	must.NoError(t, err)
	must.NoError(t, st.Close())
	var closed, open int
	for range core.DefaultBreaker().Failures + 3 {
		_, err := l.Allow(context.Background(), "k")
		switch {
		case errors.Is(err, core.ErrStoreClosed):
			closed++
		case errors.Is(err, core.ErrBreakerOpen):
			open++
		default:
			t.Fatalf("unexpected %v", err)
		}
	}
	expect.Equal(t, core.DefaultBreaker().Failures, closed, "store errors before the breaker opens")
	expect.Equal(t, 3, open, "answers of the open breaker")
}
