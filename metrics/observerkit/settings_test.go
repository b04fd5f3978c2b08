package observerkit_test

import (
	"errors"
	"testing"

	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/metrics/observerkit"
)

var errObserver = errors.New("observer: invalid argument")

func TestSettingsDefaults(t *testing.T) {
	s := observerkit.DefaultSettings()
	expect.Equal(t, observerkit.DefaultBuckets(), s.Buckets)
	expect.Equal(t, observerkit.DefaultMaxPolicies, s.MaxPolicies)
}

func TestSettingsSetBucketsCopies(t *testing.T) {
	s := observerkit.DefaultSettings()
	bounds := []float64{0.01, 0.1}
	expect.NoError(t, s.SetBuckets(bounds, errObserver))
	bounds[0] = 5
	expect.Equal(t, []float64{0.01, 0.1}, s.Buckets, "the caller's slice is not kept")
}

func TestSettingsRefuseBadValuesAndKeepTheOld(t *testing.T) {
	s := observerkit.DefaultSettings()
	err := s.SetBuckets([]float64{2, 1}, errObserver)
	expect.ErrorIs(t, err, errObserver)
	expect.Equal(t, "observer: invalid argument: histogram buckets must increase: 1 follows 2", err.Error())
	expect.Equal(t, observerkit.DefaultBuckets(), s.Buckets)

	err = s.SetMaxPolicies(0, errObserver)
	expect.ErrorIs(t, err, errObserver)
	expect.Equal(t, "observer: invalid argument: max policies 0 is below 1", err.Error())
	expect.Equal(t, observerkit.DefaultMaxPolicies, s.MaxPolicies)

	expect.NoError(t, s.SetMaxPolicies(3, errObserver))
	expect.Equal(t, 3, s.MaxPolicies)
}
