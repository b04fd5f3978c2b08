package prommetrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratewarden/ratewarden/store/memory"
)

// RegisterMemoryStore registers with reg a collector of st's occupancy, read
// from st.Stats() at each scrape (so it costs the decision path nothing):
//
//	ratewarden_memory_store_keys             gauge: keys held now
//	ratewarden_memory_store_evictions_total  counter: keys evicted since st was made
//
// An eviction is a client whose count was lost to make room (see package
// memory's eviction policy): a rising rate means the store's bound
// (memory.WithMaxKeys) is too small for the clients it sees. WithNamespace
// and WithConstLabels apply (give each store a const label when a registry
// holds several); the other options do not concern a store and are ignored.
//
// It returns the collector, for reg.Unregister, or an error wrapping
// ErrInvalid for a nil reg or st or a bad option, and reg's error (such as a
// prometheus.AlreadyRegisteredError) when registering fails.
func RegisterMemoryStore(reg prometheus.Registerer, st *memory.Store, opts ...Option) (prometheus.Collector, error) {
	if reg == nil {
		return nil, fmt.Errorf("%w: nil prometheus.Registerer", ErrInvalid)
	}
	if st == nil {
		return nil, fmt.Errorf("%w: nil *memory.Store", ErrInvalid)
	}
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	mc := &memoryCollector{
		store: st,
		keys: prometheus.NewDesc(prometheus.BuildFQName(c.namespace, "memory_store", "keys"),
			"Keys the rate-limit memory store holds.", nil, c.constLabels),
		evictions: prometheus.NewDesc(prometheus.BuildFQName(c.namespace, "memory_store", "evictions_total"),
			"Keys the rate-limit memory store evicted, while their state had not recovered, to make room for new ones.", nil, c.constLabels),
	}
	if err := reg.Register(mc); err != nil {
		return nil, fmt.Errorf("prommetrics: registering the memory store's metrics: %w", err)
	}
	return mc, nil
}

// memoryCollector is a prometheus.Collector of a memory store's Stats.
type memoryCollector struct {
	store     *memory.Store
	keys      *prometheus.Desc
	evictions *prometheus.Desc
}

func (mc *memoryCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- mc.keys
	ch <- mc.evictions
}

func (mc *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	s := mc.store.Stats()
	ch <- constMetric(mc.keys, prometheus.GaugeValue, float64(s.Keys))
	ch <- constMetric(mc.evictions, prometheus.CounterValue, float64(s.Evictions))
}

// constMetric is prometheus.NewConstMetric, reporting an error as an
// invalid metric (the registry's way) rather than panicking.
func constMetric(desc *prometheus.Desc, kind prometheus.ValueType, v float64) prometheus.Metric {
	m, err := prometheus.NewConstMetric(desc, kind, v)
	if err != nil {
		return prometheus.NewInvalidMetric(desc, err)
	}
	return m
}
