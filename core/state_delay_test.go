package core

import (
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/internal/must"
)

// TestApplyAllDelayIsLongest checks that an admitted request under several
// leaky-bucket limits waits for its slot under every limit, even when the
// governing limit (least remaining) has the shorter queue.
func TestApplyAllDelayIsLongest(t *testing.T) {
	limits := []Limit{
		Every(1, time.Second).WithBurst(10),  // slow pace: long wait
		Every(100, time.Second).WithBurst(2), // fast pace, short queue: least remaining
	}
	states := make([]State, 2)
	now := int64(1_000_000_000)
	var d Decision
	var err error
	for range 2 {
		d, err = LeakyBucket.ApplyAll(states, limits, 1, now)
		must.NoError(t, err)
	}
	must.True(t, d.Allowed)
	must.Equal(t, 1, d.Index)
	must.Equal(t, time.Second, d.Delay, "the slow limit's slot")
}
