package flags

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/store/memory"
)

// newMetrics makes the registry -metrics serves: the policy's decisions,
// through the observer it returns; when st is a memory store, its keys and
// evictions; and, read from policies() at each scrape, the in-flight slots
// (-concurrency, a rules policy's concurrency) and the token-lease counters
// (-lease, a rules policy's lease_tokens) of the policies in force. The
// handler it returns serves the registry in the Prometheus text format, for
// MetricsPath.
func newMetrics(st core.Store, policies func() []*httplimit.Policy) (*prommetrics.Observer, http.Handler, error) {
	reg := prometheus.NewRegistry()
	obs, err := prommetrics.New(reg)
	if err != nil {
		return nil, nil, err
	}
	if mem, ok := st.(*memory.Store); ok {
		if _, err := prommetrics.RegisterMemoryStore(reg, mem); err != nil {
			return nil, nil, err
		}
	}
	if _, err := prommetrics.RegisterInFlight(reg, policies); err != nil {
		return nil, nil, err
	}
	if _, err := prommetrics.RegisterTokenLeases(reg, policies); err != nil {
		return nil, nil, err
	}
	return obs, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}

// policiesInForce returns the policies the server decides with: the rules'
// (which follow every reload) with -rules, else the policies made by Policy.
func (s *Setup) policiesInForce() []*httplimit.Policy {
	if s.Rules != nil {
		return s.Rules.Policies()
	}
	if s.tracked == nil {
		return nil
	}
	s.tracked.mu.Lock()
	defer s.tracked.mu.Unlock()
	return append([]*httplimit.Policy(nil), s.tracked.policies...)
}

// policyList is the policies a Setup made; safe for concurrent use.
type policyList struct {
	mu       sync.Mutex
	policies []*httplimit.Policy
}

// track keeps the policy of lim and opts as the server's adapter makes it,
// for the metrics and for the give-back at shutdown. It shares lim and its
// tiers with the adapter's own, so it reads what they hold and returns what
// they leased.
func (s *Setup) track(lim *core.Limiter, opts []httplimit.Option) error {
	if s.tracked == nil {
		return nil // a Setup not made by Build
	}
	p, err := httplimit.New(lim, opts...)
	if err != nil {
		return err
	}
	s.tracked.mu.Lock()
	defer s.tracked.mu.Unlock()
	s.tracked.policies = append(s.tracked.policies, p)
	return nil
}

// leaseReturnTimeout bounds the give-back of leased tokens at shutdown.
const leaseReturnTimeout = time.Second

// leaseReturner gives back at shutdown the unspent tokens the token leases
// (-lease) of the policies made by Policy hold, within leaseReturnTimeout,
// so that a stopped server strands no quota. (With -rules, the rule set's
// Close does it.)
type leaseReturner struct{ s *Setup }

func (r leaseReturner) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), leaseReturnTimeout)
	defer cancel()
	var errs []error
	for _, p := range r.s.policiesInForce() {
		if p.Limiter().TokenLease().Max == 0 {
			continue
		}
		done := make(chan error, 1)
		go func() { done <- p.ReturnLeasedTokens(ctx) }()
		select {
		case err := <-done:
			errs = append(errs, err)
		case <-ctx.Done(): // lease calls still on their way hold it
			errs = append(errs, ctx.Err())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("giving back leased tokens: %w", err)
	}
	return nil
}
