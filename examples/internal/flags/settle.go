package flags

import (
	"flag"
	"net/http"
	"strconv"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// TokensPath answers GET with 200 and the response header CostHeader: n,
// the query parameter n, a whole number from 0 to MaxTokens (400 for
// anything else): a stand-in for an endpoint whose cost is known only once
// it answered (an LLM's tokens), for -settle-header to settle.
const TokensPath = "/tokens"

// MaxTokens is the largest n TokensPath takes.
const MaxTokens = 1_000_000

// CostHeader is the response header in which TokensPath names its cost.
const CostHeader = "X-Cost"

// tokensRoute is the route of TokensPath.
func tokensRoute() Route {
	return Route{http.MethodGet, TokensPath, tokens}
}

// tokens answers TokensPath: 200 with CostHeader n, or 400 for a bad n.
func tokens(r RouteRequest) Reply {
	v := r.Query("n")
	n, err := httplimit.ParseCost(v)
	if err != nil || n > MaxTokens {
		return Reply{Status: http.StatusBadRequest, Body: "n must be a whole number from 0 to " + strconv.Itoa(MaxTokens) + "\n"}
	}
	s := strconv.FormatInt(n, 10)
	return Reply{Status: http.StatusOK, Body: s + " tokens\n", Header: map[string]string{CostHeader: s}}
}

// defineSettle declares -settle-header on fs.
func (r *rawFlags) defineSettle(fs *flag.FlagSet) {
	fs.StringVar(&r.settleHeader, "settle-header", "", "settle each request's cost after the response: it reserves 1, and the response's\nheader `NAME` (e.g. "+CostHeader+", which GET "+TokensPath+"?n=K sets to K) names the real cost, given\nback or charged when the response is done; with -rules, in every policy")
}

// parseSettle sets c.SettleHeader from -settle-header, a header name, which
// goes with -count-only-failures in no policy: both settle the cost.
func (c *Config) parseSettle(r *rawFlags) error {
	if r.settleHeader == "" {
		return nil
	}
	if len(r.settleHeader) > 256 || !keyfuncs.ValidHeaderName(r.settleHeader) {
		return usageErr("-settle-header %q: want a header name, e.g. %s", r.settleHeader, CostHeader)
	}
	if r.countOnlyFailures {
		return usageErr("-settle-header and -count-only-failures both settle a request's cost after its response: pick one")
	}
	if c.RulesSource == NoRules && c.Algorithm == core.SlidingLog {
		return usageErr("-settle-header with -algorithm sliding-log: the sliding log cannot charge a cost after the response; use sliding-window or gcra")
	}
	c.SettleHeader = http.CanonicalHeaderKey(r.settleHeader)
	return nil
}

// settleOptions is the option of -settle-header: none without it.
func (c *Config) settleOptions() []httplimit.Option {
	if c.SettleHeader == "" {
		return nil
	}
	return []httplimit.Option{httplimit.WithSettleHeader(c.SettleHeader)}
}
