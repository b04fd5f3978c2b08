package flags

import (
	"bytes"
	"errors"
	"flag"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSettleHeader(t *testing.T) {
	c, err := Parse("ex", []string{"-settle-header", "x-cost"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, "X-Cost", c.SettleHeader)
	assert.Contains(t, c.String(), "settling each request's cost to its response's X-Cost")
	assert.Len(t, c.settleOptions(), 1)
	c, err = Parse("ex", nil, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Empty(t, c.SettleHeader)
	assert.Empty(t, c.settleOptions())

	for name, args := range map[string][]string{
		"a space":                {"-settle-header", "X Cost"},
		"a colon":                {"-settle-header", "X-Cost:"},
		"a line break":           {"-settle-header", "X-Cost\r\n"},
		"with -count-only-fails": {"-settle-header", "X-Cost", "-count-only-failures"},
		"with the sliding log":   {"-settle-header", "X-Cost", "-algorithm", "sliding-log"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("ex", args, &bytes.Buffer{})
			require.Error(t, err)
			assert.ErrorIs(t, err, errUsage)
			assert.Contains(t, err.Error(), "-settle-header")
		})
	}
}

func TestHelpNamesTheTokensRouteAndTheFlag(t *testing.T) {
	var out bytes.Buffer
	_, err := Parse("ex", []string{"-h"}, &out)
	require.True(t, errors.Is(err, flag.ErrHelp))
	assert.Contains(t, out.String(), "GET  /tokens?n=K")
	assert.Contains(t, out.String(), "-settle-header NAME")
}

// routeReq is a RouteRequest with only a query.
type routeReq map[string]string

func (q routeReq) Header(string) string     { return "" }
func (q routeReq) FormValue(string) string  { return "" }
func (q routeReq) PathValue(string) string  { return "" }
func (q routeReq) Query(name string) string { return q[name] }

func TestTokensRoute(t *testing.T) {
	for n, want := range map[string]int{"0": 200, "1": 200, "1000000": 200, "007": 200,
		"1000001": 400, "-1": 400, "NaN": 400, "1e999": 400, "0x10": 400, "": 400, " 1": 400, "9223372036854775808": 400} {
		r := tokens(routeReq{"n": n})
		assert.Equal(t, want, r.Status, "n=%q", n)
		if want == http.StatusOK {
			assert.NotEmpty(t, r.Header[CostHeader], "n=%q", n)
		} else {
			assert.Empty(t, r.Header, "n=%q", n)
		}
	}
	assert.Equal(t, "7", tokens(routeReq{"n": "007"}).Header[CostHeader])
	for _, rules := range []RulesSource{NoRules, RulesFile} {
		c := &Config{RulesSource: rules}
		found := false
		for _, r := range c.Routes() {
			found = found || (r.Method == http.MethodGet && r.Pattern == TokensPath)
		}
		assert.True(t, found, "every server answers %s", TokensPath)
	}
}
