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
// Every limiter error (store down, timeout, a negative cost, a failed
// refund, a full store refusing a new key) is logged, at most once per
// LogInterval, with the number of errors left out since the last line, and
// so is the store's circuit breaker opening and closing (see
// core.WithBreaker): whatever observers are set (WithObserver), which see
// each error as an event besides. WithoutStoreErrorLog turns those lines
// off. Observer panics, tier pick panics and a peer address that is not an
// IP (a server configuration error, see KeyErrorProblem) are always logged,
// at the same pace.
func WithLogger(l *slog.Logger) Option {
	return func(p *Policy) error {
		if l == nil {
			return nilOption("logger")
		}
		p.logs.logger = l
		return nil
	}
}

// WithoutStoreErrorLog turns off the policy's log lines about its store:
// a failed store call (the request failed open or closed), a full store's
// refusal, a failed refund, and the store's circuit breaker opening and
// closing. Observers (WithObserver) still see every one of them as an event:
// set it when an observer already alerts on them (metrics/prometheus's
// store_errors_total and breaker_open) and the log would say it twice.
// Observer panics, tier pick panics and a peer that is not an IP are still
// logged.
func WithoutStoreErrorLog() Option {
	return func(p *Policy) error {
		p.logs.quietStore = true
		return nil
	}
}

// policyLogs writes the policy's log lines, each kind at most once per
// interval.
type policyLogs struct {
	logger     *slog.Logger     // nil: slog.Default()
	now        func() time.Time // the clock of the intervals, time.Now unless a test sets it (no report is then scheduled: see reportLater)
	every      time.Duration
	quietStore bool // WithoutStoreErrorLog

	storeErr, storeFull, observerPanic, peerNotIP, pickPanic, refundErr throttle
	breakerOpened, breakerClosed                                        throttle
}

// logStore writes a line about the store, as log does, unless
// WithoutStoreErrorLog turned those off.
func (l *policyLogs) logStore(t *throttle, msg, policy string, err error) {
	if !l.quietStore {
		l.log(t, msg, policy, err)
	}
}

// throttle lets one line of a kind through per interval and counts the rest.
type throttle struct {
	next       atomic.Int64 // earliest instant of the next line, Unix nanoseconds
	suppressed atomic.Uint64
	armed      atomic.Bool // a line reporting the suppressed count is scheduled
}

// take reports whether a line may be written at now, and if so starts a new
// interval.
func (t *throttle) take(now time.Time, every time.Duration) bool {
	next, n := t.next.Load(), now.UnixNano()
	return n >= next && t.next.CompareAndSwap(next, n+int64(every))
}

// pass reports whether a line may be written at now and, if so, how many
// were left out since the last one; a line left out is counted.
func (t *throttle) pass(now time.Time, every time.Duration) (suppressed uint64, ok bool) {
	if !t.take(now, every) {
		t.suppressed.Add(1)
		return 0, false
	}
	return t.suppressed.Swap(0), true
}

// clock returns the time of the intervals.
func (l *policyLogs) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

// log writes msg with policy and err as an error, unless a line of t's kind
// was written less than an interval ago. A line left out is counted, and
// reported when the interval ends (see reportLater): a burst of errors that
// stops never has a next line to carry its count.
func (l *policyLogs) log(t *throttle, msg, policy string, err error) {
	now := l.clock()
	suppressed, ok := t.pass(now, l.every)
	if !ok {
		l.reportLater(t, msg, policy, now)
		return
	}
	l.write(msg, policy, err, suppressed)
}

// reportLater schedules, at most once per interval, a line at the interval's
// end with the number of lines of t's kind left out, unless a line of that
// kind is written first (it then carries the count).
func (l *policyLogs) reportLater(t *throttle, msg, policy string, now time.Time) {
	if l.now != nil {
		return // a test's manual clock: a real timer would fire on another time
	}
	if !t.armed.CompareAndSwap(false, true) {
		return
	}
	wait := time.Duration(t.next.Load() - now.UnixNano())
	time.AfterFunc(max(wait, 0), func() {
		t.armed.Store(false)
		if !t.take(l.clock(), l.every) {
			return // a line of this kind was written meanwhile, with the count
		}
		if n := t.suppressed.Swap(0); n > 0 {
			l.write(msg+" (lines left out at the interval's end)", policy, nil, n)
		}
	})
}

// write writes one line.
func (l *policyLogs) write(msg, policy string, err error, suppressed uint64) {
	logger := l.logger
	if logger == nil {
		logger = slog.Default()
	}
	attrs := []slog.Attr{slog.String("policy", policy), slog.Uint64("suppressed", suppressed)}
	if err != nil {
		attrs = []slog.Attr{slog.String("policy", policy), slog.Any("err", err), slog.Uint64("suppressed", suppressed)}
	}
	logger.LogAttrs(context.Background(), slog.LevelError, msg, attrs...)
}

// recoverObserver turns a panicking observer into a log line.
func (p *Policy) recoverObserver(policy string) {
	if v := recover(); v != nil {
		p.logs.log(&p.logs.observerPanic, "ratewarden: observer panicked; the request proceeds as decided",
			policy, fmt.Errorf("ratewarden: observer panic: %v", v))
	}
}
