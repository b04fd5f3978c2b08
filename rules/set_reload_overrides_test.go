package rules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/httplimit"
)

// A reload that changes only a policy's overrides takes effect: a newly
// blocked key is refused, an unblocked one is limited again, and an override
// whose limits changed answers under the new ones. (A policy whose overrides
// changed is a changed policy, not one to keep as compiled.)
func TestReloadOfOverridesAlone(t *testing.T) {
	withPartner := strings.Replace(apiRules, "      - {key: monitor, unlimited: true}\n",
		"      - {key: monitor, unlimited: true}\n      - {key: partner, limits: [10/m]}\n", 1)
	s, _ := newSet(t, withPartner)
	w, next := do(s, "GET", "/api/items", "X-API-Key", "partner")
	require.True(t, next)
	assert.Equal(t, `"api/override";q=10;w=60`, w.Header().Get(httplimit.HeaderRateLimitPolicy))

	edited := strings.Replace(withPartner, "version: 1\n", "version: 2\n", 1)
	edited = strings.Replace(edited, "{key: leaked, blocked: true}", "{key: stolen, blocked: true}", 1)
	edited = strings.Replace(edited, "{key: partner, limits: [10/m]}", "{key: partner, limits: [20/m]}", 1)
	require.NoError(t, s.Load([]byte(edited), "rules.yaml"))

	w, next = do(s, "GET", "/api/items", "X-API-Key", "stolen")
	assert.False(t, next, "a key blocked by the reload is refused")
	assert.Equal(t, 429, w.Code)
	assert.Equal(t, `"api/override";q=0;w=60`, w.Header().Get(httplimit.HeaderRateLimitPolicy))

	w, next = do(s, "GET", "/api/items", "X-API-Key", "leaked")
	assert.True(t, next, "a key the reload unblocked goes on")
	assert.Equal(t, `"api/free";q=2;w=60`, w.Header().Get(httplimit.HeaderRateLimitPolicy))

	w, next = do(s, "GET", "/api/items", "X-API-Key", "partner")
	assert.True(t, next)
	assert.Equal(t, `"api/override";q=20;w=60`, w.Header().Get(httplimit.HeaderRateLimitPolicy), "the override's new limits")
}

// Documents that only validation refuses (they are valid YAML of the right
// shape) are refused by Load, and the rules in force stay: two policies of
// one name, and a replaces cycle.
func TestLoadRefusesWhatOnlyValidationRefuses(t *testing.T) {
	s, _ := newSet(t, apiRules)
	docs := map[string]string{
		"duplicate names": "schema: 1\nversion: 2\npolicies:\n  - {name: a, limits: [1/s]}\n  - {name: a, limits: [2/s]}\n",
		"a replaces cycle": "schema: 1\nversion: 2\npolicies:\n" +
			"  - {name: a, match: {prefixes: [/a]}, limits: [1/s], replaces: [b]}\n" +
			"  - {name: b, match: {prefixes: [/a]}, limits: [1/s], replaces: [a]}\n",
	}
	for name, doc := range docs {
		err := s.Load([]byte(doc), "rules.yaml")
		var problems *Problems
		require.ErrorAs(t, err, &problems, name)
		require.ErrorIs(t, err, ErrInvalidRules, name)
		assert.Equal(t, int64(1), s.Version(), name)
	}
	w, _ := do(s, "POST", "/login")
	assert.Equal(t, `"login";q=3;w=60`, w.Header().Get(httplimit.HeaderRateLimitPolicy), "the rules in force stay")
}

// A watched file rewritten with a document that only validation refuses is
// refused too, and the next valid one is loaded.
func TestWatchFileRefusesWhatOnlyValidationRefuses(t *testing.T) {
	dir := t.TempDir()
	path := writeRulesFile(t, dir, fileDocVersion(1))
	set, reports := newFileTestSet(t, fileDocVersion(1))
	startFileWatcher(t, set, reports, path, 1)

	renameOverFile(t, path, []byte("schema: 1\nversion: 2\npolicies:\n  - {name: a, limits: [1/s]}\n  - {name: a, limits: [2/s]}\n"))
	r := nextFileReport(t, reports)
	require.ErrorIs(t, r.Err, ErrInvalidRules)
	assert.Contains(t, r.Err.Error(), `duplicate policy name "a"`)
	assert.Equal(t, int64(1), set.Version())

	renameOverFile(t, path, fileDocVersion(3))
	r = nextFileReport(t, reports)
	require.NoError(t, r.Err)
	assert.Equal(t, int64(3), set.Version())
}
