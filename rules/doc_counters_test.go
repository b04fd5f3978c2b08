package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

// quotaRules is one policy keyed by X-API-Key, version, algorithm and limits
// filled in, with a tier and an override.
const quotaRules = `schema: 1
version: %d
policies:
  - name: api
    match: {prefixes: [/api]}
    key: {header: X-API-Key}
    algorithm: %s
    tiers:
      by: {header: X-Plan}
      default: free
      limits:
        free: [%s]
        pro: [%s]
    overrides:
      - {key: partner, limits: [%s]}
`

func quotaDoc(version int, alg core.Algorithm, free, pro, partner string) string {
	return fmt.Sprintf(quotaRules, version, alg, free, pro, partner)
}

// admittedNow sends requests for key (with the headers kv) until one is
// denied, and returns how many went on (at most 50).
func admittedNow(t *testing.T, s *Set, kv ...string) int {
	t.Helper()
	for n := range 50 {
		if _, next := do(s, "GET", "/api/items", kv...); !next {
			return n
		}
	}
	return 50
}

// A reload that only raises a policy's limit keeps what each client used:
// 5/h with 3 spent, raised to 10/h, admits exactly 7 more, for every
// algorithm, in the default tier, another tier and an override; a reload
// that changes the algorithm starts the counters afresh. (Not the leaky
// bucket, whose admitted requests wait their slot on the test's clock, which
// stands still; storetest checks its edits in every store.)
func TestReloadKeepsWhatClientsUsed(t *testing.T) {
	for _, alg := range core.Algorithms() {
		if alg == core.LeakyBucket {
			continue
		}
		t.Run(alg.String(), func(t *testing.T) {
			other := core.GCRA
			if alg == core.GCRA {
				other = core.FixedWindow
			}
			s, _ := newSet(t, quotaDoc(1, alg, "5/h", "5/h", "5/h"))
			clients := map[string][]string{
				"default tier": {"X-API-Key", "alice"},
				"tier pro":     {"X-API-Key", "bob", "X-Plan", "pro"},
				"override":     {"X-API-Key", "partner"},
			}
			for name, kv := range clients {
				for i := range 3 {
					_, next := do(s, "GET", "/api/items", kv...)
					require.True(t, next, "%s: request %d", name, i)
				}
			}
			require.NoError(t, s.Load([]byte(quotaDoc(2, alg, "10/h", "10/h", "10/h")), "rules.yaml"))
			for name, kv := range clients {
				assert.Equal(t, 7, admittedNow(t, s, kv...), "%s: 3 of 5 spent, raised to 10: 7 more", name)
			}
			require.NoError(t, s.Load([]byte(quotaDoc(3, other, "10/h", "10/h", "10/h")), "rules.yaml"))
			for name, kv := range clients {
				assert.Equal(t, 10, admittedNow(t, s, kv...), "%s: another algorithm starts afresh", name)
			}
		})
	}
}

// A reload that cuts a limit keeps what each client used too: 10/h with 7
// spent, cut to 5/h, admits none.
func TestReloadCutKeepsWhatClientsUsed(t *testing.T) {
	s, _ := newSet(t, quotaDoc(1, core.FixedWindow, "10/h", "10/h", "10/h"))
	for range 7 {
		_, next := do(s, "GET", "/api/items", "X-API-Key", "alice")
		require.True(t, next)
	}
	require.NoError(t, s.Load([]byte(quotaDoc(2, core.FixedWindow, "5/h", "10/h", "10/h")), "rules.yaml"))
	assert.Equal(t, 0, admittedNow(t, s, "X-API-Key", "alice"), "7 spent is over the new 5")
	assert.Equal(t, 5, admittedNow(t, s, "X-API-Key", "carol"), "a fresh client gets the new 5")
	assert.Equal(t, 10, admittedNow(t, s, "X-API-Key", "alice", "X-Plan", "pro"), "alice under tier pro counts apart: her 7 of the default tier are not its")
}

func TestCounterChanges(t *testing.T) {
	parse := func(src string) *Document {
		t.Helper()
		doc, err := Parse([]byte(src), "rules.yaml")
		require.NoError(t, err)
		return doc
	}
	base := parse(quotaDoc(1, core.GCRA, "5/h", "100/m", "5/s"))
	tests := []struct {
		name string
		new  *Document
		want []string
	}{
		{"the same", parse(quotaDoc(2, core.GCRA, "5/h", "100/m", "5/s")), []string{
			"api: kept", "api tier pro: kept", "api override partner: kept",
		}},
		{"a raised limit", parse(quotaDoc(2, core.GCRA, "10/h", "100/m", "5/s")), []string{
			"api: re-expressed (5/h -> 10/h)", "api tier pro: kept", "api override partner: kept",
		}},
		{"a new period and a burst", parse(quotaDoc(2, core.GCRA, "5/h", "1000/h", "5/s burst 20")), []string{
			"api: kept", "api tier pro: re-expressed (100/m -> 1000/h)", "api override partner: re-expressed (5/s -> 5/s burst 20)",
		}},
		{"another algorithm", parse(quotaDoc(2, core.FixedWindow, "5/h", "100/m", "5/s")), []string{
			"api: restarted (gcra -> fixed-window)", "api tier pro: restarted (gcra -> fixed-window)", "api override partner: restarted (gcra -> fixed-window)",
		}},
		{"another number of limits", parse(quotaDoc(2, core.GCRA, "5/h", "100/m, 1000/d", "5/s")), []string{
			"api: kept", "api tier pro: restarted (1 limit -> 2 limits)", "api override partner: kept",
		}},
		{"a renamed tier and a new override", parse(strings.Replace(strings.Replace(quotaDoc(2, core.GCRA, "5/h", "100/m", "5/s"),
			"pro:", "team:", 1), "      - {key: partner", "      - {key: newco, limits: [1/s]}\n      - {key: partner", 1)), []string{
			"api: kept", "api tier team: new", "api override newco: new", "api override partner: kept", "api tier pro: dropped",
		}},
		{"another default tier", parse(strings.Replace(quotaDoc(2, core.GCRA, "5/h", "5/h", "5/s"), "default: free", "default: pro", 1)), []string{
			"api: kept (the default tier free's counters are now tier pro's)", "api tier free: new", "api override partner: kept", "api tier pro: dropped",
		}},
		{"a renamed policy", parse(strings.Replace(quotaDoc(2, core.GCRA, "5/h", "100/m", "5/s"), "name: api", "name: api2", 1)), []string{
			"api2: new", "api2 tier pro: new", "api2 override partner: new", "api: dropped", "api tier pro: dropped", "api override partner: dropped",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range CounterChanges(base, tt.new) {
				got = append(got, c.String())
			}
			assert.Equal(t, tt.want, got)
		})
	}
	first := CounterChanges(nil, base)
	require.Len(t, first, 3)
	for _, c := range first {
		assert.Equal(t, CountersNew, c.Fate, "a first load: %s", c)
	}
	assert.Empty(t, CounterChanges(nil, nil))
	assert.Equal(t, "CounterFate(9)", CounterFate(9).String())
}
