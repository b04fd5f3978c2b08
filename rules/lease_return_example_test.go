package rules_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// At shutdown, Close gives back the tokens the rules' token leases hold but
// did not spend, so that a stopped instance strands no quota (a reload does
// the same for the policies it replaces). The store is the test reference
// here; in production a store/redis or store/rueidis store.
func ExampleSet_Close() {
	doc, err := rules.Parse([]byte(`schema: 1
version: 1
policies:
  - name: api
    algorithm: fixed-window
    limits: [1000/m]
    lease_tokens: 50
    lease_ttl: 100ms
`), "rules.yaml")
	if err != nil {
		panic(err)
	}
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	set, err := rules.New(storetest.NewReference(), doc, rules.WithClock(clock), rules.WithLeaseReturnTimeout(time.Second))
	if err != nil {
		panic(err)
	}
	for range 120 {
		if pass, ok := set.Handle(context.Background(), fakereq.New("192.0.2.1:1"), httptest.NewRecorder()); ok {
			pass.Release()
		}
	}
	if err := set.Close(); err != nil {
		panic(err)
	}
	peek, err := set.Peek(context.Background(), "api", "192.0.2.1")
	if err != nil {
		panic(err)
	}
	fmt.Println("tokens given back:", set.Policies()[0].TokenLeaseStats().Returned > 0)
	fmt.Println("remaining in the store:", peek[0].Decision.Remaining)
	// Output:
	// tokens given back: true
	// remaining in the store: 880
}
