package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/must"
)

// outageRecovery bounds how long after an outage RunTokenLeaseOutage waits
// for decisions to succeed again.
const outageRecovery = 10 * time.Second

// RunTokenLeaseOutage checks what token leases cost when outage takes the
// store's data away for a while and not everything comes back (a Redis
// master killed and its replica promoted, which loses the writes of the
// last replication lag): the fixed window of RunTokenLeaseDisrupted (10
// limiters, each on its own store, x 8 goroutines, 1000 per hour, leases of
// up to 50) runs windows one after another, without a circuit breaker so
// that every decision asks the store, while outage runs. Decisions may fail
// while it lasts; once it has returned they succeed again within 10 s, and
// from then on every window is exact, as is the window before it. The
// windows that met the outage are logged with what they admitted beyond the
// limit (writes the store lost) or below it (leases lost in failed calls),
// which the test cannot bound. newStore must decide on the caller's clock.
func RunTokenLeaseOutage(t *testing.T, newStore NewStore, outage Disrupt) {
	ls, clk, req := disruptedFleet(t, newStore, core.FixedWindow, core.PerHour(windowRate), windowLease, windowStart, core.WithoutBreaker())
	var windows []windowResult
	after := 0             // the first window begun after the outage
	recovered := -1        // the first of the clean windows that ended the run
	var took time.Duration // from the outage's end to that window's start
	r := disruptLoad(t, req, outage, func(r *disruptedLoad) {
		var ended time.Time
		for ; r.steps < 100_000; r.steps++ {
			if ended.IsZero() && r.stopped() {
				ended, after = time.Now(), r.steps
			}
			began := time.Now()
			clk.Set(windowStart.Add(time.Duration(r.steps) * time.Hour))
			w := disruptedWindow(ls, clk)
			r.note(w.failed, w.err)
			windows = append(windows, w)
			switch {
			case r.steps == 0:
				close(r.started)
			case ended.IsZero():
			case w.failed > 0:
				recovered = -1
				if time.Since(ended) > outageRecovery {
					return
				}
			case recovered < 0:
				recovered, took = r.steps, began.Sub(ended)
			case r.steps-recovered == 2: // three clean windows in a row
				return
			}
		}
	})
	must.Positive(t, r.failed, "decisions failed during the outage")
	must.True(t, recovered > 0, fmt.Sprintf("decisions still fail %s after the outage; the first failure: %v", outageRecovery, r.firstErr))
	t.Logf("%d decisions, give-backs and peeks failed; the first: %v", r.failed, r.firstErr)
	t.Logf("decisions succeed again %s after the outage", took)
	expectWindowExact(t, 0, windows[0])
	for i := recovered; i < len(windows); i++ {
		expectWindowExact(t, i, windows[i])
	}
	logOutage(t, windows[1:recovered], after-1)
}

// logOutage logs what the windows that met an outage admitted against the
// limit, met[after] being the first begun after it (numbered from 1: the
// window before the outage is 0).
func logOutage(t *testing.T, met []windowResult, after int) {
	t.Helper()
	var over, under int64
	unknown := 0
	for i, w := range met {
		if w.left < 0 { // its peek failed: what the store holds is unknown
			unknown++
			continue
		}
		d := w.admitted + w.left - windowRate
		over, under = over+max(0, d), under+max(0, -d)
		if d != 0 {
			when := "during"
			if i >= after {
				when = "after"
			}
			t.Logf("window %d (%s the outage): %d admitted, %d left, %+d against the limit, %d failures", i+1, when, w.admitted, w.left, d, w.failed)
		}
	}
	t.Logf("of the %d windows that met the outage, %d could not be read; the others admitted %d beyond their limits (writes the store lost) and %d below (tokens lost in failed calls)",
		len(met), unknown, over, under)
}
