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

func ExampleParse_rules() {
	c, err := flags.Parse("stdhttp", []string{"-rules", "redis://127.0.0.1:6379/0", "-rules-poll", "5s", "-store", "redis://127.0.0.1:6379/0"}, os.Stderr)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.RulesSource == flags.RulesRedis, c.RulesPoll)
	fmt.Println(c)
	// Output:
	// true 5s
	// rules in redis 127.0.0.1:6379 db 0, counters on redis 127.0.0.1:6379, failing open unless its policy says closed
}

func ExampleLoad_rulesReplaceLimit() {
	_, code := flags.Load("stdhttp", []string{"-rules", "redis://127.0.0.1:6379", "-limit", "5/s"}, os.Stdout)
	fmt.Println("exit status", code)
	// Output:
	// stdhttp: -rules and -limit: the rules document gives every policy its limits, algorithm, key and tiers; give one or the other
	// run stdhttp -h for the flags
	// exit status 2
}

func ExampleRoute_ColonPattern() {
	c, err := flags.Parse("gin", []string{"-rules", "../../rules.yaml"}, os.Stderr)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range c.Routes() {
		fmt.Printf("%-6s %-16s %s\n", r.Method, r.ColonPattern(), r.MuxPattern())
	}
	// Output:
	// GET    /                GET /{$}
	// GET    /api/items       GET /api/items
	// POST   /api/items       POST /api/items
	// GET    /api/items/:id   GET /api/items/{id}
	// DELETE /api/items/:id   DELETE /api/items/{id}
	// POST   /login           POST /login
	// GET    /healthz         GET /healthz
	// GET    /tokens          GET /tokens
	// GET    /slow            GET /slow
}
