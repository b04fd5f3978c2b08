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

func ExampleConfig_String() {
	c, err := flags.Parse("stdhttp", []string{
		"-key", "jwt", "-jwt-secret", "0123456789abcdef0123456789abcdef",
		"-tier-claim", "plan", "-tier", "free=2/m", "-tier", "paid=5/m",
		"-dry-run", "-metrics", "-count-only-failures",
	}, os.Stderr)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c)
	// Output: gcra with tiers free 2/m (default), paid 5/m by claim plan on memory, key jwt, failing open, dry run (nothing denied), metrics on /metrics, counting only failures (status 400 and up)
}

func ExampleLoginStatus() {
	fmt.Println(flags.LoginStatus("letmein"), flags.LoginStatus("guess"))
	// Output: 200 401
}
