package observerkit_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

func TestDefaultBucketsAreValid(t *testing.T) {
	b := observerkit.DefaultBuckets()
	expect.NoError(t, observerkit.CheckBuckets(b))
	expect.Len(t, b, 14)
	expect.Equal(t, 0.00005, b[0])
	expect.Equal(t, 1.0, b[len(b)-1])
	b[0] = 7
	expect.Equal(t, 0.00005, observerkit.DefaultBuckets()[0], "each call returns a fresh slice")
}

func TestCheckBuckets(t *testing.T) {
	for _, c := range []struct {
		bounds []float64
		want   string
	}{
		{nil, "no histogram buckets"},
		{[]float64{}, "no histogram buckets"},
		{[]float64{0}, "histogram bucket 0 is not a finite number of seconds above 0"},
		{[]float64{-1}, "histogram bucket -1 is not a finite number of seconds above 0"},
		{[]float64{math.NaN()}, "histogram bucket NaN is not a finite number of seconds above 0"},
		{[]float64{1, math.Inf(1)}, "histogram bucket +Inf is not a finite number of seconds above 0"},
		{[]float64{1, 1}, "histogram buckets must increase: 1 follows 1"},
		{[]float64{0.5, 2, 1}, "histogram buckets must increase: 1 follows 2"},
	} {
		err := observerkit.CheckBuckets(c.bounds)
		if expect.Error(t, err, "%v", c.bounds) {
			expect.Equal(t, c.want, err.Error(), "%v", c.bounds)
		}
	}
	expect.NoError(t, observerkit.CheckBuckets([]float64{0.001}))
}

func TestCheckMaxPolicies(t *testing.T) {
	expect.NoError(t, observerkit.CheckMaxPolicies(1))
	for _, n := range []int{0, -1, math.MinInt} {
		err := observerkit.CheckMaxPolicies(n)
		if expect.Error(t, err, "%d", n) {
			expect.Equal(t, fmt.Sprintf("max policies %d is below 1", n), err.Error())
		}
	}
}

type config struct{ steps []string }

type option func(*config) error

var errInvalid = errors.New("kit: invalid argument")

func TestConfigure(t *testing.T) {
	step := func(s string) option {
		return func(c *config) error { c.steps = append(c.steps, s); return nil }
	}
	var c config
	must.NoError(t, observerkit.Configure(&c, []option{step("a"), step("b")}, errInvalid))
	expect.Equal(t, []string{"a", "b"}, c.steps, "options apply in order")

	c = config{}
	err := observerkit.Configure(&c, []option{step("a"), nil, step("b")}, errInvalid)
	must.ErrorIs(t, err, errInvalid)
	expect.Equal(t, "kit: invalid argument: nil Option", err.Error())
	expect.Equal(t, []string{"a"}, c.steps, "a nil option stops the rest")

	bad := errors.New("bad")
	err = observerkit.Configure(&c, []option{func(*config) error { return bad }, step("c")}, errInvalid)
	expect.Same(t, bad, err, "an option's error comes back as it is")
}

func TestOutcomeSlots(t *testing.T) {
	n := observerkit.OutcomeSlots()
	for _, out := range httplimit.Outcomes() {
		expect.Less(t, int(out), n, "%s has a slot", out)
	}
	expect.Equal(t, len(httplimit.Outcomes())+1, n, "outcomes are numbered from 1, 0 is unknown")
}

func Example() {
	fmt.Println(observerkit.CheckBuckets([]float64{0.1, 0.05}))
	fmt.Println(observerkit.CheckMaxPolicies(observerkit.DefaultMaxPolicies), observerkit.OverflowPolicy)
	// Output:
	// histogram buckets must increase: 0.05 follows 0.1
	// <nil> other
}
