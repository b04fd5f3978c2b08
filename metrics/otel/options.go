package otelmetrics

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

// ErrInvalid is wrapped by every error New and RegisterMemoryStore return
// for a bad argument or option; check it with errors.Is.
var ErrInvalid = errors.New("otelmetrics: invalid argument")

// ScopeName is the name of the Meter (the instrumentation scope) the
// instruments are created with.
const ScopeName = "github.com/ratewarden/ratewarden/metrics/otel"

// The attribute keys of the measurements.
const (
	// AttrPolicy names the policy (limiter or tier) that decided.
	AttrPolicy attribute.Key = "ratewarden.policy"
	// AttrOutcome is httplimit.Outcome's String.
	AttrOutcome attribute.Key = "ratewarden.outcome"
	// AttrRulesDigest is the first 12 hex digits of the content digest of
	// the rules document in force (ratewarden.rules.version).
	AttrRulesDigest attribute.Key = "ratewarden.rules.digest"
)

// DefaultMaxPolicies is how many distinct policy attribute values an
// Observer keeps apart unless WithMaxPolicies says otherwise.
const DefaultMaxPolicies = observerkit.DefaultMaxPolicies

// OverflowPolicy is the policy attribute value of the decisions of every
// policy past the bound of WithMaxPolicies.
const OverflowPolicy = observerkit.OverflowPolicy

// DefaultBuckets returns the explicit bucket boundaries, in seconds, that
// ratewarden.store.duration advises: 50 µs to 1 s in steps of 1, 2.5, 5 per
// decade. An in-process store decides in about 100 ns, all in the first
// bucket; a Redis round trip takes 0.2 to 2 ms, spread over five buckets; the
// top buckets reach past httplimit's default store timeout (100 ms) to a 1 s
// one. A View of the SDK can still replace them.
func DefaultBuckets() []float64 {
	return observerkit.DefaultBuckets()
}

// Option configures New and RegisterMemoryStore.
type Option func(*config) error

type config struct {
	observerkit.Settings
	attrs []attribute.KeyValue
}

func newConfig(opts []Option) (config, error) {
	c := config{Settings: observerkit.DefaultSettings()}
	return c, observerkit.Configure(&c, opts, ErrInvalid)
}

// WithBuckets replaces DefaultBuckets as the bucket boundaries, in seconds,
// that the store-duration histogram advises. They must be finite, above zero
// and strictly increasing; at least one.
func WithBuckets(bounds ...float64) Option {
	return func(c *config) error { return c.SetBuckets(bounds, ErrInvalid) }
}

// WithAttributes adds attributes with fixed values to every measurement, to
// tell apart two observers or stores (attribute.String("app", "shop")). Each
// key must be non-empty and must not be AttrPolicy, AttrOutcome or
// AttrRulesDigest.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(c *config) error {
		for _, kv := range attrs {
			switch {
			case !kv.Valid():
				return fmt.Errorf("%w: an attribute has an empty key", ErrInvalid)
			case kv.Key == AttrPolicy || kv.Key == AttrOutcome || kv.Key == AttrRulesDigest:
				return fmt.Errorf("%w: attribute %q is one of the observer's own", ErrInvalid, string(kv.Key))
			}
		}
		c.attrs = append(c.attrs, attrs...)
		return nil
	}
}

// WithMaxPolicies bounds the number of distinct policy attribute values an
// Observer exports (DefaultMaxPolicies unless set): the decisions of every
// policy it sees after the first n are counted under OverflowPolicy. n must be
// at least 1.
func WithMaxPolicies(n int) Option {
	return func(c *config) error { return c.SetMaxPolicies(n, ErrInvalid) }
}

// policyCollectorConfig checks the arguments of a collector that reads the
// policies in force at each collection (RegisterInFlight,
// RegisterTokenLeases), whose registry is missing when noRegistry, and
// returns its configuration of opts.
func policyCollectorConfig(noRegistry bool, policies func() []*httplimit.Policy, opts []Option) (config, error) {
	switch {
	case noRegistry:
		return config{}, fmt.Errorf("%w: nil metric.MeterProvider", ErrInvalid)
	case policies == nil:
		return config{}, fmt.Errorf("%w: nil policies function", ErrInvalid)
	}
	return newConfig(opts)
}
