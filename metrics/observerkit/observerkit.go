// Package observerkit holds what ratewarden's metrics observers share:
// metrics/prometheus and metrics/otel (each a module of its own, so that an
// application downloads only the metrics library it uses), or an
// httplimit.Observer of your own for another metrics system.
//
// A PolicyTable resolves a policy's series once and bounds how many policies
// an observer keeps apart (DefaultMaxPolicies, then OverflowPolicy), so that
// no sequence of policy names grows memory. DefaultBuckets are the
// store-latency histogram's bounds; CheckBuckets and CheckMaxPolicies check
// what an option is given, and Configure applies options, so every observer
// refuses the same bad values with the same words. SlotsByPolicy and
// LeaseTotals read the in-flight slots and the token-lease counters of the
// policies in force, per policy name, for the collectors that export them.
package observerkit

import (
	"errors"
	"fmt"
	"math"

	"github.com/ratewarden/ratewarden/httplimit"
)

// DefaultMaxPolicies is how many distinct policies an observer keeps apart
// unless told otherwise.
const DefaultMaxPolicies = 256

// OverflowPolicy is the policy name an observer records the decisions of
// every policy past its bound under.
const OverflowPolicy = "other"

// DefaultBuckets returns the upper bounds, in seconds, of the store-latency
// histogram: 50 µs to 1 s in steps of 1, 2.5, 5 per decade.
//
// An in-process store decides in about 100 ns, so all its decisions land in
// the first bucket: below 50 µs, nothing is slow enough to act on. A Redis
// round trip takes 0.2 to 2 ms, covered by five buckets (100 µs to 2.5 ms),
// so its median and tail can be told apart; a congested network or server
// climbs through 5 to 250 ms, and the top buckets reach past httplimit's
// default store timeout (100 ms) to a 1 s timeout.
func DefaultBuckets() []float64 {
	return []float64{
		0.00005, 0.0001, 0.00025, 0.0005,
		0.001, 0.0025, 0.005,
		0.01, 0.025, 0.05,
		0.1, 0.25, 0.5, 1,
	}
}

// CheckBuckets says why bounds are not the upper bounds of a latency
// histogram in seconds (at least one; each finite, above zero and above the
// one before), or returns nil.
func CheckBuckets(bounds []float64) error {
	if len(bounds) == 0 {
		return errors.New("no histogram buckets")
	}
	for i, b := range bounds {
		if math.IsNaN(b) || math.IsInf(b, 0) || b <= 0 {
			return fmt.Errorf("histogram bucket %v is not a finite number of seconds above 0", b)
		}
		if i > 0 && b <= bounds[i-1] {
			return fmt.Errorf("histogram buckets must increase: %v follows %v", b, bounds[i-1])
		}
	}
	return nil
}

// CheckMaxPolicies says why n cannot bound the policies an observer keeps
// apart (it is below 1), or returns nil.
func CheckMaxPolicies(n int) error {
	if n < 1 {
		return fmt.Errorf("max policies %d is below 1", n)
	}
	return nil
}

// Settings are what both observers' options set alike: the store-latency
// histogram's buckets and the bound on the policies kept apart. An
// observer's configuration embeds it, so that its WithBuckets and
// WithMaxPolicies are one call each.
type Settings struct {
	// Buckets are the histogram's upper bounds, in seconds.
	Buckets []float64
	// MaxPolicies bounds the distinct policy values exported.
	MaxPolicies int
}

// DefaultSettings returns DefaultBuckets and DefaultMaxPolicies.
func DefaultSettings() Settings {
	return Settings{Buckets: DefaultBuckets(), MaxPolicies: DefaultMaxPolicies}
}

// SetBuckets sets a copy of bounds as s.Buckets, or returns CheckBuckets'
// error wrapping invalid (the observer's ErrInvalid).
func (s *Settings) SetBuckets(bounds []float64, invalid error) error {
	if err := CheckBuckets(bounds); err != nil {
		return fmt.Errorf("%w: %v", invalid, err)
	}
	s.Buckets = append([]float64(nil), bounds...)
	return nil
}

// SetMaxPolicies sets n as s.MaxPolicies, or returns CheckMaxPolicies'
// error wrapping invalid (the observer's ErrInvalid).
func (s *Settings) SetMaxPolicies(n int, invalid error) error {
	if err := CheckMaxPolicies(n); err != nil {
		return fmt.Errorf("%w: %v", invalid, err)
	}
	s.MaxPolicies = n
	return nil
}

// Configure applies opts to c in order and returns the first error an
// option returns, or, for a nil option, an error wrapping invalid (the
// observer's ErrInvalid) that says "nil Option".
func Configure[C any, O ~func(*C) error](c *C, opts []O, invalid error) error {
	for _, opt := range opts {
		if opt == nil {
			return fmt.Errorf("%w: nil Option", invalid)
		}
		if err := opt(c); err != nil {
			return err
		}
	}
	return nil
}

// OutcomeSlots is the length of a slice indexed by httplimit.Outcome with a
// slot for each of httplimit.Outcomes, where an observer keeps what it
// resolved for every outcome of a policy.
func OutcomeSlots() int {
	var m httplimit.Outcome
	for _, out := range httplimit.Outcomes() {
		m = max(m, out)
	}
	return int(m) + 1
}
