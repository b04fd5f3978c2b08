package main

import (
	"fmt"
	"os"
)

// rules validate checks a file as every instance would, and needs no Redis.
func Example_validate() {
	code := run([]string{"rules", "validate", "testdata/rules.yaml"}, os.Stdout, os.Stdout)
	fmt.Println("exit", code)
	code = run([]string{"rules", "validate", "testdata/invalid.yaml"}, os.Stdout, os.Stdout)
	fmt.Println("exit", code)
	// Output:
	// testdata/rules.yaml: valid: version 7, digest 5efee10b3e59, 4 policies
	// exit 0
	// testdata/invalid.yaml:5:14: policies[0].limits[0]: ratewarden: invalid limit: "100/x": period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m) (want RATE/PERIOD such as 10/s, 100/m or 5/30s)
	// testdata/invalid.yaml:6:11: policies[1].name: duplicate policy name "api" (first at 4:11)
	// testdata/invalid.yaml:7:16: policies[1].algorithm: ratewarden: invalid algorithm: "bucket" (want one of token-bucket, leaky-bucket, fixed-window, sliding-log, sliding-window, gcra)
	// testdata/invalid.yaml: 3 problems
	// exit 1
}

// Bad usage exits 2, and says where help is.
func Example_badUsage() {
	code := run([]string{"rules", "push"}, os.Stdout, os.Stdout)
	fmt.Println("exit", code)
	// Output:
	// ratewarden: rules push takes FILE, got 0 arguments
	// run 'ratewarden -h' for the commands, 'ratewarden COMMAND -h' for one
	// exit 2
}
