package flags

import (
	"flag"
	"net/http"
	"strconv"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// SlowPath answers GET with 200 after ms milliseconds, the query parameter
// ms, a whole number from 0 to MaxSlowMillis (400 for anything else): a
// request that runs a while, for -concurrency to count.
const SlowPath = "/slow"

// MaxSlowMillis is the largest ms SlowPath takes: ten seconds.
const MaxSlowMillis = 10_000

// slowRoute is the route of SlowPath.
func slowRoute() Route {
	return Route{http.MethodGet, SlowPath, slow}
}

// slow answers SlowPath: 200 after ms milliseconds, or 400 for a bad ms.
func slow(r RouteRequest) Reply {
	ms, err := httplimit.ParseCost(r.Query("ms"))
	if err != nil || ms > MaxSlowMillis {
		return Reply{Status: http.StatusBadRequest, Body: "ms must be a whole number from 0 to " + strconv.Itoa(MaxSlowMillis) + "\n"}
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	return Reply{Status: http.StatusOK, Body: "slept " + strconv.FormatInt(ms, 10) + " ms\n"}
}

// defineInFlight declares -concurrency on fs.
func (r *rawFlags) defineInFlight(fs *flag.FlagSet) {
	fs.Int64Var(&r.concurrency, "concurrency", 0, "at most `N` requests of one client (its key) running at once, beside -limit, on every\nserver sharing the -store; one more gets 429 with Retry-After: 1 and X-Concurrency-Limit\n(try GET "+SlowPath+"?ms=5000 twice with -concurrency 1); 0: no such limit")
}

// parseInFlight sets c.Concurrency from -concurrency: 1 to
// core.MaxInFlightSlots, and not with -rules (a policy's concurrency field
// says it there).
func (c *Config) parseInFlight(r *rawFlags) error {
	if !r.set["concurrency"] || r.concurrency == 0 {
		return nil
	}
	if c.RulesSource != NoRules {
		return usageErr("-concurrency does not go with -rules: give a policy concurrency: N in the document")
	}
	if err := core.Concurrent(r.concurrency).Validate(); err != nil {
		return usageErr("-concurrency %d: %v", r.concurrency, err)
	}
	c.Concurrency = r.concurrency
	return nil
}

// inflightOptions is the limiter option of -concurrency: none without it.
func (c *Config) inflightOptions() []core.Option {
	if c.Concurrency == 0 {
		return nil
	}
	return []core.Option{core.WithInFlight(core.Concurrent(c.Concurrency))}
}
