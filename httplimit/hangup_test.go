package httplimit

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
)

// hangUpReq is a request view whose client hangs up when the clock reaches
// goneAt (never when it is zero), and that counts the checks.
type hangUpReq struct {
	*fakereq.Request
	goneAt time.Time
	checks atomic.Int64
}

func (r *hangUpReq) ClientHungUp() bool {
	r.checks.Add(1)
	return !r.goneAt.IsZero() && !time.Now().Before(r.goneAt)
}

// A held request whose server does not end its context when the client hangs
// up (fasthttp) asks the view every HangUpCheckInterval, and is dropped at the
// first check after the hang-up; one whose client stays is asked as often and
// once more at the end, then passes. A request that is not held is never
// asked.
func TestHeldRequestChecksForAHangUp(t *testing.T) {
	for _, tt := range []struct {
		name   string
		goneIn time.Duration // 0: the client stays
		next   bool
		held   time.Duration
		checks []int64 // either: the last tick and the end of the hold may come at once, in either order
	}{
		{"the client stays", 0, true, time.Second, []int64{10, 11}},
		{"the client leaves at 250 ms", 250 * time.Millisecond, false, 300 * time.Millisecond, []int64{3}},
		{"the client leaves at 950 ms", 950 * time.Millisecond, false, time.Second, []int64{10}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := core.PerSecond(1).WithBurst(5)
				p, _ := newPolicy(t, &mapStore{}, core.LeakyBucket, l, nil)
				first := &hangUpReq{Request: fakereq.New("192.0.2.1:1")}
				_, next := p.Handle(context.Background(), first, newSetterWriter())
				must.True(t, next)
				expect.Zero(t, first.checks.Load(), "a request that is not held is not checked")

				r := &hangUpReq{Request: fakereq.New("192.0.2.1:1")}
				start := time.Now()
				if tt.goneIn > 0 {
					r.goneAt = start.Add(tt.goneIn)
				}
				_, next = p.Handle(context.Background(), r, newSetterWriter())
				expect.Equal(t, tt.next, next)
				expect.Equal(t, tt.held, time.Since(start))
				expect.Contains(t, tt.checks, r.checks.Load())
			})
		})
	}
}
