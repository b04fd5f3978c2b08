//go:build !race

package rules

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSelectAllocatesNothing pins the hot path: a request whose path is
// normal costs no allocation, with 100 policies on stack-held sets and with
// 600 on pooled ones (the race detector's pool drops items on purpose, so
// this file builds without -race).
func TestSelectAllocatesNothing(t *testing.T) {
	large := benchPolicies()
	for i := range 500 {
		large = append(large, pol(fmt.Sprint("more", i), Match{Paths: []string{fmt.Sprintf("/more/%d/{id}", i)}}))
	}
	for _, c := range []struct {
		name     string
		policies []Policy
	}{{"100 policies", benchPolicies()}, {"605 policies", large}} {
		t.Run(c.name, func(t *testing.T) {
			s, err := newSelector(c.policies)
			require.NoError(t, err)
			dst := make([]int, 0, len(c.policies))
			requests := append(benchRequests(), req("GET", "/MORE/7/x"), req("GET", "/more/7/x/"))
			requests = append(requests, routedBenchRequests()...)
			requests = append(requests, routedView{req("GET", "/more/7/x/y"), "/More/:n/:id"},
				routedView{req("GET", "/api/v1/users/7/x"), "/api/v1/users/{id}"})
			for _, r := range requests {
				allocs := testing.AllocsPerRun(100, func() { dst = s.Select(r, dst[:0]) })
				assert.Equal(t, 0.0, allocs, "%s %s", r.Method(), r.Path())
				assert.NotEmpty(t, dst, "%s %s", r.Method(), r.Path())
			}
		})
	}
}

// TestSelectHeadersAllocateNothing: header conditions read the header
// without copying it; only an empty header line asks HeaderValues.
func TestSelectHeadersAllocateNothing(t *testing.T) {
	ps := []Policy{
		pol("paid", Match{Headers: []HeaderMatch{{Name: "x-plan", Value: "paid"}}}),
		pol("debug", Match{Headers: []HeaderMatch{{Name: "X-Debug", Present: true}}}),
		pol("host", Match{Hosts: []string{"API.example.com"}}),
	}
	s, err := newSelector(ps)
	require.NoError(t, err)
	r := peekView{req("GET", "/", "X-Plan", "paid", "X-Debug", "1", "Host", "api.example.com:80")}
	var dst []int
	allocs := testing.AllocsPerRun(100, func() { dst = s.Select(r, dst[:0]) })
	assert.Equal(t, 0.0, allocs)
	assert.Equal(t, []int{0, 1, 2}, dst)
}
