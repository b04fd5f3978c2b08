// Package prommetrics exports ratewarden's decisions as Prometheus metrics
// (github.com/prometheus/client_golang). It is a module of its own, so an
// application that does not use Prometheus never downloads client_golang.
//
// An Observer is an httplimit.Observer: hand it to any adapter's middleware
// with httplimit.WithObserver, and serve the registry with promhttp.
//
//	reg := prometheus.NewRegistry()
//	obs, err := prommetrics.New(reg)
//	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs))
//	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Metrics
//
//	ratewarden_decisions_total{policy, outcome}  counter: every decision
//	ratewarden_store_latency_seconds{policy}     histogram: time in the store
//	ratewarden_store_errors_total{policy}        counter: failed store calls
//	ratewarden_breaker_open{policy}              gauge: 1 while the store's circuit breaker answers
//	ratewarden_settled_cost_total{policy, direction}  counter: cost settled after the response
//	                                             (httplimit.WithSettle): charged or returned
//	ratewarden_settle_debt{policy}               histogram: the debt a settle left its key in (DebtBuckets)
//	ratewarden_rules_version{digest}             gauge: the rules document in force (rules.Set)
//
// and, for a memory store (RegisterMemoryStore), read at scrape time:
//
//	ratewarden_memory_store_keys                 gauge: keys held
//	ratewarden_memory_store_evictions_total      counter: keys evicted
//
// and, for policies with an in-flight limit (RegisterInFlight), read at
// scrape time:
//
//	ratewarden_inflight_slots{policy}            gauge: requests running under the policy's concurrency limit
//	ratewarden_inflight_expired_total{policy}    counter: slots lost to a lease that expired under a running request
//
// The in-flight refusals are decisions too: inflight_refused and
// inflight_dry_run_refused.
//
// and, for policies with a token lease (core.WithTokenLease), read at scrape
// time by RegisterTokenLeases, all counters that never decrease, not even
// across a rules reload:
//
//	ratewarden_token_lease_decisions_total{policy}        decisions of a positive cost
//	ratewarden_token_lease_local_decisions_total{policy}  decisions made with no store call
//	ratewarden_token_lease_store_calls_total{policy}      store calls: decisions, refreshes, give-backs
//	ratewarden_token_lease_refreshes_total{policy}        background refreshes of a lease
//	ratewarden_token_lease_leased_tokens_total{policy}    tokens the store granted to leases
//	ratewarden_token_lease_returned_tokens_total{policy}  unspent tokens given back
//	ratewarden_token_lease_failures_total{policy}         lease calls that failed or whose grant was refused
//
// The store calls per decision of a policy are
// rate(ratewarden_token_lease_store_calls_total[5m]) /
// rate(ratewarden_token_lease_decisions_total[5m]).
//
// The outcome label is httplimit.Outcome's String: allowed, denied, blocked (a penalty box's
// refusal, core.WithBlockFor),
// dry_run_denied, failed_open, failed_closed, key_error, skipped, refunded, store_full,
// breaker_open.
// Every outcome of a policy is exported from its first decision on, at 0 until
// it happens, so rates and ratios need no absent(). A store error is a
// failed_open or failed_closed decision, or a refund that failed; a
// breaker_open decision asked no store and is none. The breaker_open gauge
// of a policy is 1 from its first breaker_open decision (the limiter's
// circuit breaker, core.WithBreaker, answers without asking the store) and 0
// again from its next decision the store made: it says what the policy's
// last requests met, never anything per key. The latency
// histogram's buckets span 50 µs to 1 s (DefaultBuckets says why;
// WithBuckets changes them). WithNamespace replaces the ratewarden_ prefix and
// WithConstLabels adds fixed labels, to tell two observers or stores apart in
// one registry.
//
// ratewarden_rules_version is exported by an Observer given to a rules.Set
// (rules.WithObserver): its value is the version of the document in force,
// its digest label the first 12 hex digits of that document's content digest
// (rules.Document.Digest, as the logs and "ratewarden rules show" print it).
// It is made at scrape time from the document last heard of, so one series
// exists at a time: a reload replaces it, never adds one. Across a fleet,
// count by (digest) of it above 1 means instances run different rules.
//
// # Cardinality
//
// Label values come from configuration only: the policy is the name of the
// limiter or tier that decided (httplimit.Event.Policy), the outcome one of a
// fixed set, the digest that of the rules document in force (one series at
// a time). The Observer never reads the request, so no client can add a
// series. A misconfigured application that names policies after request data
// still cannot exhaust the metrics system's memory, nor the Observer's: it
// keeps at most DefaultMaxPolicies distinct policies (WithMaxPolicies), and
// counts the decisions of any policy past them under the policy label "other"
// (OverflowPolicy), without remembering its name.
//
// # Speed
//
// Observe allocates nothing and takes no lock once a policy has been seen
// (but to move its breaker_open gauge, which changes when the store goes
// down or comes back): one atomic load, one map lookup, the counter and
// histogram updates, and one more atomic load for the gauge.
package prommetrics
