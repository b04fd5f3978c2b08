package fakereq_test

import (
	"fmt"

	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// A request built by hand, read by a key function as an adapter's view would
// be.
func ExampleNew() {
	r := fakereq.New("192.0.2.7:4321", "X-API-Key", "team-42")
	apiKey, err := keyfuncs.Header("X-API-Key")
	if err != nil {
		panic(err)
	}
	k, err := apiKey(r)
	fmt.Println(k, err, r.Method(), r.Path())
	// Output: team-42 <nil> GET /
}
