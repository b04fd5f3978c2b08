package core

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/internal/must"
)

// divInterval must equal a real division for every interval and every n the
// algorithms can produce (below 2^53).
func TestDivIntervalIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	intervals := []int64{1, 2, 3, 7, 1000, 1024, 33333, 333334, 1 << 47, 1<<48 - 1}
	for range 200 {
		intervals = append(intervals, 1+rng.Int64N(1<<48))
	}
	for _, d := range intervals {
		p, err := computeParams(Limit{Rate: 1, Period: time.Duration(d) * time.Microsecond})
		must.NoError(t, err)
		must.Equal(t, d, p.interval)
		ns := []int64{0, 1, d - 1, d, d + 1, 1<<53 - 1, 1<<53 - d}
		for range 500 {
			ns = append(ns, rng.Int64N(1<<53))
		}
		for _, n := range ns {
			if n < 0 {
				continue
			}
			must.Equal(t, n/d, p.divInterval(n), "%d / %d", n, d)
		}
	}
}

// A request whose algorithm or limits are not the ones its Limiter planned
// for must not be decided with the plan's figures.
func TestPlanFollowsTheRequest(t *testing.T) {
	limits := []Limit{PerSecond(10)}
	p, err := newPlan(GCRA, limits)
	must.NoError(t, err)
	req := TakeRequest{Algorithm: GCRA, Limits: limits, plan: &p}
	must.NotNil(t, req.prepared())
	req.Limits = []Limit{PerSecond(20)}
	must.Nil(t, req.prepared(), "other limits")
	req.Limits, req.Algorithm = limits, TokenBucket
	must.Nil(t, req.prepared(), "another algorithm")
	req.Algorithm, req.Limits = GCRA, nil
	must.Nil(t, req.prepared(), "no limits")
}
