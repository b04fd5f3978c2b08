package httplimit

import (
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Outcome is what the policy did with one request, as an Observer sees it.
// Its String form is a fixed, lower-case word fit for a metric label.
type Outcome uint8

// The outcomes an Observer is told about.
const (
	// OutcomeAllowed: the limiter admitted the request; it went on.
	OutcomeAllowed Outcome = iota + 1
	// OutcomeDenied: the limiter denied the request; it got 429.
	OutcomeDenied
	// OutcomeDryRunDenied: the limiter denied the request, but the policy runs
	// dry (WithDryRun), so it went on.
	OutcomeDryRunDenied
	// OutcomeFailedOpen: the limiter failed (store down or slow) and the
	// request went on unlimited.
	OutcomeFailedOpen
	// OutcomeFailedClosed: the limiter failed and the request got 503
	// (WithFailClosed).
	OutcomeFailedClosed
	// OutcomeKeyError: no key could be found for the request; it got the
	// key-error response.
	OutcomeKeyError
	// OutcomeSkipped: the request was exempt (WithSkip); nothing was decided.
	OutcomeSkipped
	// OutcomeRefunded: the request's cost was given back after its handler
	// ran (WithRefund).
	OutcomeRefunded
	// OutcomeStoreFull: the store is full and refused the request's new key
	// (store/memory's WithRefuseWhenFull; core.ErrStoreFull): the request got
	// 503 with Retry-After whatever the fail mode, or went on in a dry run.
	OutcomeStoreFull
	// OutcomeBreakerOpen: the limiter's circuit breaker on its store is open
	// (core.ErrBreakerOpen: the store failed repeatedly), so the store was
	// not asked: the request went on (fail open) or got 503 with a
	// Retry-After of the time until the breaker probes the store again
	// (WithFailClosed), at once instead of after the store timeout.
	OutcomeBreakerOpen
	// OutcomeSettled: the request's reserved cost was settled at its real
	// cost after its handler ran (WithSettle, WithSettleHeader): Event.Settled
	// is the difference, Decision the state after it (its Debt what the key
	// owes); or the settle failed (Err).
	OutcomeSettled
	// OutcomeInFlightRefused: the rates admitted the request, but every
	// in-flight slot of its key was taken (core.WithInFlight): it got 429,
	// and its rates' cost back.
	OutcomeInFlightRefused
	// OutcomeInFlightDryRunRefused: as OutcomeInFlightRefused, but the
	// policy runs dry, so the request went on without a slot (its
	// OutcomeAllowed is reported too).
	OutcomeInFlightDryRunRefused
	// OutcomeBlocked: the key's penalty box (core.WithBlockFor), started by
	// an earlier denial, refused the request: it got 429 with a Retry-After
	// of the block's end, or of the limits' own wait when later (penalty.go).
	OutcomeBlocked
)

var outcomeNames = [...]string{
	OutcomeAllowed:               "allowed",
	OutcomeDenied:                "denied",
	OutcomeDryRunDenied:          "dry_run_denied",
	OutcomeFailedOpen:            "failed_open",
	OutcomeFailedClosed:          "failed_closed",
	OutcomeKeyError:              "key_error",
	OutcomeSkipped:               "skipped",
	OutcomeRefunded:              "refunded",
	OutcomeStoreFull:             "store_full",
	OutcomeBreakerOpen:           "breaker_open",
	OutcomeSettled:               "settled",
	OutcomeInFlightRefused:       "inflight_refused",
	OutcomeInFlightDryRunRefused: "inflight_dry_run_refused",
	OutcomeBlocked:               "blocked",
}

// Outcomes returns every Outcome, in order: for an observer that registers
// one metric series per outcome up front. The slice is the caller's own.
func Outcomes() []Outcome {
	return []Outcome{
		OutcomeAllowed, OutcomeDenied, OutcomeDryRunDenied, OutcomeFailedOpen,
		OutcomeFailedClosed, OutcomeKeyError, OutcomeSkipped, OutcomeRefunded,
		OutcomeStoreFull, OutcomeBreakerOpen, OutcomeSettled,
		OutcomeInFlightRefused, OutcomeInFlightDryRunRefused,
		OutcomeBlocked,
	}
}

// String returns the outcome as a lower-case word ("allowed", "dry_run_denied").
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && outcomeNames[o] != "" {
		return outcomeNames[o]
	}
	return "unknown"
}

// Event is one decision of the policy, as an Observer sees it.
type Event struct {
	// Outcome is what the policy did with the request.
	Outcome Outcome
	// Policy names the limits that applied: the name of the limiter chosen
	// for the request (core.Limiter.Name), a value from the configuration,
	// never from the request.
	Policy string
	// Decision is the limiter's decision, for OutcomeAllowed, OutcomeDenied,
	// OutcomeBlocked, OutcomeDryRunDenied and OutcomeRefunded; the zero
	// Decision otherwise.
	Decision core.Decision
	// StoreLatency is how long the store call took; 0 when there was none
	// (skipped, key error, breaker open) or the store decides in process (it reports
	// Local(), as the memory store does: its call of about 100 ns is not
	// worth the two clock reads that would time it).
	StoreLatency time.Duration
	// Err is the error behind OutcomeFailedOpen, OutcomeFailedClosed,
	// OutcomeKeyError, OutcomeStoreFull and OutcomeBreakerOpen
	// (core.ErrBreakerOpen), and a failed refund; nil otherwise.
	Err error
	// Request is the request decided on. It is valid only during Observe:
	// never keep it, and never put its data in a metric label (unbounded
	// label values exhaust a metrics system's memory). It is nil for
	// OutcomeRefunded (the refund follows the handler) and behind
	// NonBlocking.
	Request keyfuncs.Request
	// Settled is, for OutcomeSettled, what the settle charged (positive) or
	// gave back (negative): the real cost minus the reservation; 0 otherwise.
	Settled int64
}

// Observer sees every decision a policy makes (WithObserver): to count them,
// log them, or export them as metrics (modules metrics/prometheus and
// metrics/otel). Observe runs on the request's goroutine, after the decision
// and before the response is written: it must be fast and must not block.
type Observer interface {
	Observe(e Event)
}

// ObserverFunc adapts a function to the Observer interface.
type ObserverFunc func(e Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }
