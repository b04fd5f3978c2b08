package memory

// Stats is a snapshot of a Store's occupancy, for metrics (the Prometheus and
// OpenTelemetry modules export it as gauges and counters).
type Stats struct {
	// Keys is the number of keys held, one per key and limit set (as Len).
	Keys int
	// Evictions counts, since New, the keys dropped to make room for a new
	// one while their state had not recovered: each is a client whose count
	// was lost (see the package doc's eviction policy). State dropped because
	// it had recovered is not counted; it decides as a new key would.
	Evictions uint64
	// Refused counts, since New, the new keys refused because the store was
	// full (only under WithRefuseWhenFull, which evicts nothing).
	Refused uint64
}

// Stats returns the store's occupancy. It takes each shard's lock in turn,
// as Len does, and adds nothing to the decision path: evictions are counted
// where they happen, under the shard's lock.
func (s *Store) Stats() Stats {
	var st Stats
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		st.Keys += sh.keys()
		st.Evictions += sh.evicted
		st.Refused += sh.refused
		sh.mu.Unlock()
	}
	return st
}
