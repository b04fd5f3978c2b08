// Package otelmetrics records ratewarden's decisions with OpenTelemetry
// metric instruments (go.opentelemetry.io/otel/metric, the API only: the
// application picks the SDK and exporter). It is a module of its own, so an
// application that does not use OpenTelemetry never downloads it.
//
// An Observer is an httplimit.Observer: hand it to any adapter's middleware
// with httplimit.WithObserver.
//
//	obs, err := otelmetrics.New(otel.GetMeterProvider())
//	mw, err := stdhttp.New(lim, httplimit.WithObserver(obs))
//
// # Instruments
//
// All come from the Meter named ScopeName.
//
//	ratewarden.decisions            counter {decision}, attributes ratewarden.policy, ratewarden.outcome
//	ratewarden.store.duration       histogram, unit s, attribute ratewarden.policy
//	ratewarden.store.errors         counter {error}, attribute ratewarden.policy
//	ratewarden.breaker.open         gauge, unit 1, attribute ratewarden.policy
//	ratewarden.settle.cost          counter, unit {cost}, attributes ratewarden.policy and
//	                                ratewarden.settle.direction (charged or returned): cost settled
//	                                after the response (httplimit.WithSettle)
//	ratewarden.settle.debt          histogram, unit {cost}, attribute ratewarden.policy: the debt a
//	                                settle left its key in (DebtBuckets)
//	ratewarden.rules.version        observable gauge, unit 1, attribute ratewarden.rules.digest
//
// and, for a memory store (RegisterMemoryStore), observed at collection:
//
//	ratewarden.memory_store.keys       up-down counter {key}: keys held
//	ratewarden.memory_store.evictions  counter {eviction}: keys evicted
//
// and, for policies with an in-flight limit (RegisterInFlight), observed at
// collection:
//
//	ratewarden.inflight.slots    up-down counter {slot}, attribute policy (AttrPolicy): requests running
//	ratewarden.inflight.expired  counter {slot}, attribute policy: slots lost to a lease that expired under a running request
//
// The in-flight refusals are decisions too: inflight_refused and
// inflight_dry_run_refused.
//
// and, for policies with a token lease (core.WithTokenLease), observed at
// collection by RegisterTokenLeases, counters with the attribute policy
// that never decrease, not even across a rules reload:
//
//	ratewarden.token_lease.decisions        counter {decision}: decisions of a positive cost
//	ratewarden.token_lease.local_decisions  counter {decision}: decisions made with no store call
//	ratewarden.token_lease.store_calls      counter {call}: store calls (decisions, refreshes, give-backs)
//	ratewarden.token_lease.refreshes        counter {refresh}: background refreshes of a lease
//	ratewarden.token_lease.leased_tokens    counter {token}: tokens the store granted to leases
//	ratewarden.token_lease.returned_tokens  counter {token}: unspent tokens given back
//	ratewarden.token_lease.failures         counter {call}: lease calls that failed or whose grant was refused
//
// A policy's store calls per decision are the rate of store_calls over the
// rate of decisions.
//
// The outcome is httplimit.Outcome's String: allowed, denied, blocked (a penalty box's
// refusal, core.WithBlockFor),
// dry_run_denied, failed_open, failed_closed, key_error, skipped, refunded, store_full,
// breaker_open. A store error is a failed_open or failed_closed decision, or
// a refund that failed; a breaker_open decision asked no store and is none.
// The ratewarden.breaker.open gauge of a policy is 1 from its first
// breaker_open decision (the limiter's circuit breaker, core.WithBreaker,
// answers without asking the store) and 0 from its first decision and again
// from its next one the store made: it says what the policy's last requests
// met, never anything per key. The duration histogram advises buckets from 50 µs to 1 s
// (DefaultBuckets says why; WithBuckets or an SDK View changes them).
// WithAttributes adds fixed attributes to every measurement.
//
// ratewarden.rules.version is reported by an Observer given to a rules.Set
// (rules.WithObserver): its value is the version of the document in force,
// its ratewarden.rules.digest attribute the first 12 hex digits of that
// document's content digest (rules.Document.Digest, as the logs and
// "ratewarden rules show" print it). It is observed at collection from the
// document last heard of, so one point is reported at a time: a reload
// replaces it. Across a fleet, more than one digest means instances run
// different rules.
//
// # Cardinality
//
// Attribute values come from configuration only: the policy is the name of
// the limiter or tier that decided (httplimit.Event.Policy), the outcome one
// of a fixed set. The Observer never reads the request, so no client can add
// a time series. A misconfigured application that names policies after
// request data still cannot exhaust the metrics pipeline's memory, nor the
// Observer's: it keeps at most DefaultMaxPolicies distinct policies
// (WithMaxPolicies), and records the decisions of any policy past them under
// the policy "other" (OverflowPolicy), without remembering its name.
//
// # Speed
//
// Observe builds no attribute set and takes no lock of its own once a policy
// has been seen (but to move its breaker gauge, when the store goes down or
// comes back): the sets are made once per policy and outcome and passed as
// metric.WithAttributeSet options. Measurements use context.Background(),
// never the request's context.
package otelmetrics
