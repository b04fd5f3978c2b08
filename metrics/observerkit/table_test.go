package observerkit_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

// Names up to the bound get values of their own, made once each; every name
// past it shares the overflow's, and is not kept.
func TestBound(t *testing.T) {
	var made []string
	tab := observerkit.NewPolicyTable(2, "other", func(name string) string {
		made = append(made, name)
		return "v:" + name
	})
	got := []string{tab.Get("a"), tab.Get("b"), tab.Get("a"), tab.Get("c"), tab.Get("d"), tab.Get("b")}
	expect.Equal(t, []string{"v:a", "v:b", "v:a", "v:other", "v:other", "v:b"}, got)
	expect.Equal(t, []string{"a", "b", "other"}, made, "each value made once, the overflow's when the table filled")
}

// A bound of one: the first name is kept, the rest share the overflow.
func TestBoundOfOne(t *testing.T) {
	tab := observerkit.NewPolicyTable(1, "other", func(name string) string { return name })
	expect.Equal(t, "a", tab.Get("a"))
	expect.Equal(t, "other", tab.Get("b"))
	expect.Equal(t, "a", tab.Get("a"))
}

// A bound below one keeps no name apart.
func TestBoundBelowOne(t *testing.T) {
	for _, max := range []int{0, -5} {
		tab := observerkit.NewPolicyTable(max, "other", func(name string) string { return name })
		expect.Equal(t, "other", tab.Get("a"), "max %d", max)
		expect.Equal(t, "other", tab.Get("b"), "max %d", max)
	}
}

// Concurrent first uses of the same names make each value once and agree.
func TestConcurrentFirstUse(t *testing.T) {
	var calls atomic.Int64
	tab := observerkit.NewPolicyTable(8, "other", func(name string) *string {
		calls.Add(1)
		return &name
	})
	var wg sync.WaitGroup
	results := make([][]*string, 16)
	for g := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 12 {
				results[g] = append(results[g], tab.Get(strconv.Itoa(i)))
			}
		}()
	}
	wg.Wait()
	for g := range results {
		expect.Equal(t, results[0], results[g], "every goroutine sees the same values")
	}
	expect.Equal(t, int64(9), calls.Load(), "8 names and the overflow, each made once")
	expect.Equal(t, "other", *results[0][11])
}

// Get allocates nothing once a name is known.
func TestGetAllocatesNothing(t *testing.T) {
	tab := observerkit.NewPolicyTable(4, "other", func(name string) int { return len(name) })
	tab.Get("default")
	expect.Zero(t, testing.AllocsPerRun(100, func() { tab.Get("default") }))
}

func ExampleNewPolicyTable() {
	labels := observerkit.NewPolicyTable(2, "other", func(policy string) string { return "series of " + policy })
	for _, p := range []string{"free", "paid", "free", "gold"} {
		fmt.Println(labels.Get(p))
	}
	// Output:
	// series of free
	// series of paid
	// series of free
	// series of other
}
