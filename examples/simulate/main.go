// Command simulate runs seed 001's driver experiment against every algorithm on
// a simulated clock, prints the seed's table (requests, seconds, rate) per
// algorithm, and draws an SVG chart of when each algorithm lets requests
// through under a flood that starts just before a window boundary.
//
//	go run ./examples/simulate                  # tables, and docs/algorithms.svg
//	go run ./examples/simulate -phase 10s      # the seed's 10-second phases
//	go run ./examples/simulate -svg chart.svg  # write the chart elsewhere
//	go run ./examples/simulate -svg ''         # no chart
//
// It calls core.Algorithm.Apply directly, with time as an argument: nothing
// sleeps, and the whole run takes a fraction of a second.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its arguments and outputs, for tests. It returns the exit
// status: 0, 1 when the chart cannot be written, 2 for bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	o, ok := parseFlags(args, stderr)
	if !ok {
		return 2
	}
	t0 := time.Now()
	if err := printDriverTables(stdout, o.lim, o.phase); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	series, err := floodAll(o.lim)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	printFlood(stdout, o.lim, series)
	if o.svgPath != "" {
		if err := writeChart(o.svgPath, o.lim, series); err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "\nchart: %s\n", o.svgPath)
	}
	fmt.Fprintf(stdout, "simulated in %s\n", time.Since(t0).Round(time.Millisecond))
	return 0
}

// options is the parsed, checked flags.
type options struct {
	lim     core.Limit
	phase   time.Duration
	svgPath string
}

// parseFlags reads and checks the flags; when they are bad (or -h), ok is
// false and the reason has been written to stderr.
func parseFlags(args []string, stderr io.Writer) (o options, ok bool) {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	limitStr := fs.String("limit", "10/s", "the limit every algorithm enforces (RATE/PERIOD)")
	fs.DurationVar(&o.phase, "phase", 100*time.Second, "how long each phase offers traffic (the seed used 10s)")
	fs.StringVar(&o.svgPath, "svg", "docs/algorithms.svg", "where to write the chart; empty for none")
	if err := fs.Parse(args); err != nil {
		return o, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simulate: unexpected argument %q\n", fs.Arg(0))
		return o, false
	}
	var err error
	if o.lim, err = core.ParseLimit(*limitStr); err != nil {
		fmt.Fprintf(stderr, "simulate: -limit: %v\n", err)
		return o, false
	}
	if o.lim.EffectiveBurst() != o.lim.Rate {
		fmt.Fprintf(stderr, "simulate: -limit: give no burst; the window algorithms take none\n")
		return o, false
	}
	if o.phase < time.Second || o.phase%time.Second != 0 {
		fmt.Fprintf(stderr, "simulate: -phase must be a whole number of seconds, at least 1s; got %s\n", o.phase)
		return o, false
	}
	return o, true
}

// printDriverTables runs seed 001's driver experiment against every algorithm
// and prints its table for each.
func printDriverTables(stdout io.Writer, lim core.Limit, phase time.Duration) error {
	fmt.Fprintf(stdout, "Seed 001's driver experiment against %s, on a simulated clock.\n", lim)
	fmt.Fprintf(stdout, "Each phase offers %s of requests; a denied request retries every 10 ms until admitted;\n", phase)
	fmt.Fprintf(stdout, "a leaky-bucket request completes after its queue delay. Rate = requests / seconds.\n")
	for _, alg := range core.Algorithms() {
		rows, err := driver(alg, lim, phase)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\n%s\n", alg)
		fmt.Fprintf(stdout, "  %9s  %8s  %9s  %8s\n", "offered/s", "requests", "seconds", "rate/s")
		for _, r := range rows {
			fmt.Fprintf(stdout, "  %9d  %8d  %9.3f  %8.3f\n", r.Offered, r.Requests, r.Seconds, r.Rate)
		}
	}
	return nil
}

// printFlood prints, for each algorithm, how many requests of the flood it
// admitted and the most in any one period.
func printFlood(stdout io.Writer, lim core.Limit, all []series) {
	plan := planFor(lim)
	fmt.Fprintf(stdout, "\nFlood from %s to %s, one request every %s, denied ones dropped:\n", plan.Start, plan.End, plan.Every)
	fmt.Fprintf(stdout, "  %-15s %8s  %s\n", "algorithm", "admitted", fmt.Sprintf("most in any %s", lim.Period))
	for _, s := range all {
		fmt.Fprintf(stdout, "  %-15s %8d  %d\n", s.Alg, len(s.Passed), busiest(s.Passed, lim.Period))
	}
}

// series is one algorithm's flood result.
type series struct {
	Alg    core.Algorithm
	Passed []time.Duration
}

func floodAll(lim core.Limit) ([]series, error) {
	var out []series
	for _, alg := range core.Algorithms() {
		p, err := flood(alg, lim)
		if err != nil {
			return nil, err
		}
		out = append(out, series{Alg: alg, Passed: p})
	}
	return out, nil
}

func writeChart(path string, lim core.Limit, s []series) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the chart: %w", err)
	}
	if err := chart(f, lim, s); err != nil {
		f.Close()
		return fmt.Errorf("writing the chart: %w", err)
	}
	return f.Close()
}
