package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// RunEdits checks that a store keeps what a client used when a limit's
// figures are edited (core.TakeRequest.Reexpress): for every algorithm, a
// client mid-quota under 5/h that had spent 3 gets exactly 7 more under
// 10/h; one that had spent 7 of 10/h gets none under 5/h and never more than
// 5 in the hour after; a meter's time owed is re-expressed in the new
// interval; and random scripts that edit the limits (up, down, the period,
// the burst, across the sliding window's packing) decide as the reference.
func RunEdits(t *testing.T, newStore NewStore) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String()+"/up", func(t *testing.T) { editUp(t, newStore(t), alg) })
		t.Run(alg.String()+"/down", func(t *testing.T) { editDown(t, newStore(t), alg) })
		t.Run(alg.String()+"/concurrent", func(t *testing.T) { editConcurrent(t, newStore(t), alg) })
		for i, sets := range editScripts(alg) {
			t.Run(fmt.Sprintf("%s/scripted/%d", alg, i), func(t *testing.T) {
				editScripted(t, newStore(t), alg, sets, uint64(i)<<16|uint64(alg))
			})
		}
	}
}

// takeAt decides one request of cost for "client" under limits at now.
func takeAt(t *testing.T, st core.Store, alg core.Algorithm, limits []core.Limit, cost int64, now time.Time) core.Decision {
	t.Helper()
	req := core.TakeRequest{Key: "client", Namespace: "edits", Algorithm: alg, Limits: limits, Cost: cost, Now: now}
	d, err := st.Take(context.Background(), req)
	must.NoError(t, err)
	return d
}

// admittedAt spends one at a time under limits at now until a denial, and
// returns how many were admitted (at most 100).
func admittedAt(t *testing.T, st core.Store, alg core.Algorithm, limits []core.Limit, now time.Time) int {
	t.Helper()
	for n := range 100 {
		if !takeAt(t, st, alg, limits, 1, now).Allowed {
			return n
		}
	}
	return 100
}

// editUp: 5/h with 3 spent, raised to 10/h, admits exactly 7 more.
func editUp(t *testing.T, st core.Store, alg core.Algorithm) {
	before, after := []core.Limit{core.PerHour(5)}, []core.Limit{core.PerHour(10)}
	must.Equal(t, 3, admittedAtMost(t, st, alg, before, Start, 3))
	expect.Equal(t, 7, admittedAt(t, st, alg, after, Start), "3 of 5 spent, raised to 10: 7 more")
	expect.Equal(t, 0, admittedAt(t, st, alg, before, Start), "back at 5: the 10 spent stay spent")
}

// admittedAtMost spends one at a time, n times at most, and returns how many
// were admitted.
func admittedAtMost(t *testing.T, st core.Store, alg core.Algorithm, limits []core.Limit, now time.Time, n int) int {
	t.Helper()
	for i := range n {
		if !takeAt(t, st, alg, limits, 1, now).Allowed {
			return i
		}
	}
	return n
}

// editDown: 10/h with 7 spent, cut to 5/h, admits none at once and at most
// 5 in the hour after; a meter owes 7 new intervals of 12 minutes, cut to
// the new burst's hour, so it admits again 12 minutes later.
func editDown(t *testing.T, st core.Store, alg core.Algorithm) {
	before, after := []core.Limit{core.PerHour(10)}, []core.Limit{core.PerHour(5)}
	must.Equal(t, 7, admittedAtMost(t, st, alg, before, Start, 7))
	d := takeAt(t, st, alg, after, 1, Start)
	expect.False(t, d.Allowed, "7 spent is over the new 5")
	expect.Equal(t, int64(0), d.Remaining)
	if alg.OneWord() {
		expect.Equal(t, 12*time.Minute, d.RetryAfter, "the time owed, re-expressed and cut to the new burst")
	}
	admitted := 0
	for m := 1; m <= 60; m++ {
		admitted += admittedAt(t, st, alg, after, Start.Add(time.Duration(m)*time.Minute))
	}
	expect.LessOrEqual(t, admitted, 5, "never more than the new limit in the hour after")
	if alg.OneWord() {
		expect.Equal(t, 5, admitted, "a meter admits one per new interval")
	}
}

// editScripts are the limit sets a scripted edit moves through, in order
// and round again: raised, cut, a new period, and for the meters a new
// burst; a sliding window also crosses the size its counts pack in.
func editScripts(alg core.Algorithm) [][][]core.Limit {
	one := [][]core.Limit{
		{core.PerSecond(3)}, {core.PerSecond(6)}, {core.PerSecond(2)},
		{core.Every(7, 1500*time.Millisecond)}, {core.PerSecond(9)}, {core.PerMinute(10)},
	}
	two := [][]core.Limit{
		{core.PerSecond(3), core.PerMinute(10).Named("minute")},
		{core.PerSecond(6), core.PerMinute(20).Named("minute")},
		{core.PerSecond(2), core.Every(5, 90*time.Second).Named("minute")},
	}
	sets := [][][]core.Limit{one, two}
	if alg.OneWord() {
		sets = append(sets, [][]core.Limit{
			{core.PerSecond(3).WithBurst(1)}, {core.PerSecond(3).WithBurst(6)},
			{core.Every(5, 200*time.Millisecond).WithBurst(10)}, {core.PerSecond(2).WithBurst(4)},
		})
	}
	if alg == core.SlidingWindow {
		sets = append(sets, [][]core.Limit{{core.PerSecond(1 << 16)}, {core.PerSecond(5)}, {core.PerSecond(40_000)}})
	}
	return sets
}

// editScripted runs a random script (see script) whose limits move to the
// next set every 20 steps, against st and the reference, decision by
// decision.
func editScripted(t *testing.T, st core.Store, alg core.Algorithm, sets [][]core.Limit, seed uint64) {
	ref := NewReference()
	ns := fmt.Sprintf("edits-%s-%d", alg, seed)
	for n, s := range script(seed, sets[0], 240) {
		limits := sets[n/20%len(sets)]
		agree(t, st, ref, n, core.TakeRequest{Key: s.key, Namespace: ns, Algorithm: alg, Limits: limits, Cost: s.cost, Now: s.at, Admitted: s.admitted})
	}
}

// editConcurrent: 32 goroutines spend on one key at one instant, half under
// 5/h and half under 10/h, as two instances do while a reload reaches one
// before the other: the key passes between the two figures on nearly every
// request. Every decision is one its limit could make, and afterwards the
// key is full under 5/h. (Each pass from 10/h down to 5/h cuts what was used
// to the smaller limit, which the next pass back up does not restore: while
// two figures are in force at once, a key over the smaller one can be
// admitted up to the requests it sends in that time. See core's Reexpress.)
func editConcurrent(t *testing.T, st core.Store, alg core.Algorithm) {
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range 32 {
		limits := []core.Limit{core.PerHour(5)}
		if g%2 == 1 {
			limits = []core.Limit{core.PerHour(10)}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := core.TakeRequest{Key: "client", Namespace: "edits", Algorithm: alg, Limits: limits, Cost: 1, Now: Start}
			for range 4 {
				d, err := st.Take(context.Background(), req)
				if !expect.NoError(t, err) {
					return
				}
				expect.Less(t, d.Remaining, limits[0].Rate, "a decision of its own limit")
				expect.GreaterOrEqual(t, d.Remaining, int64(0))
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	expect.GreaterOrEqual(t, admitted.Load(), int64(5), "at least the smaller limit")
	expect.False(t, takeAt(t, st, alg, []core.Limit{core.PerHour(5)}, 1, Start).Allowed, "full under 5/h")
}
