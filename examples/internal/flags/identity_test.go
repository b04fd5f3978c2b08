package flags

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// rulesMetric returns the ratewarden_rules_version lines /metrics serves.
func (s *rulesServer) rulesMetric(t *testing.T) []string {
	t.Helper()
	require.NotNil(t, s.setup.Metrics)
	rec := httptest.NewRecorder()
	s.setup.Metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, MetricsPath, nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var out []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "ratewarden_rules_version{") {
			out = append(out, line)
		}
	}
	return out
}

// identityLine is the metric line of the rules in force of s.
func (s *rulesServer) identityLine() string {
	id := s.setup.Rules.Identity()
	return `ratewarden_rules_version{digest="` + rules.ShortDigest(id.Digest) + `"} ` + strconv.FormatInt(id.Version, 10)
}

// A server started from its -rules-fallback file of version 3 while Redis
// holds another version 3 says so and follows Redis; /metrics shows the
// version and digest in force, one series, replaced on a push.
func TestRulesFallbackDisagreesWithRedis(t *testing.T) {
	srv := redistest.StartLocal(t)
	b := rulesBackend(t, srv.URL())
	push(t, b, rulesDoc(3, "9/m"))
	fallback := writeRules(t, "fallback.yaml", rulesDoc(3, "4/m"))
	s := startRules(t, "-rules", srv.URL(), "-rules-fallback", fallback, "-metrics")

	r := s.waitReload(t)
	require.NoError(t, r.Err)
	assert.Equal(t, rules.RedisSource, r.Source)
	assert.Equal(t, `"api";q=9;w=60`, s.policyOf(t, "192.0.2.1"), "Redis's rules")
	fileDoc, err := rules.Parse([]byte(rulesDoc(3, "4/m")), fallback)
	require.NoError(t, err)
	assert.Contains(t, s.log.String(), `msg="ratewarden: the rules in force differ from the rules in redis; following redis" in_force="version 3, digest `+
		rules.ShortDigest(fileDoc.Digest())+`" redis="version 3, digest `+rules.ShortDigest(r.Digest)+`"`)
	assert.Equal(t, []string{s.identityLine()}, s.rulesMetric(t))
	assert.Contains(t, s.identityLine(), "} 3")

	push(t, b, rulesDoc(4, "7/m"))
	r = s.waitReload(t)
	require.NoError(t, r.Err)
	assert.Equal(t, int64(4), r.Version)
	assert.Equal(t, []string{`ratewarden_rules_version{digest="` + rules.ShortDigest(r.Digest) + `"} 4`}, s.rulesMetric(t), "one series: the old one is gone")
}

// A server on a rules file refuses an edit that keeps the version, and one
// that lowers it, and says why; the metric keeps the rules in force.
func TestRulesFileIdentity(t *testing.T) {
	path := writeRules(t, "rules.yaml", rulesDoc(2, "5/m"))
	s := startRules(t, "-rules", path, "-metrics")
	require.NoError(t, s.waitReload(t).Err)
	inForce := s.identityLine()
	assert.Equal(t, []string{inForce}, s.rulesMetric(t))

	for _, edit := range []struct {
		doc  string
		want error
	}{{rulesDoc(2, "6/m"), rules.ErrVersionConflict}, {rulesDoc(1, "6/m"), rules.ErrDowngrade}} {
		tmp := path + ".tmp"
		require.NoError(t, os.WriteFile(tmp, []byte(edit.doc), 0o644))
		require.NoError(t, os.Rename(tmp, path)) // as an editor saves
		r := s.waitReload(t)
		require.ErrorIs(t, r.Err, edit.want)
		assert.Equal(t, s.setup.Rules.Digest(), r.Digest, "reported with the rules in force")
		require.ErrorIs(t, s.setup.reload(t.Context()), edit.want, "what SIGHUP does")
		require.ErrorIs(t, s.waitReload(t).Err, edit.want)
		assert.Equal(t, []string{inForce}, s.rulesMetric(t))
		assert.Equal(t, `"api";q=5;w=60`, s.policyOf(t, "192.0.2.9"))
	}
	assert.Contains(t, s.log.String(), "version 2 is the version in force, with other rules")
	assert.Contains(t, s.log.String(), "version 1 is older than version 2 in force")
}
