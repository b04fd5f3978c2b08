package prommetrics_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
)

// rulesSeries returns the ratewarden_rules_version series gathered: digest
// label -> value.
func rulesSeries(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "ratewarden_rules_version" {
			continue
		}
		for _, m := range f.GetMetric() {
			out[labels(m)["digest"]] = m.GetGauge().GetValue()
		}
	}
	return out
}

// The rules gauge is absent until a document is heard of, then one series:
// the version as value, the short digest as label; a reload replaces it.
func TestRulesVersionGauge(t *testing.T) {
	obs, reg := newObserver(t, prommetrics.WithConstLabels(prometheus.Labels{"app": "shop"}))
	assert.Empty(t, rulesSeries(t, reg), "no rules heard of")
	d11 := strings.Repeat("3f2a9c1b7e04", 5) + "abcd"
	obs.ObserveRules(11, d11)
	assert.Equal(t, map[string]float64{"3f2a9c1b7e04": 11}, rulesSeries(t, reg))
	obs.ObserveRules(12, strings.Repeat("0", 64))
	assert.Equal(t, map[string]float64{"000000000000": 12}, rulesSeries(t, reg), "the old series is gone")
	obs.ObserveRules(11, d11)
	assert.Equal(t, map[string]float64{"3f2a9c1b7e04": 11}, rulesSeries(t, reg), "a downgrade too")

	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ratewarden_rules_version Version of the rules document in force (rules.Set), labelled with the first 12 hex digits of its content digest; one series, replaced on every reload.
# TYPE ratewarden_rules_version gauge
ratewarden_rules_version{app="shop",digest="3f2a9c1b7e04"} 11
`), "ratewarden_rules_version")
	require.NoError(t, err)
	problems, err := testutil.GatherAndLint(reg, "ratewarden_rules_version")
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// Whatever a caller passes, the gauge gathers: a short or empty digest is
// kept whole, invalid UTF-8 is replaced, and concurrent reloads leave one series.
func TestRulesVersionGaugeBadInput(t *testing.T) {
	obs, reg := newObserver(t)
	obs.ObserveRules(1, "")
	assert.Equal(t, map[string]float64{"": 1}, rulesSeries(t, reg))
	obs.ObserveRules(2, "\xff\xfe")
	assert.Equal(t, map[string]float64{"\uFFFD": 2}, rulesSeries(t, reg))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for v := range 100 {
				obs.ObserveRules(int64(i*100+v), strings.Repeat("a", 64))
			}
		})
	}
	for range 20 {
		assert.Len(t, rulesSeries(t, reg), 1)
	}
	wg.Wait()
}
