package rules_test

import (
	"fmt"

	"github.com/ratewarden/ratewarden/rules"
)

// A policy's lease_tokens and lease_ttl lease a hot key's tokens from the
// store in batches (core.WithTokenLease); a lease the policy's limits
// cannot keep exactly is a problem at its field.
func ExampleParse_tokenLease() {
	doc, err := rules.Parse([]byte(`schema: 1
version: 1
policies:
  - name: search
    key: {header: X-Api-Key}
    algorithm: gcra
    limits: [10000/s]
    lease_tokens: 50
    lease_ttl: 100ms
`), "rules.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(doc.Policies[0].TokenLease)
	_, err = rules.Parse([]byte(`schema: 1
version: 1
policies:
  - {name: search, algorithm: sliding-log, limits: [100/s], lease_tokens: 50}
`), "rules.yaml")
	fmt.Println(err)
	// Output:
	// {50 100ms 0 0}
	// rules.yaml:4:75: policies[0].lease_tokens: ratewarden: invalid option: the sliding log cannot be leased exactly (each admission is a timestamp the log holds when it happens); use the sliding window
}
