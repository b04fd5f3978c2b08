package flags

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// serveLikeStdhttp builds the server of setup as examples/stdhttp's main
// does (the limiter of the flags, Policy, stdhttp on every route and
// /metrics) and serves it on a loopback listener until the test ends.
func serveLikeStdhttp(t *testing.T, setup *Setup) string {
	t.Helper()
	var limit func(http.Handler) http.Handler
	var err error
	if setup.Rules != nil {
		limit, err = stdhttp.Middleware(setup.Rules)
	} else {
		cfg := setup.Config
		lim, err := core.NewLimiter(setup.Store, cfg.Algorithm, cfg.Limit, cfg.LimiterOptions()...)
		require.NoError(t, err)
		key, err := cfg.KeyFunc()
		require.NoError(t, err)
		lim, opts, err := setup.Policy(lim)
		require.NoError(t, err)
		limit, err = stdhttp.New(lim, append(opts, httplimit.WithKey(key))...)
		require.NoError(t, err)
	}
	require.NoError(t, err)
	mux := http.NewServeMux()
	for _, route := range setup.Config.Routes() {
		mux.HandleFunc(route.MuxPattern(), func(w http.ResponseWriter, r *http.Request) {
			reply := route.Answer(muxRequest{r})
			w.WriteHeader(reply.Status)
			_, _ = io.WriteString(w, reply.Body)
		})
	}
	mux.Handle("GET "+MetricsPath, setup.Metrics)
	srv := httptest.NewServer(limit(mux))
	t.Cleanup(srv.Close)
	return srv.URL
}

type muxRequest struct{ r *http.Request }

func (q muxRequest) Header(name string) string    { return q.r.Header.Get(name) }
func (q muxRequest) FormValue(name string) string { return q.r.PostFormValue(name) }
func (q muxRequest) PathValue(name string) string { return q.r.PathValue(name) }
func (q muxRequest) Query(name string) string     { return q.r.URL.Query().Get(name) }

// buildServer parses args, builds the setup and serves it; the setup is
// closed when the test ends unless the test closed it.
func buildServer(t *testing.T, args ...string) (*Setup, string) {
	t.Helper()
	c, err := Parse("ex", append(args, "-metrics"), io.Discard)
	require.NoError(t, err)
	c.ErrorLog = io.Discard
	setup, err := c.Build()
	require.NoError(t, err)
	return setup, serveLikeStdhttp(t, setup)
}

// get returns the status and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// metric returns the value of the series line (name{labels}) curl /metrics
// shows, or -1 when it shows none.
func metric(t *testing.T, base, series string) int64 {
	t.Helper()
	status, body := get(t, base+MetricsPath)
	require.Equal(t, http.StatusOK, status)
	m := regexp.MustCompile("(?m)^" + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return int64(v)
}

// With -concurrency, /metrics shows the slots the policy holds while a
// request runs, in flags mode and in rules mode (examples/rules.yaml's
// policy slow).
func TestMetricsShowInFlightSlots(t *testing.T) {
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	raw, err := os.ReadFile("../../rules.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(rulesFile, raw, 0o644))
	for _, tc := range []struct {
		name, series string
		args         []string
	}{
		{"flags", `ratewarden_inflight_slots{policy="default"}`, []string{"-limit", "100/m", "-concurrency", "1"}},
		{"rules", `ratewarden_inflight_slots{policy="slow"}`, []string{"-rules", rulesFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setup, base := buildServer(t, tc.args...)
			defer func() { assert.NoError(t, setup.Close()) }()
			assert.Equal(t, int64(0), metric(t, base, tc.series))
			done := make(chan int, 1)
			go func() {
				resp, err := http.Get(base + SlowPath + "?ms=1500")
				if err != nil {
					done <- 0
					return
				}
				resp.Body.Close()
				done <- resp.StatusCode
			}()
			require.Eventually(t, func() bool { return metric(t, base, tc.series) == 1 }, 10*time.Second, 10*time.Millisecond,
				"the slow request holds a slot")
			assert.Equal(t, http.StatusOK, <-done)
			assert.Equal(t, int64(0), metric(t, base, tc.series), "the slot is released when the request is answered")
		})
	}
}

// With -lease on Redis, /metrics shows the token-lease counters of the
// policy, and Close gives the unspent leased tokens back: the store then
// holds exactly what the requests spent.
func TestMetricsShowTokenLeasesAndCloseGivesBack(t *testing.T) {
	srv := redistest.Start(t)
	url := "redis://" + srv.Addr()
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(rulesFile, []byte("schema: 1\nversion: 1\npolicies:\n  - name: hot\n    match: {prefixes: [/]}\n    key: {header: X-Client}\n    algorithm: gcra\n    limits: [100000/h]\n    lease_tokens: 50\n    lease_ttl: 10m\n"), 0o644))
	for _, tc := range []struct {
		name, policy string
		args         []string
	}{
		{"flags", "default", []string{"-store", url, "-algorithm", "gcra", "-limit", "100000/h", "-key", "header:X-Client", "-lease", "50", "-lease-ttl", "10m"}},
		{"rules", "hot", []string{"-store", url, "-rules", rulesFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setup, base := buildServer(t, tc.args...)
			client := strconv.FormatInt(time.Now().UnixNano(), 36)
			for range 300 {
				req, err := http.NewRequest(http.MethodGet, base+"/", nil)
				require.NoError(t, err)
				req.Header.Set("X-Client", client)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode)
			}
			series := func(name string) int64 {
				return metric(t, base, "ratewarden_token_lease_"+name+`{policy="`+tc.policy+`"}`)
			}
			assert.Equal(t, int64(300), series("decisions_total"))
			assert.Greater(t, series("local_decisions_total"), int64(150), "most decisions asked no store")
			assert.Positive(t, series("leased_tokens_total"))

			policies := setup.policiesInForce()
			require.NoError(t, setup.Close())
			var returned int64
			for _, p := range policies {
				returned += p.TokenLeaseStats().Returned
			}
			assert.Positive(t, returned, "Close gave the unspent leased tokens back")
		})
	}
}
