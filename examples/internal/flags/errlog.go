package flags

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// errorLog is an httplimit.Observer that writes the limiter's errors (a store
// down or slow, a failed refund) to w, at most one line per interval, saying
// how many it left out since the last: an outage does not flood the log.
// Key errors are the client's, not the server's, and are not written.
type errorLog struct {
	w        io.Writer
	failMode string
	clock    core.Clock
	interval time.Duration

	mu      sync.Mutex
	next    time.Time // no line before this instant
	omitted int       // errors not written since the last line
}

func newErrorLog(w io.Writer, failMode string, clock core.Clock) *errorLog {
	return &errorLog{w: w, failMode: failMode, clock: clock, interval: httplimit.LogInterval}
}

// Observe writes e's error when the interval since the last line has passed,
// and counts it otherwise. The line is written outside the lock.
func (l *errorLog) Observe(e httplimit.Event) {
	if e.Err == nil || e.Outcome == httplimit.OutcomeKeyError {
		return
	}
	now := l.clock.Now()
	l.mu.Lock()
	if now.Before(l.next) {
		l.omitted++
		l.mu.Unlock()
		return
	}
	l.next = now.Add(l.interval)
	omitted := l.omitted
	l.omitted = 0
	l.mu.Unlock()

	msg := fmt.Sprintf("rate limiter error (failing %s): %v", l.failMode, e.Err)
	if omitted > 0 {
		msg += fmt.Sprintf(" (and %d more since the last line)", omitted)
	}
	fmt.Fprintln(l.w, msg)
}
