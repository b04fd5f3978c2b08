package storetest_test

import (
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// The Reference runs the suite too: its scripted part compares it with
// itself, but the concurrency, isolation, limiter and refund checks hold it
// to the same rules as every store.
func TestReferenceConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) core.Store { return storetest.NewReference() })
}
