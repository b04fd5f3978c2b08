package flags_test

import (
	"fmt"
	"os"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

func ExampleParse() {
	c, err := flags.Parse("stdhttp", []string{"-limit", "100/m", "-algorithm", "sliding-window", "-key", "header:X-API-Key", "-fail", "closed"}, os.Stderr)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Limit, c.Algorithm, c.Key, c.FailClosed)
	// Output: 100/m sliding-window header:X-API-Key true
}

func ExampleLoad() {
	// A bad value: the message goes to the writer, and the status is 2.
	_, code := flags.Load("stdhttp", []string{"-fail", "sometimes"}, os.Stdout)
	fmt.Println("exit status", code)
	// Output:
	// stdhttp: -fail "sometimes": want open or closed
	// run stdhttp -h for the flags
	// exit status 2
}
