package rules

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// apiRules is a small API's rules: a login that counts failures, a tiered
// API with a blocked key, a dry-run policy on writes and an exempt health
// check.
const apiRules = `schema: 1
version: 1
policies:
  - name: login
    match: {methods: [POST], paths: [/login]}
    limits: [3/m]
    count: failures
  - name: api
    match: {prefixes: [/api]}
    key: {header: X-API-Key}
    tiers:
      by: {header: X-Plan}
      default: free
      limits:
        free: [2/m]
        paid: [5/m]
    overrides:
      - {key: leaked, blocked: true}
      - {key: monitor, unlimited: true}
  - name: writes
    match: {prefixes: [/api], methods: [POST]}
    key: {header: X-API-Key}
    limits: [1/m]
    dry_run: true
  - name: health
    match: {paths: [/healthz]}
    unlimited: true
    replaces: [api]
`

var t0 = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// newSet builds a Set of src on a fresh memory store and a manual clock.
func newSet(t *testing.T, src string, opts ...Option) (*Set, *core.ManualClock) {
	t.Helper()
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	doc, err := Parse([]byte(src), "rules.yaml")
	require.NoError(t, err)
	clk := core.NewManualClock(t0)
	s, err := New(st, doc, append([]Option{WithClock(clk), WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	require.NoError(t, err)
	return s, clk
}

// do sends one request through s and returns the response and whether the
// handler would run.
func do(s *Set, method, target string, kv ...string) (*httptest.ResponseRecorder, bool) {
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = "192.0.2.1:1234"
	for i := 0; i+1 < len(kv); i += 2 {
		r.Header.Set(kv[i], kv[i+1])
	}
	w := httptest.NewRecorder()
	_, next := s.Handle(r.Context(), stdhttp.View(r), w)
	return w, next
}

func TestNewRefusesBadInput(t *testing.T) {
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	defer st.Close()
	doc, err := Parse([]byte(apiRules), "rules.yaml")
	require.NoError(t, err)
	jwtDoc, err := Parse([]byte(strings.Replace(apiRules, "{header: X-Plan}", "{jwt_claim: plan}", 1)), "rules.yaml")
	require.NoError(t, err)
	tests := []struct {
		name  string
		store core.Store
		doc   *Document
		opts  []Option
	}{
		{"nil store", nil, doc, nil},
		{"nil document", st, nil, nil},
		{"nil option", st, doc, []Option{nil}},
		{"nil ip key", st, doc, []Option{WithIPKey(nil)}},
		{"nil claim key", st, doc, []Option{WithClaimKey(nil)}},
		{"empty context name", st, doc, []Option{WithContextValueKey("", 1)}},
		{"nil observer", st, doc, []Option{WithObserver(nil)}},
		{"nil logger", st, doc, []Option{WithLogger(nil)}},
		{"nil clock", st, doc, []Option{WithClock(nil)}},
		{"nil http option", st, doc, []Option{WithHTTPOptions(nil)}},
		{"nil reload hook", st, doc, []Option{WithReloadHook(nil)}},
		{"a JWT claim with no verifier", st, jwtDoc, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.store, tt.doc, tt.opts...)
			assert.Nil(t, s)
			assert.ErrorIs(t, err, core.ErrInvalidOption)
		})
	}
}

// The rules decide per request: which policies apply, with which tier, and
// what the fields name.
func TestSetDecidesByTheRules(t *testing.T) {
	s, _ := newSet(t, apiRules)
	w, next := do(s, "GET", "/api/items", "X-API-Key", "k1")
	require.True(t, next)
	assert.Equal(t, `"api/free";q=2;w=60`, w.Header().Get(httplimit.HeaderRateLimitPolicy))
	w, next = do(s, "POST", "/api/items", "X-API-Key", "k1", "X-Plan", "paid")
	require.True(t, next)
	assert.Equal(t, `"api/paid";q=5;w=60, "writes";q=1;w=60`, w.Header().Get(httplimit.HeaderRateLimitPolicy))
	w, next = do(s, "POST", "/api/items", "X-API-Key", "k1", "X-Plan", "paid")
	assert.True(t, next, "writes is a dry run")
	assert.Equal(t, `"api/paid";r=3;t=24, "writes";r=0;t=60`, w.Header().Get(httplimit.HeaderRateLimit))
	_, next = do(s, "GET", "/api/x/../items/1", "X-API-Key", "k1")
	require.True(t, next)
	w, next = do(s, "GET", "/api/items", "X-API-Key", "k1")
	assert.False(t, next, "the free tier's 2/m is spent, whichever path spelling was used")
	assert.Equal(t, 429, w.Code)
	w, next = do(s, "GET", "/healthz")
	assert.True(t, next)
	assert.Empty(t, w.Header().Get(httplimit.HeaderRateLimitPolicy))
	w, next = do(s, "GET", "/elsewhere")
	assert.True(t, next)
	assert.Empty(t, w.Header().Get(httplimit.HeaderRateLimitPolicy))
}

// Overrides: a blocked key is denied at once with a quota of 0; an unlimited
// one passes unlimited.
func TestSetOverrides(t *testing.T) {
	s, _ := newSet(t, apiRules)
	w, next := do(s, "GET", "/api/items", "X-API-Key", "leaked")
	assert.False(t, next)
	assert.Equal(t, 429, w.Code)
	assert.Equal(t, `"api/override";q=0;w=60`, w.Header().Get(httplimit.HeaderRateLimitPolicy), "named as docs/rules.md says: policy/override")
	for range 5 {
		_, next := do(s, "GET", "/api/items", "X-API-Key", "monitor")
		assert.True(t, next)
	}
	got, err := s.Peek(context.Background(), "api", "leaked")
	require.NoError(t, err)
	assert.Equal(t, []PeekResult{{Name: "api/override", Blocked: true}}, got)
}

// A reload keeps the counters of policies whose limits did not change, and
// re-expresses those whose limits did: what a client used stays used.
func TestLoadCarriesUnchangedCountersOn(t *testing.T) {
	var heard []Reload
	s, _ := newSet(t, apiRules, WithReloadHook(func(r Reload) { heard = append(heard, r) }))
	for range 2 {
		do(s, "POST", "/login")
		do(s, "GET", "/api/items", "X-API-Key", "k1")
	}
	next := strings.Replace(strings.Replace(apiRules, "version: 1", "version: 2", 1), "free: [2/m]", "free: [4/m]", 1)
	require.NoError(t, s.Load([]byte(next), "rules.yaml"))
	assert.Equal(t, int64(2), s.Version())
	w, _ := do(s, "POST", "/login")
	assert.Equal(t, `"login";r=0;t=60`, w.Header().Get(httplimit.HeaderRateLimit), "login's 3/m carried on: third request")
	w, _ = do(s, "GET", "/api/items", "X-API-Key", "k1")
	assert.Equal(t, `"api/free";r=1;t=45`, w.Header().Get(httplimit.HeaderRateLimit), "2 of 2/m spent, raised to 4/m: the third leaves 1")
	assert.Equal(t, []Reload{{Source: "rules.yaml", Version: 2, Digest: s.Digest()}}, heard)
}

// A document that fails validation or compilation is refused, reported and
// logged, and the rules in force stay.
func TestLoadRefusesBadDocuments(t *testing.T) {
	var heard []Reload
	var log bytes.Buffer
	s, _ := newSet(t, apiRules, WithReloadHook(func(r Reload) { heard = append(heard, r) }),
		WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	bad := map[string]string{
		"not yaml":       "{{{",
		"bad limit":      strings.Replace(apiRules, "[3/m]", "[3/x]", 1),
		"jwt, no verify": strings.Replace(apiRules, "{header: X-Plan}", "{jwt_claim: plan}", 1),
	}
	for name, doc := range bad {
		err := s.Load([]byte(doc), "rules.yaml")
		assert.Error(t, err, name)
	}
	assert.ErrorIs(t, s.Replace(nil, "code"), core.ErrInvalidOption)
	dup := &Document{Schema: 1, Version: 2, Policies: []Policy{
		{Name: "a", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1},
		{Name: "a", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1},
	}}
	assert.ErrorIs(t, s.Replace(dup, "code"), ErrInvalidRules, "a document built in Go is validated too")
	require.Len(t, heard, 5)
	for _, r := range heard {
		assert.Error(t, r.Err)
		assert.Equal(t, int64(1), r.Version, "the version in force")
	}
	assert.Equal(t, 5, strings.Count(log.String(), "rules refused"))
	w, _ := do(s, "POST", "/login")
	assert.Equal(t, `"login";q=3;w=60`, w.Header().Get(httplimit.HeaderRateLimitPolicy))
}

func TestResetAndPeek(t *testing.T) {
	s, _ := newSet(t, apiRules)
	do(s, "GET", "/api/items", "X-API-Key", "k1", "X-Plan", "paid")
	got, err := s.Peek(context.Background(), "api", "k1")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "api/free", got[0].Name)
	assert.Equal(t, int64(2), got[0].Decision.Remaining)
	assert.Equal(t, "api/paid", got[1].Name)
	assert.Equal(t, int64(4), got[1].Decision.Remaining)
	require.NoError(t, s.Reset(context.Background(), "api", "k1"))
	got, err = s.Peek(context.Background(), "api", "k1")
	require.NoError(t, err)
	assert.Equal(t, int64(5), got[1].Decision.Remaining)
	for _, name := range []string{"health", "nope", ""} {
		_, err = s.Peek(context.Background(), name, "k1")
		assert.ErrorIs(t, err, ErrUnknownPolicy, name)
		assert.ErrorIs(t, s.Reset(context.Background(), name, "k1"), ErrUnknownPolicy, name)
	}
}

// A context key registered by name keys requests by what authentication
// middleware stored.
func TestContextKeysByName(t *testing.T) {
	type userKey struct{}
	src := strings.Replace(apiRules, "key: {header: X-API-Key}\n    tiers", "key: {context: user}\n    tiers", 1)
	s, _ := newSet(t, src, WithContextValueKey("user", userKey{}))
	r := httptest.NewRequest("GET", "/api/items", nil)
	r = r.WithContext(context.WithValue(r.Context(), userKey{}, "alice"))
	w := httptest.NewRecorder()
	_, next := s.Handle(r.Context(), stdhttp.View(r), w)
	require.True(t, next)
	got, err := s.Peek(context.Background(), "api", "alice")
	require.NoError(t, err)
	assert.Equal(t, int64(1), got[0].Decision.Remaining)
	w, _ = do(s, "GET", "/api/items")
	assert.Equal(t, 401, w.Code, "no user: a key error, never a pass")
}

// Requests racing reloads each see one document whole.
func TestReloadIsAtomicUnderRequests(t *testing.T) {
	s, _ := newSet(t, apiRules)
	other := strings.Replace(strings.Replace(apiRules, "name: api\n", "name: api2\n", 1), "replaces: [api]", "replaces: [api2]", 1)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				w, _ := do(s, "POST", "/api/items", "X-API-Key", "k", "X-Plan", "paid")
				p := w.Header().Get(httplimit.HeaderRateLimitPolicy)
				if p != "" && !strings.HasPrefix(p, `"api/paid"`) && !strings.HasPrefix(p, `"api2/paid"`) {
					t.Errorf("a mixed or unknown field: %q", p)
				}
			}
		}()
	}
	for i := range 50 {
		src := apiRules
		if i%2 == 0 {
			src = other
		}
		src = strings.Replace(src, "version: 1\n", "version: "+strconv.Itoa(i+2)+"\n", 1) // new rules, new version
		require.NoError(t, s.Load([]byte(src), "rules.yaml"))
	}
	close(stop)
	wg.Wait()
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(good, []byte(apiRules), 0o644))
	doc, err := ReadFile(good)
	require.NoError(t, err)
	assert.Len(t, doc.Policies, 4)
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("schema: 1\nversion: 1\npolicies: []\n"), 0o644))
	_, err = ReadFile(bad)
	assert.ErrorIs(t, err, ErrInvalidRules)
	assert.Contains(t, err.Error(), bad+":")
	for _, path := range []string{filepath.Join(dir, "missing.yaml"), dir} {
		_, err = ReadFile(path)
		assert.ErrorIs(t, err, ErrFileUnreadable, path)
	}
}

// A reload compiles only the policies that changed: the others keep what was
// compiled before, even when they moved in the file.
func TestReloadRecompilesOnlyWhatChanged(t *testing.T) {
	s, _ := newSet(t, apiRules)
	before := s.cur.Load().policies
	moved := strings.Replace(apiRules, "version: 1\n", "version: 2\n# a comment that moves every policy down a line\n", 1)
	next := strings.Replace(moved, "limits: [3/m]", "limits: [4/m]", 1)
	require.NoError(t, s.Load([]byte(next), "rules.yaml"))
	after := s.cur.Load().policies
	assert.NotSame(t, before["login"].policy, after["login"].policy, "login changed")
	for _, name := range []string{"api", "writes"} {
		assert.Same(t, before[name].policy, after[name].policy, "%s did not change", name)
		assert.NotEqual(t, before[name].doc.Pos, after[name].doc.Pos, "%s moved", name)
	}
	w, _ := do(s, "POST", "/login")
	assert.Equal(t, `"login";q=4;w=60`, w.Header().Get(httplimit.HeaderRateLimitPolicy))
}
