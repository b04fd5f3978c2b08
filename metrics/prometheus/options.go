package prommetrics

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

// ErrInvalid is wrapped by every error New and RegisterMemoryStore return
// for a bad argument or option; check it with errors.Is.
var ErrInvalid = errors.New("prommetrics: invalid argument")

// DefaultNamespace is the first word of every metric name, as in
// ratewarden_decisions_total.
const DefaultNamespace = "ratewarden"

// DefaultMaxPolicies is how many distinct policy label values an Observer
// keeps apart unless WithMaxPolicies says otherwise.
const DefaultMaxPolicies = 256

// OverflowPolicy is the policy label value of the decisions of every policy
// past the bound of WithMaxPolicies.
const OverflowPolicy = "other"

// DefaultBuckets returns the upper bounds, in seconds, of the store-latency
// histogram: 50 µs to 1 s in steps of 1, 2.5, 5 per decade.
//
// An in-process store decides in about 100 ns, so all its decisions land in
// the first bucket: below 50 µs, nothing is slow enough to act on. A Redis
// round trip takes 0.2 to 2 ms, covered by five buckets (100 µs to 2.5 ms), so
// its median and tail can be told apart; a congested network or server climbs
// through 5 to 250 ms, and the top buckets reach past httplimit's default
// store timeout (100 ms) to a 1 s timeout. Fourteen buckets cost 17 series per
// policy: the buckets, +Inf, _sum and _count.
func DefaultBuckets() []float64 {
	return []float64{
		0.00005, 0.0001, 0.00025, 0.0005,
		0.001, 0.0025, 0.005,
		0.01, 0.025, 0.05,
		0.1, 0.25, 0.5, 1,
	}
}

// Option configures New and RegisterMemoryStore.
type Option func(*config) error

type config struct {
	namespace   string
	buckets     []float64
	constLabels prometheus.Labels
	maxPolicies int
}

func newConfig(opts []Option) (config, error) {
	c := config{namespace: DefaultNamespace, buckets: DefaultBuckets(), maxPolicies: DefaultMaxPolicies}
	for _, opt := range opts {
		if opt == nil {
			return c, fmt.Errorf("%w: nil Option", ErrInvalid)
		}
		if err := opt(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// metricWord is a metric or label name in Prometheus' classic character set.
var metricWord = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// WithNamespace replaces DefaultNamespace as the first word of every metric
// name: WithNamespace("myapp_ratewarden") gives
// myapp_ratewarden_decisions_total. It must be a name of letters, digits and
// underscores that does not start with a digit.
func WithNamespace(ns string) Option {
	return func(c *config) error {
		if !metricWord.MatchString(ns) {
			return fmt.Errorf("%w: namespace %q is not a metric name ([a-zA-Z_][a-zA-Z0-9_]*)", ErrInvalid, ns)
		}
		c.namespace = ns
		return nil
	}
}

// WithBuckets replaces DefaultBuckets as the upper bounds, in seconds, of the
// store-latency histogram. They must be finite, above zero and strictly
// increasing; at least one.
func WithBuckets(bounds ...float64) Option {
	return func(c *config) error {
		if len(bounds) == 0 {
			return fmt.Errorf("%w: no histogram buckets", ErrInvalid)
		}
		for i, b := range bounds {
			if math.IsNaN(b) || math.IsInf(b, 0) || b <= 0 {
				return fmt.Errorf("%w: histogram bucket %v is not a finite number of seconds above 0", ErrInvalid, b)
			}
			if i > 0 && b <= bounds[i-1] {
				return fmt.Errorf("%w: histogram buckets must increase: %v follows %v", ErrInvalid, b, bounds[i-1])
			}
		}
		c.buckets = append([]float64(nil), bounds...)
		return nil
	}
}

// WithConstLabels adds labels with fixed values to every metric, to tell
// apart two observers or stores in one registry (prometheus.Labels{"store":
// "sessions"}). Names follow Prometheus' classic rules, must not start with
// "__" and must not be policy, outcome or digest; values must be valid UTF-8.
func WithConstLabels(labels prometheus.Labels) Option {
	return func(c *config) error {
		merged := prometheus.Labels{}
		for name, value := range c.constLabels {
			merged[name] = value
		}
		for name, value := range labels {
			switch {
			case !metricWord.MatchString(name) || len(name) >= 2 && name[:2] == "__":
				return fmt.Errorf("%w: const label name %q is not a label name", ErrInvalid, name)
			case name == labelPolicy || name == labelOutcome || name == labelDigest:
				return fmt.Errorf("%w: const label %q is one of the observer's own labels", ErrInvalid, name)
			case !utf8.ValidString(value):
				return fmt.Errorf("%w: const label %q has a value that is not valid UTF-8", ErrInvalid, name)
			}
			merged[name] = value
		}
		c.constLabels = merged
		return nil
	}
}

// WithMaxPolicies bounds the number of distinct policy label values an
// Observer exports (DefaultMaxPolicies unless set): the decisions of every
// policy it sees after the first n are counted under OverflowPolicy. n must be
// at least 1.
func WithMaxPolicies(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: max policies %d is below 1", ErrInvalid, n)
		}
		c.maxPolicies = n
		return nil
	}
}
