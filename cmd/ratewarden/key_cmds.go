package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/rules"
)

var cmdKeyShow = &command{
	name: "key show", args: []string{"POLICY", "KEY"}, redis: true,
	short: "show a key's counters under a policy",
	long: `Shows KEY's state under the policy POLICY of the rules Redis holds, without
spending anything: for each of the policy's tiers (or the key's override),
the limit that governs it, what remains and when it is whole again (for a
calendar quota, what remains until the calendar boundary, and the
boundary's instant in the quota's time zone), for a key a settle charged
beyond its quota what it owes and when a request fits again. POLICY
may name one tier as POLICY/TIER. KEY is exactly what the policy's key
produces: an IP address (an IPv6 client's /64, such as 2001:db8::/64), an
API key, a user id. A key in a policy's penalty box (block_for) shows the
block's end: every request is refused until then. A policy with an in-flight
limit (concurrency) shows how many of the key's slots are held now, on every
instance. Exits 1 when Redis holds no rules, or the policy or tier
is unknown or unlimited.`,
	run: runKeyShow,
}

var cmdKeyReset = &command{
	name: "key reset", args: []string{"POLICY", "KEY"}, redis: true,
	short: "forget a key's counters under a policy",
	long: `Forgets KEY's counters under the policy POLICY of the rules Redis holds, in
every tier and in the key's override, and announces the reset on the
channel PREFIX{resets}:announce. Redis admits the client afresh at once,
out of any penalty box (block_for) it was in.
Every instance whose store follows the announcements (its app runs
luascript's Store.FollowResets) drops its cached denials of KEY at once, so
the client is admitted there at once too; an instance whose subscription
was down when the reset was announced dropped its whole cache of denials
when it subscribed again; one that does not follow them denies from its
cache until the cached denial's Retry-After. KEY is exactly what the
policy's key produces. Exits 1 when Redis holds no rules, or the policy is
unknown or unlimited.`,
	run: runKeyReset,
}

func runKeyShow(e *env, args []string) error {
	policy, tier, _ := strings.Cut(args[0], "/")
	key := args[1]
	return e.withStoredSet(func(ctx context.Context, set *rules.Set) error {
		results, err := set.Peek(ctx, policy, key)
		if err != nil {
			return keyError(set, err, policy)
		}
		if tier != "" {
			results = slices.DeleteFunc(results, func(r rules.PeekResult) bool { return r.Name != args[0] })
			if len(results) == 0 {
				return fmt.Errorf("ratewarden: policy %s has no tier %q in the rules in Redis (version %d)", policy, shorten(tier), set.Version())
			}
		}
		for _, r := range results {
			fmt.Fprintln(e.stdout, peekLine(r))
		}
		return showSlots(ctx, e, set, policy, key) // inflight_show.go
	})
}

// peekLine writes one limit set's state of a key.
func peekLine(r rules.PeekResult) string {
	switch {
	case r.Blocked:
		return r.Name + ": blocked: every request is denied"
	case r.Unlimited:
		return r.Name + ": unlimited"
	}
	d := r.Decision
	if d.Blocked {
		return penaltyPeekLine(r.Name, d, time.Now()) // penalty_show.go
	}
	if d.Limit.IsCalendar() {
		return calendarPeekLine(r.Name, d, time.Now()) + debtText(d) // calendar_show.go, settle_show.go
	}
	return fmt.Sprintf("%s: %s: remaining %d, whole again in %s", r.Name, d.Limit, d.Remaining, d.ResetAfter.Round(time.Millisecond)) + debtText(d)
}

func runKeyReset(e *env, args []string) error {
	policy, key := args[0], args[1]
	if strings.Contains(policy, "/") {
		return usageErr("key reset: %q names a tier: a reset clears every tier of the policy, so name the policy", shorten(policy))
	}
	return e.withStoredSet(func(ctx context.Context, set *rules.Set) error {
		if err := set.Reset(ctx, policy, key); err != nil {
			return keyError(set, err, policy)
		}
		fmt.Fprintf(e.stdout, "reset %q under policy %s (every tier and its override)\n", shorten(key), policy)
		return nil
	})
}

// keyError says what a policy's Peek or Reset failed on: for a name the
// limiting policies lack, whether the policy is unlimited or unknown, and
// which there are.
func keyError(set *rules.Set, err error, policy string) error {
	if !errors.Is(err, rules.ErrUnknownPolicy) {
		return fmt.Errorf("ratewarden: policy %s: %w", policy, err)
	}
	var limiting []string
	for _, p := range set.Document().Policies {
		if p.Name == policy {
			return fmt.Errorf("%w: %s is unlimited, with no counters", rules.ErrUnknownPolicy, policy)
		}
		if !p.Unlimited {
			limiting = append(limiting, p.Name)
		}
	}
	return fmt.Errorf("%w: the rules in Redis (version %d) have no policy %q; they have %s",
		rules.ErrUnknownPolicy, set.Version(), shorten(policy), strings.Join(limiting, ", "))
}
