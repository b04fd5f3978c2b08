package otelmetrics

import (
	"context"
	"errors"
	"fmt"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratewarden/ratewarden/store/memory"
)

// RegisterMemoryStore makes two observable instruments of st's occupancy,
// read from st.Stats() at each collection (so they cost the decision path
// nothing), on mp's Meter named ScopeName:
//
//	ratewarden.memory_store.keys       up-down counter {key}: keys held now
//	ratewarden.memory_store.evictions  counter {eviction}: keys evicted since st was made
//
// An eviction is a client whose count was lost to make room (see package
// memory's eviction policy): a rising rate means the store's bound
// (memory.WithMaxKeys) is too small for the clients it sees. WithAttributes
// applies (give each store an attribute of its own when one provider sees
// several); the other options do not concern a store and are ignored.
//
// It returns the callback's registration, whose Unregister stops the
// observations, or an error wrapping ErrInvalid for a nil mp or st or a bad
// option, and the Meter's error when an instrument or the callback cannot be
// made.
func RegisterMemoryStore(mp metric.MeterProvider, st *memory.Store, opts ...Option) (metric.Registration, error) {
	if mp == nil {
		return nil, fmt.Errorf("%w: nil metric.MeterProvider", ErrInvalid)
	}
	if st == nil {
		return nil, fmt.Errorf("%w: nil *memory.Store", ErrInvalid)
	}
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	meter := mp.Meter(ScopeName)
	keys, errKeys := meter.Int64ObservableUpDownCounter("ratewarden.memory_store.keys",
		metric.WithUnit("{key}"),
		metric.WithDescription("Keys the rate-limit memory store holds."))
	evictions, errEvictions := meter.Int64ObservableCounter("ratewarden.memory_store.evictions",
		metric.WithUnit("{eviction}"),
		metric.WithDescription("Keys the rate-limit memory store evicted, while their state had not recovered, to make room for new ones."))
	if err := errors.Join(errKeys, errEvictions); err != nil {
		return nil, fmt.Errorf("otelmetrics: making the memory store's instruments: %w", err)
	}
	attrs := metric.WithAttributeSet(attribute.NewSet(c.attrs...))
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := st.Stats()
		o.ObserveInt64(keys, int64(s.Keys), attrs)
		o.ObserveInt64(evictions, int64(min(s.Evictions, math.MaxInt64)), attrs)
		return nil
	}, keys, evictions)
	if err != nil {
		return nil, fmt.Errorf("otelmetrics: registering the memory store's callback: %w", err)
	}
	return reg, nil
}
