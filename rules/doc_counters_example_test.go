package rules_test

import (
	"fmt"

	"github.com/ratewarden/ratewarden/rules"
)

// An edit that raises a limit keeps what clients used; one that changes the
// algorithm starts afresh. rules diff and rules push print these lines.
func ExampleCounterChanges() {
	old, err := rules.Parse([]byte("schema: 1\nversion: 1\npolicies:\n  - {name: api, limits: [1000/d]}\n  - {name: login, limits: [5/m]}\n"), "v1.yaml")
	if err != nil {
		panic(err)
	}
	edited, err := rules.Parse([]byte("schema: 1\nversion: 2\npolicies:\n  - {name: api, limits: [2000/d]}\n  - {name: login, algorithm: fixed-window, limits: [5/m]}\n"), "v2.yaml")
	if err != nil {
		panic(err)
	}
	for _, c := range rules.CounterChanges(old, edited) {
		fmt.Println(c)
	}
	// Output:
	// api: re-expressed (1000/d -> 2000/d)
	// login: restarted (gcra -> fixed-window)
}
