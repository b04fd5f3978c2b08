package main

import (
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// penaltyPeekLine is key show's line for a limit set whose penalty box
// (block_for) holds the key: every request is refused until the block's
// end, shown as an instant and as the time left. key reset lifts it.
func penaltyPeekLine(name string, d core.Decision, now time.Time) string {
	end := now.Add(d.RetryAfter)
	return fmt.Sprintf("%s: %s: blocked by the penalty box until %s (in %s): every request is refused",
		name, d.Limit, end.UTC().Format(time.RFC3339), d.RetryAfter.Round(time.Second))
}
