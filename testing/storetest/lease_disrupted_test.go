package storetest_test

import (
	"context"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// TestReferenceLeaseDisrupted runs RunTokenLeaseDisrupted on the Reference,
// which the ten instances share, with a disruption that leaves it alone and
// checks what it is told: once per algorithm, the key the run spends, its
// quota under way.
func TestReferenceLeaseDisrupted(t *testing.T) {
	ref := storetest.NewReference()
	var told []core.TakeRequest
	storetest.RunTokenLeaseDisrupted(t, func(*testing.T) core.Store { return ref }, func(t *testing.T, req core.TakeRequest) {
		told = append(told, req)
		peek := req
		peek.Cost = 0
		d, err := ref.Take(context.Background(), peek)
		must.NoError(t, err)
		expect.Less(t, d.Remaining, req.Limits[0].Rate, "the run spent the key before the disruption")
	})
	must.Len(t, told, 2)
	for i, alg := range []core.Algorithm{core.FixedWindow, core.GCRA} {
		expect.Equal(t, alg, told[i].Algorithm)
		expect.Equal(t, t.Name()+"/"+[]string{"FixedWindow", "GCRA"}[i], told[i].Namespace)
		expect.Equal(t, "hot", told[i].Key)
	}
}
