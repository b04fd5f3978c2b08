package rules_test

import (
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

// The rule-driven conformance table through stdhttp (ginmw, echomw and
// fibermw run it in their own modules; the root module, stdhttp's, does not
// require this one).
func TestConformanceWithRulesOnNetHTTP(t *testing.T) {
	app := func(_ *testing.T, rs httplimit.Handler, h adaptertest.Handler) (*adaptertest.Server, error) {
		mw, err := stdhttp.Middleware(rs)
		if err != nil {
			return nil, err
		}
		return adaptertest.NetHTTPApp(mw, h), nil
	}
	adaptertest.RunRules(t, adaptertest.Adapter{Middleware: app}, func(doc []byte, st core.Store, clk core.Clock) (httplimit.Handler, error) {
		d, err := rules.Parse(doc, "rules.yaml")
		if err != nil {
			return nil, err
		}
		return rules.New(st, d, rules.WithClock(clk))
	})
}
