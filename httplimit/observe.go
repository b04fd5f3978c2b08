package httplimit

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ratewarden/ratewarden/core"
)

// WithObserver sets an observer that sees every decision of the policy (see
// Event and Outcome): allowed, denied, dry-run denials, fail-open and
// fail-closed, key errors, skipped requests, refunds and new keys a full store
// refused, with the name of the tier that applied and the store's latency.
// Given more than once, every observer sees every event, in the order given:
// one for metrics and one for logs need no combinator of their own.
//
// Observe runs synchronously on the request's goroutine, after the decision
// and before the response is written: it must be fast and must not block (a
// counter, a histogram). An observer that may block (one that writes to a
// network) belongs behind NonBlocking. An observer that panics is recovered:
// the request proceeds as decided, the observers after it still see the
// event, and the panic is logged (see WithLogger).
//
// Setting an observer leaves the policy's log of store errors on (see
// WithLogger; WithoutStoreErrorLog turns it off). With no observer the
// policy reads no clock for latency and builds no event.
func WithObserver(o Observer) Option {
	return func(p *Policy) error {
		if o == nil {
			return nilOption("observer")
		}
		switch cur := p.observer.(type) {
		case nil:
			p.observer = o
		case observers:
			p.observer = append(cur, o)
		default:
			p.observer = observers{cur, o}
		}
		return nil
	}
}

// observers is several observers, each told every event. The policy calls
// each one itself (see observe), so that a panic in one reaches no other.
type observers []Observer

// Observe tells every observer e, in order; one that panics is skipped and
// the others still see e. The policy does not call it (observe tells each
// observer itself, and logs the panic).
func (os observers) Observe(e Event) {
	for _, o := range os {
		observeRecovered(o, e)
	}
}

// observeRecovered tells o e, and swallows a panic.
func observeRecovered(o Observer, e Event) {
	defer func() { _ = recover() }()
	o.Observe(e)
}

// observe hands e to each observer, which are set; a panic in one is
// logged, and the others still see e.
func (p *Policy) observe(e Event) {
	if os, ok := p.observer.(observers); ok {
		for _, o := range os {
			p.observeOne(o, e)
		}
		return
	}
	p.observeOne(p.observer, e)
}

// observeOne hands e to o; a panic in it is logged.
func (p *Policy) observeOne(o Observer, e Event) {
	defer p.recoverObserver(e.Policy)
	o.Observe(e)
}

// NonBlockingObserver hands events to another observer on a goroutine of
// its own, through a bounded queue: Observe never blocks, and an event that
// finds the queue full is dropped and counted. Build one with NonBlocking;
// Close it when the policies that use it are done. It is safe for
// concurrent use.
type NonBlockingObserver struct {
	next    Observer
	queue   chan Event
	dropped atomic.Uint64
	mu      sync.RWMutex // held for reading while queueing, for writing to close
	closed  bool
	done    chan struct{}
	logs    policyLogs
}

// NonBlocking wraps o, an observer that may block (one that writes to a
// network or a file), so that the request path never waits for it: events
// go through a queue of buffer events to a goroutine that calls o. When the
// queue is full an event is dropped and counted (Dropped).
//
// The event's Request is set to nil before it is queued: the request is over
// by the time o sees the event, and its view must not outlive it. An o that
// panics is recovered and logged through slog.Default(), at most once per
// LogInterval.
//
// It returns an error wrapping core.ErrInvalidOption for a nil o or a buffer
// below 1.
func NonBlocking(o Observer, buffer int) (*NonBlockingObserver, error) {
	if o == nil {
		return nil, nilOption("observer")
	}
	if buffer < 1 {
		return nil, fmt.Errorf("%w: NonBlocking buffer must be at least 1, got %d", core.ErrInvalidOption, buffer)
	}
	a := &NonBlockingObserver{next: o, queue: make(chan Event, buffer), done: make(chan struct{}), logs: policyLogs{every: LogInterval}}
	go a.run()
	return a, nil
}

// Observe queues e for the wrapped observer, without its Request, or drops it
// when the queue is full or the NonBlockingObserver is closed.
func (a *NonBlockingObserver) Observe(e Event) {
	e.Request = nil
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		a.dropped.Add(1)
		return
	}
	select {
	case a.queue <- e:
	default:
		a.dropped.Add(1)
	}
}

// Dropped returns the number of events dropped so far: queued when the
// queue was full, or after Close.
func (a *NonBlockingObserver) Dropped() uint64 { return a.dropped.Load() }

// ErrClosed is returned by NonBlockingObserver.Close when it was already closed.
var ErrClosed = errors.New("ratewarden: observer closed")

// Close stops taking events (later ones are dropped), waits until the
// wrapped observer has seen every queued one, and ends the goroutine. It
// returns ErrClosed when called again.
func (a *NonBlockingObserver) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	a.closed = true
	close(a.queue)
	a.mu.Unlock()
	<-a.done
	return nil
}

func (a *NonBlockingObserver) run() {
	defer close(a.done)
	for e := range a.queue {
		a.deliver(e)
	}
}

// deliver hands e to the wrapped observer; a panic in it is logged.
func (a *NonBlockingObserver) deliver(e Event) {
	defer func() {
		if v := recover(); v != nil {
			a.logs.log(&a.logs.observerPanic, "ratewarden: observer behind NonBlocking panicked; the event is lost",
				e.Policy, fmt.Errorf("ratewarden: observer panic: %v", v))
		}
	}()
	a.next.Observe(e)
}
