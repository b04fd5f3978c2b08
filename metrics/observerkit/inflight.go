package observerkit

import (
	"slices"

	"github.com/ratewarden/ratewarden/httplimit"
)

// PolicySlots is the number of in-flight slots the policies of one name
// hold on this instance.
type PolicySlots struct {
	Policy string
	// Slots are held now; Expired were lost since the policies were made,
	// their lease expired under a running request (core.Limiter.SlotsExpired).
	Slots, Expired int64
}

// SlotsByPolicy returns the in-flight slots (core.WithInFlight) policies
// hold on this instance, summed by policy name (the name of each policy's
// limiter), in name order: the first maxPolicies names apart, the others
// under OverflowPolicy. Policies without an in-flight limit, and nil ones,
// are left out. It is what the metrics modules' in-flight gauge reads at
// each collection: per policy, never per key.
func SlotsByPolicy(policies []*httplimit.Policy, maxPolicies int) []PolicySlots {
	var out []PolicySlots
	for _, p := range policies {
		if p == nil || p.InFlight().IsZero() {
			continue
		}
		name := p.Limiter().Name()
		i := slices.IndexFunc(out, func(s PolicySlots) bool { return s.Policy == name })
		if i < 0 {
			if len(out) >= maxPolicies {
				name = OverflowPolicy
				i = slices.IndexFunc(out, func(s PolicySlots) bool { return s.Policy == name })
			}
			if i < 0 {
				out = append(out, PolicySlots{Policy: name})
				i = len(out) - 1
			}
		}
		out[i].Slots += p.SlotsHeld()
		out[i].Expired += p.Limiter().SlotsExpired()
	}
	slices.SortFunc(out, func(a, b PolicySlots) int {
		switch {
		case a.Policy < b.Policy:
			return -1
		case a.Policy > b.Policy:
			return 1
		}
		return 0
	})
	return out
}
