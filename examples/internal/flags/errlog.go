package flags

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ratewarden/ratewarden/httplimit"
)

// errorLog is an httplimit.Observer that writes the limiter's errors (a store
// down or slow, a failed refund) to w, at most one line per interval: an
// outage does not flood the log. It accounts for every error all the same:
// those it leaves out are counted and written in one line when the interval
// ends, or when it is closed, so the lines add up to the number of errors
// (with -fail open, each one a request let through without a decision). Key
// errors are the client's, not the server's, and are not written. It is safe
// for concurrent use.
type errorLog struct {
	w        io.Writer
	failMode string
	interval time.Duration

	mu      sync.Mutex
	next    time.Time   // no line before this instant
	omitted int         // errors not written since the last line
	last    error       // the last of them
	flush   *time.Timer // writes the omitted errors at next; nil when none is set
	closed  bool        // no more timers: every error is written at once

	wmu sync.Mutex // serializes writes to w, which are made outside mu
}

func newErrorLog(w io.Writer, failMode string) *errorLog {
	return &errorLog{w: w, failMode: failMode, interval: httplimit.LogInterval}
}

// Observe writes e's error when the interval since the last line has passed,
// and counts it otherwise, setting a timer that writes the count when the
// interval ends. Lines are written outside the lock.
func (l *errorLog) Observe(e httplimit.Event) {
	if e.Err == nil || e.Outcome == httplimit.OutcomeKeyError {
		return
	}
	now := time.Now()
	l.mu.Lock()
	if now.Before(l.next) && !l.closed {
		l.omitted++
		l.last = e.Err
		if l.flush == nil {
			l.flush = time.AfterFunc(l.next.Sub(now), l.writeOmitted)
		}
		l.mu.Unlock()
		return
	}
	l.next = now.Add(l.interval)
	omitted := l.omitted
	l.omitted, l.last = 0, nil
	l.mu.Unlock()

	msg := fmt.Sprintf("rate limiter error (failing %s): %v", l.failMode, e.Err)
	if omitted > 0 {
		msg += fmt.Sprintf(" (and %d more since the last line)", omitted)
	}
	l.write(msg)
}

// write writes msg and a newline to w.
func (l *errorLog) write(msg string) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	fmt.Fprintln(l.w, msg)
}

// writeOmitted writes the errors left out since the last line, if any, and
// starts a new interval.
func (l *errorLog) writeOmitted() {
	l.mu.Lock()
	l.flush = nil
	omitted, last := l.omitted, l.last
	l.omitted, l.last = 0, nil
	if omitted > 0 {
		l.next = time.Now().Add(l.interval)
	}
	l.mu.Unlock()
	if omitted > 0 {
		l.write(fmt.Sprintf("rate limiter errors (failing %s): %d more since the last line, the last: %v", l.failMode, omitted, last))
	}
}

// Close writes the errors left out since the last line, if any, and stops the
// timer; errors observed after it are written one line each. It returns nil.
func (l *errorLog) Close() error {
	l.mu.Lock()
	l.closed = true
	if l.flush != nil {
		l.flush.Stop()
	}
	l.mu.Unlock()
	l.writeOmitted()
	return nil
}
