package core_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// wallClock reads time.Now, which a synctest bubble fakes.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// One renewer per limiter renews every held lease in one store call every
// Lease/3, keeps them held for as long as their requests run, and ends once
// none is held: no goroutine per request, none left behind.
func TestRenewerLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, err := memory.New(memory.WithSweepInterval(0))
		must.NoError(t, err)
		defer mem.Close()
		st := &deadlineStore{Store: mem, leases: map[string]map[string]time.Time{}}
		lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(10), core.WithClock(wallClock{}),
			core.WithInFlight(core.InFlight{Slots: 2, Lease: 30 * time.Second}))
		must.NoError(t, err)
		ctx := context.Background()
		var slots []core.Slot
		for _, key := range []string{"a", "a", "b"} {
			s, d, err := lim.Acquire(ctx, key)
			must.NoError(t, err)
			must.True(t, d.Allowed)
			slots = append(slots, s)
		}
		time.Sleep(10*time.Second + time.Millisecond)
		synctest.Wait()
		expect.Equal(t, 1, st.renewCalls(), "three leases of two keys, one batched call")

		time.Sleep(5 * time.Minute) // ten times the lease: renewed all along
		synctest.Wait()
		expect.Equal(t, 31, st.renewCalls(), "one round every 10s, for 310s")
		expect.Equal(t, 2, st.held("a"))
		expect.Equal(t, 1, st.held("b"))
		_, d, err := lim.Acquire(ctx, "a")
		must.NoError(t, err)
		expect.False(t, d.Allowed, "renewed slots stay taken")

		for _, s := range slots {
			must.NoError(t, s.Release(ctx))
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		expect.Equal(t, 31, st.renewCalls(), "nothing held: the renewer ended without a call")
		// The bubble ends only once every goroutine it started has ended:
		// the renewer's end is checked by synctest.Test itself.
	})
}
