package observerkit

import (
	"sync"
	"sync/atomic"
)

// PolicyTable holds what an observer resolves once per policy name (a label
// value's series, an attribute set): it is read with one atomic load and one
// map lookup on every decision, copied and republished when a policy is
// first seen, and bounded so that no sequence of names grows memory.
//
// It maps policy names to values of type V made by its make function. At
// most max names get values of their own; every further name gets the value
// made once for the overflow name. It is safe for concurrent use.
type PolicyTable[V any] struct {
	cur      atomic.Pointer[snapshot[V]] // read by Get, replaced under mu
	mu       sync.Mutex
	max      int
	overflow string
	make     func(name string) V
}

// snapshot is never changed once published: a new name publishes a copy.
type snapshot[V any] struct {
	byName   map[string]V
	overflow *V // the overflow name's value once byName is full, nil before
}

// NewPolicyTable returns a table of at most max names whose values make
// builds; names past the bound share make(overflow). A max below 1 keeps no
// name apart: every name gets the overflow's value.
func NewPolicyTable[V any](max int, overflow string, make func(name string) V) *PolicyTable[V] {
	t := &PolicyTable[V]{max: max, overflow: overflow, make: make}
	t.cur.Store(&snapshot[V]{byName: map[string]V{}})
	return t
}

// Get returns the value of name, made on its first use.
func (t *PolicyTable[V]) Get(name string) V {
	s := t.cur.Load()
	if v, ok := s.byName[name]; ok {
		return v
	}
	if s.overflow != nil {
		return *s.overflow
	}
	return t.add(name)
}

// add makes the value of a name seen for the first time and publishes a
// snapshot that holds it, or, past the bound, the overflow's. Overflowing
// names are never stored.
func (t *PolicyTable[V]) add(name string) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.cur.Load()
	if v, ok := s.byName[name]; ok {
		return v
	}
	if s.overflow != nil {
		return *s.overflow
	}
	next := &snapshot[V]{byName: make(map[string]V, len(s.byName)+1)}
	for n, v := range s.byName {
		next.byName[n] = v
	}
	if len(s.byName) < t.max {
		next.byName[name] = t.make(name)
	}
	if len(next.byName) >= t.max {
		v := t.make(t.overflow)
		next.overflow = &v
	}
	t.cur.Store(next)
	if v, ok := next.byName[name]; ok {
		return v
	}
	return *next.overflow
}
