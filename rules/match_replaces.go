package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// replacersInOrder returns the policies that replace others, each with the
// indexes it replaces, in an order where a policy comes after every policy
// that replaces it (Kahn's topological sort of the replacement graph, ties
// in document order). Walking them in that order settles each policy's
// fate before its own replaces are applied: a policy is removed when a
// policy that applies replaces it, and a removed policy removes nothing.
// It returns an error for two policies of one name, a replaces naming an
// unknown policy, and a cycle (naming its policies).
func replacersInOrder(policies []Policy) ([]replacer, error) {
	byName := make(map[string]int32, len(policies))
	for i := range policies {
		name := policies[i].Name
		if j, dup := byName[name]; dup {
			return nil, fmt.Errorf("policies[%d] and policies[%d] are both named %q", j, i, keyfuncs.Bounded(name, 64))
		}
		byName[name] = int32(i)
	}
	removes := make([][]int32, len(policies))
	indegree := make([]int, len(policies))
	for i := range policies {
		for _, name := range policies[i].Replaces {
			j, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("policy %q replaces %q, which no policy is named", keyfuncs.Bounded(policies[i].Name, 64), keyfuncs.Bounded(name, 64))
			}
			removes[i] = append(removes[i], j)
			indegree[j]++
		}
	}
	queue := make([]int32, 0, len(policies))
	for i := range policies {
		if indegree[i] == 0 {
			queue = append(queue, int32(i))
		}
	}
	var out []replacer
	for k := 0; k < len(queue); k++ {
		i := queue[k]
		if len(removes[i]) > 0 {
			out = append(out, replacer{policy: i, removes: removes[i]})
		}
		for _, j := range removes[i] {
			if indegree[j]--; indegree[j] == 0 {
				queue = append(queue, j)
			}
		}
	}
	if len(queue) < len(policies) {
		return nil, cycleError(policies, removes, indegree)
	}
	return out, nil
}

// cycleError names one cycle of the replacement graph: the sort left the
// policies on or after a cycle with a positive indegree, and walking back
// from one of them along replacers still left finds a cycle.
func cycleError(policies []Policy, removes [][]int32, indegree []int) error {
	replacedBy := make([][]int32, len(policies))
	start := int32(-1)
	for i := range policies {
		if indegree[i] == 0 {
			continue
		}
		if start < 0 {
			start = int32(i)
		}
		for _, j := range removes[i] {
			replacedBy[j] = append(replacedBy[j], int32(i))
		}
	}
	seen := make(map[int32]int, len(policies)) // position on the walk
	var walk []int32
	i := start
	for {
		if at, ok := seen[i]; ok {
			walk = walk[at:]
			break
		}
		seen[i] = len(walk)
		walk = append(walk, i)
		for _, p := range replacedBy[i] {
			if indegree[p] > 0 {
				i = p
				break
			}
		}
	}
	slices.Reverse(walk) // walked against the replaces
	first := slices.Index(walk, slices.Min(walk))
	walk = append(walk[first:], walk[:first]...) // from the first in the document
	names := make([]string, 0, len(walk)+1)
	for _, i := range walk {
		names = append(names, fmt.Sprintf("%q", keyfuncs.Bounded(policies[i].Name, 64)))
	}
	names = append(names, names[0])
	if len(walk) == 1 {
		return fmt.Errorf("policy %s replaces itself", names[0])
	}
	return fmt.Errorf("replaces form a cycle: %s", strings.Join(names, " replaces "))
}
