package main

import (
	"context"
	"fmt"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/rules"
)

// inflightLine is what key show adds for a policy with an in-flight limit
// (concurrency): how many of the key's slots are held now, on every
// instance, and within what time a crashed instance's come back.
func inflightLine(policy string, held int64, f core.InFlight) string {
	return fmt.Sprintf("%s: in flight: %d of %d slots held (a crashed instance's come back within %s)", policy, held, f.Slots, f.Lease)
}

// showSlots writes the in-flight line of key under policy, when the policy
// has an in-flight limit.
func showSlots(ctx context.Context, e *env, set *rules.Set, policy, key string) error {
	held, f, err := set.PeekSlots(ctx, policy, key)
	if err != nil {
		return keyError(set, err, policy)
	}
	if !f.IsZero() {
		fmt.Fprintln(e.stdout, inflightLine(policy, held, f))
	}
	return nil
}
