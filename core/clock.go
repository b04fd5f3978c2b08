package core

import (
	"math"
	"sync"
	"time"
)

// Clock tells the time. Limiters and stores take one through an option so that
// tests and simulations move time by hand instead of sleeping.
type Clock interface {
	Now() time.Time
}

// SystemClock is the default Clock. It reads the monotonic clock only (the
// time since the program started, added to the wall time then), which costs
// half of time.Now and never steps when the wall clock is set.
type SystemClock struct{}

// startWall is the instant the package was initialised, with its monotonic
// reading, and startNanos the same instant in nanoseconds since the Unix epoch.
var (
	startWall  = time.Now()
	startNanos = startWall.UnixNano()
)

// Now returns the current time, as the monotonic clock counts it.
func (SystemClock) Now() time.Time { return sinceStart(time.Since(startWall)) }

// systemAt is t, a reading of time.Now, as SystemClock counts time: the
// monotonic time from startWall to t. A t without a monotonic reading counts
// by its wall time.
func systemAt(t time.Time) time.Time { return sinceStart(t.Sub(startWall)) }

// sinceStart is the instant d after startWall, without a monotonic reading.
func sinceStart(d time.Duration) time.Time {
	ns := startNanos + int64(d)
	if d > 0 && ns < startNanos {
		ns = math.MaxInt64 // past any store's MaxTime: an error, not a wrapped time
	}
	sec := ns / 1e9
	return time.Unix(sec, ns-sec*1e9)
}

// ManualClock is a Clock that moves only when told to: for tests, examples and
// simulations. It is safe for concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a ManualClock reading start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now returns the clock's current reading.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward when d is negative).
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}
