package rules_test

import (
	"errors"
	"fmt"

	"github.com/ratewarden/ratewarden/rules"
)

func ExampleParse() {
	doc, err := rules.Parse([]byte(`schema: 1
version: 3
defaults: {algorithm: sliding-window}
policies:
  - name: login
    match: {methods: [POST], paths: [/login]}
    limits: [5/m]
    count: failures
  - name: api
    match: {prefixes: [/api]}
    key: {header: X-API-Key}
    algorithm: gcra
    limits: [100/s burst 200, 10000/d]
`), "rules.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range doc.Policies {
		fmt.Println(p.Name, p.Algorithm, p.Limits, p.CountFailuresOnly)
	}
	// Output:
	// login sliding-window [5/m] true
	// api gcra [100/s burst 200 10000/d] false
}

// A *Problems lists every problem at once: where it is (line and column,
// and the path in the document) and what it is.
func ExampleProblems() {
	_, err := rules.Parse([]byte(`schema: 1
version: 4
policies:
  - name: login
    limits: [5/x]
  - name: api
    algorithm: fixed-window
    limits: [10/s burst 20]
    replaces: [web]
`), "rules.yaml")

	var problems *rules.Problems
	if errors.As(err, &problems) {
		for _, p := range problems.List {
			fmt.Printf("line %d, column %d, at %s:\n  %s\n", p.Pos.Line, p.Pos.Column, p.Path, p.Message)
		}
	}
	fmt.Println(errors.Is(err, rules.ErrInvalidRules))
	// Output:
	// line 5, column 14, at policies[0].limits[0]:
	//   ratewarden: invalid limit: "5/x": period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m) (want RATE/PERIOD such as 10/s, 100/m or 5/30s)
	// line 8, column 14, at policies[1].limits[0]:
	//   "10/s burst 20": ratewarden: invalid limit: fixed-window counts Rate per window and takes no burst (got burst 20 for rate 10); use token-bucket, leaky-bucket or gcra for bursts
	// line 9, column 16, at policies[1].replaces[0]:
	//   no policy is named "web"
	// true
}
