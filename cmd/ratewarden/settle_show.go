package main

import (
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// debtText is what key show adds for a key a settle charged beyond its
// quota (a policy's settle with a debt): what it owes, in the policy's cost
// units, and when a request fits again; "" for a key that owes nothing.
func debtText(d core.Decision) string {
	if d.Debt <= 0 {
		return ""
	}
	return fmt.Sprintf(", owes %d (paid back in %s)", d.Debt, d.RetryAfter.Round(time.Millisecond))
}
