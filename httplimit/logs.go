package httplimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// LogInterval is the least time between two log lines of one kind (store
// errors, observer panics, a peer that is not an IP, tier pick panics): an
// outage that fails every request writes one line per interval, with the
// number of lines left out since the previous one, not one per request.
const LogInterval = 10 * time.Second

// WithLogger sets where the policy logs what it must not keep silent:
// slog.Default() at the time of logging unless set. Lines are at level Error,
// with the attributes policy (the tier's name), err and suppressed.
//
// With no observer (WithObserver), every limiter error (store down, timeout,
// a negative cost, a failed refund, a full store refusing a new key) is
// logged, at most once per LogInterval,
// with the number of errors left out since the last line. With an observer,
// those go to the observer only. Observer panics, tier pick panics and a peer
// address that is not an IP (a server configuration error, see
// KeyErrorProblem) are logged in both cases, at the same pace.
func WithLogger(l *slog.Logger) Option {
	return func(p *Policy) error {
		if l == nil {
			return nilOption("logger")
		}
		p.logs.logger = l
		return nil
	}
}

// policyLogs writes the policy's log lines, each kind at most once per
// interval.
type policyLogs struct {
	logger *slog.Logger     // nil: slog.Default()
	now    func() time.Time // the clock of the intervals, time.Now unless a test sets it
	every  time.Duration

	storeErr, storeFull, observerPanic, peerNotIP, pickPanic, refundErr throttle
}

// throttle lets one line of a kind through per interval and counts the rest.
type throttle struct {
	next       atomic.Int64 // earliest instant of the next line, Unix nanoseconds
	suppressed atomic.Uint64
}

// pass reports whether a line may be written at now and, if so, how many
// were left out since the last one.
func (t *throttle) pass(now time.Time, every time.Duration) (suppressed uint64, ok bool) {
	next, n := t.next.Load(), now.UnixNano()
	if n < next || !t.next.CompareAndSwap(next, n+int64(every)) {
		t.suppressed.Add(1)
		return 0, false
	}
	return t.suppressed.Swap(0), true
}

// log writes msg with policy and err as an error, unless a line of t's kind
// was written less than an interval ago.
func (l *policyLogs) log(t *throttle, msg, policy string, err error) {
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	suppressed, ok := t.pass(now(), l.every)
	if !ok {
		return
	}
	logger := l.logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.LogAttrs(context.Background(), slog.LevelError, msg,
		slog.String("policy", policy), slog.Any("err", err), slog.Uint64("suppressed", suppressed))
}

// recoverObserver turns a panicking observer into a log line.
func (p *Policy) recoverObserver(policy string) {
	if v := recover(); v != nil {
		p.logs.log(&p.logs.observerPanic, "ratewarden: observer panicked; the request proceeds as decided",
			policy, fmt.Errorf("ratewarden: observer panic: %v", v))
	}
}
