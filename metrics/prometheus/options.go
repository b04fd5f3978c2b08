package prommetrics

import (
	"errors"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

// ErrInvalid is wrapped by every error New and RegisterMemoryStore return
// for a bad argument or option; check it with errors.Is.
var ErrInvalid = errors.New("prommetrics: invalid argument")

// DefaultNamespace is the first word of every metric name, as in
// ratewarden_decisions_total.
const DefaultNamespace = "ratewarden"

// DefaultMaxPolicies is how many distinct policy label values an Observer
// keeps apart unless WithMaxPolicies says otherwise.
const DefaultMaxPolicies = observerkit.DefaultMaxPolicies

// OverflowPolicy is the policy label value of the decisions of every policy
// past the bound of WithMaxPolicies.
const OverflowPolicy = observerkit.OverflowPolicy

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
	return observerkit.DefaultBuckets()
}

// Option configures New and RegisterMemoryStore.
type Option func(*config) error

type config struct {
	observerkit.Settings
	namespace   string
	constLabels prometheus.Labels
}

func newConfig(opts []Option) (config, error) {
	c := config{Settings: observerkit.DefaultSettings(), namespace: DefaultNamespace}
	return c, observerkit.Configure(&c, opts, ErrInvalid)
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
	return func(c *config) error { return c.SetBuckets(bounds, ErrInvalid) }
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
	return func(c *config) error { return c.SetMaxPolicies(n, ErrInvalid) }
}

// policyCollectorConfig checks the arguments of a collector that reads the
// policies in force at each collection (RegisterInFlight,
// RegisterTokenLeases), whose registry is missing when noRegistry, and
// returns its configuration of opts.
func policyCollectorConfig(noRegistry bool, policies func() []*httplimit.Policy, opts []Option) (config, error) {
	switch {
	case noRegistry:
		return config{}, fmt.Errorf("%w: nil prometheus.Registerer", ErrInvalid)
	case policies == nil:
		return config{}, fmt.Errorf("%w: nil policies function", ErrInvalid)
	}
	return newConfig(opts)
}
