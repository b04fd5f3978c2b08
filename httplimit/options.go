package httplimit

import (
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Option configures an Policy.
type Option func(*Policy) error

func nilOption(what string) error { return fmt.Errorf("%w: nil %s", core.ErrInvalidOption, what) }

// WithKey sets how a request's key (who the client is) is found; package
// keyfuncs builds them. The default is the client IP, the peer address with
// no proxy trusted.
func WithKey(f keyfuncs.Func) Option {
	return func(p *Policy) error {
		if f == nil {
			return nilOption("key function")
		}
		p.key = f
		return nil
	}
}

// WithKeyFallback sets a key function used when the main one fails: for
// example the client IP when a request carries no API key. When the fallback
// fails too, the key-error response is sent.
func WithKeyFallback(f keyfuncs.Func) Option {
	return func(p *Policy) error {
		if f == nil {
			return nilOption("fallback key function")
		}
		p.fallback = f
		return nil
	}
}

// WithKeyErrorResponder replaces the default answer to a request whose key
// cannot be found (KeyErrorProblem: 401, or 500 for a peer that is not an
// IP, with a problem-details or plain-text body); a Status of 0 means that
// default status. The error wraps keyfuncs.ErrKey; do not copy its text into
// the response.
func WithKeyErrorResponder(f func(r keyfuncs.Request, err error) Response) Option {
	return func(p *Policy) error {
		if f == nil {
			return nilOption("key error responder")
		}
		p.keyResp = f
		return nil
	}
}

// WithDeniedHandler answers denied requests with f: the one way to change
// the denial (WithResponder is its special case). f is called once the
// policy has set the rate-limit headers and Retry-After on w, and writes the
// whole answer, status included: through the framework's own request, to
// render a 429 as the framework does (Gin's c.JSON, Echo's c.JSON, Fiber's
// c.Status(429).JSON, a template; the adapter's Native accessor on r, such as
// ginmw.Native(r), reaches it), or through w (under net/http, w is the
// http.ResponseWriter). DeniedProblem(d) is the default body, to render as it
// is or changed. f runs on the request's goroutine; a panic in it is the
// framework's to recover, as a handler's would be.
func WithDeniedHandler(f func(w ResponseWriter, r keyfuncs.Request, d core.Decision)) Option {
	return func(p *Policy) error {
		if f == nil {
			return nilOption("denied handler")
		}
		p.denied, p.responder = f, nil
		return nil
	}
}

// WithResponder is WithDeniedHandler for an answer built as a Response,
// which the policy writes: a Status of 0 means 429, a HEAD request gets no
// body, and under grpcmw the Status becomes the call's code. Both set the
// same thing, the policy's answer to a denial, so the later of the two
// replaces the earlier, as with any option given twice.
func WithResponder(f func(r keyfuncs.Request, d core.Decision) Response) Option {
	return func(p *Policy) error {
		if f == nil {
			return nilOption("responder")
		}
		p.responder, p.denied = f, nil
		return nil
	}
}

// WithFailClosed answers 503 when the limiter fails, with a Retry-After of
// one second (see WithUnavailableRetryAfter), or, while the limiter's circuit
// breaker is open (core.ErrBreakerOpen), of the time until it probes the
// store again, rounded up. By default the policy fails open: the request
// passes. Either way the error goes to the observers (OutcomeFailedOpen,
// OutcomeFailedClosed, OutcomeBreakerOpen) and to the log (see WithLogger).
// A dry run (WithDryRun) fails open even so.
func WithFailClosed() Option {
	return func(p *Policy) error { p.failClosed = true; return nil }
}

// WithUnavailableRetryAfter sets the Retry-After of the policy's 503 answers
// (default DefaultUnavailableRetryAfter): the answer when the limiter fails
// and the policy fails closed (WithFailClosed) but for the open breaker's
// (which says when it probes the store again), and the answer to a request
// whose new key a full store refuses (OutcomeStoreFull). RFC 9110 lets a 503 say when
// to come back, and a client that honours it backs off instead of retrying at
// once into a store that is down. The value is sent in whole seconds, rounded
// up. It returns an error wrapping core.ErrInvalidOption unless d is positive.
func WithUnavailableRetryAfter(d time.Duration) Option {
	return func(p *Policy) error {
		if d <= 0 {
			return fmt.Errorf("%w: unavailable Retry-After must be positive, got %s", core.ErrInvalidOption, d)
		}
		p.unavailableRetry = d
		return nil
	}
}

// WithDryRun decides every request and reports it, but denies and delays
// none: the way to roll out a new limit and watch what it would do. Every
// request is decided, spends its cost, and reaches the observer (a denial as
// OutcomeDryRunDenied); the rate-limit headers tell the truth (a would-be
// denial shows r=0 and when it could pass) but no Retry-After is sent, since
// the request goes on. A leaky-bucket request is not held, and WithMaxDelay
// denies nothing.
//
// Under a dry run the policy also fails open when the limiter fails, even
// with WithFailClosed (reported as OutcomeFailedOpen), and a request whose
// key cannot be found goes on (reported as OutcomeKeyError): a dry run
// promises that the limiter turns no request away, and an outage or a key
// function under test must not break that promise.
func WithDryRun() Option {
	return func(p *Policy) error { p.dryRun = true; return nil }
}

// WithStoreTimeout bounds each store call (default DefaultStoreTimeout); a
// call that times out is a limiter error, and counts toward opening the
// limiter's circuit breaker (core.WithBreaker), after which requests stop
// waiting for the store at all. 0 sets no deadline beyond the request's own.
func WithStoreTimeout(d time.Duration) Option {
	return func(p *Policy) error {
		if d < 0 {
			return fmt.Errorf("%w: negative store timeout %s", core.ErrInvalidOption, d)
		}
		p.timeout = d
		return nil
	}
}

// WithSkip exempts requests for which f returns true (health checks): they
// pass unlimited and get no rate-limit headers.
func WithSkip(f func(r keyfuncs.Request) bool) Option {
	return func(p *Policy) error {
		if f == nil {
			return nilOption("skip function")
		}
		p.skip = f
		return nil
	}
}

// WithCost sets what a request spends (default 1). A negative cost is a
// limiter error, handled like a store error; 0 is a peek that spends nothing.
func WithCost(f func(r keyfuncs.Request) int64) Option {
	return func(p *Policy) error {
		if f == nil {
			return nilOption("cost function")
		}
		p.cost = f
		return nil
	}
}

// WithHeaders selects the rate-limit header families written (default
// AllHeaders; 0 writes none, but a 429 always carries Retry-After).
func WithHeaders(set HeaderSet) Option {
	return func(p *Policy) error {
		if set&^AllHeaders != 0 {
			return fmt.Errorf("%w: unknown header set %d", core.ErrInvalidOption, set)
		}
		p.headers = set
		return nil
	}
}

// BodyFormat says which body the policy's own answers (a denial, a key
// error, a failed or full store, a refused in-flight request) carry.
type BodyFormat uint8

const (
	// NegotiatedBody, the default, answers RFC 9457 problem details
	// (application/problem+json) to a client whose Accept names a JSON type,
	// and plain text to any other.
	NegotiatedBody BodyFormat = iota
	// TextBody answers plain text to every client, Accept unread: what most
	// frameworks' own limiters send (Fiber's "Too Many Requests").
	TextBody
	// ProblemJSONBody answers problem details to every client, Accept
	// unread: for an API whose every client reads JSON.
	ProblemJSONBody
)

// WithBodyFormat fixes the body of the policy's own answers to one format
// instead of negotiating it on each request's Accept header (NegotiatedBody,
// the default); the status and the headers are the same either way, and HEAD
// gets no body. It returns an error wrapping core.ErrInvalidOption for a
// value that is not one of the three. WithResponder and WithDeniedHandler
// still write what they write.
func WithBodyFormat(f BodyFormat) Option {
	return func(p *Policy) error {
		if f > ProblemJSONBody {
			return fmt.Errorf("%w: unknown body format %d", core.ErrInvalidOption, f)
		}
		p.bodies = f
		return nil
	}
}

// WithoutHeadersOnAllowed writes the rate-limit headers on denied responses
// only.
func WithoutHeadersOnAllowed() Option {
	return func(p *Policy) error { p.onAllowed = false; return nil }
}

// WithMaxDelay bounds how long a leaky-bucket request is held before it is
// passed on: an admitted request whose Delay is longer gets a 429 instead (its
// place in the queue is spent). By default the queue's length is the only
// bound.
func WithMaxDelay(d time.Duration) Option {
	return func(p *Policy) error {
		if d <= 0 {
			return fmt.Errorf("%w: max delay must be positive, got %s", core.ErrInvalidOption, d)
		}
		p.maxDelay = d
		return nil
	}
}

// WithDecisionInContext makes the adapters put the decision in the request's
// context, for handlers to read with DecisionFromContext or the adapter's
// DecisionFrom. It is off by default because on net/http, Gin and Echo it
// costs a copy of the *http.Request per request (an allocation of about 250
// bytes, the largest cost of the middleware); the rate-limit headers the
// handler's response already carries say the same.
func WithDecisionInContext() Option {
	return func(p *Policy) error { p.inContext = true; return nil }
}
