package prommetrics_test

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	prommetrics "github.com/ratewarden/ratewarden/metrics/prometheus"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A gauge of the requests running under each policy's in-flight limit, and
// a count of the slots lost to an expired lease, read at each scrape.
func ExampleRegisterInFlight() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(100).Named("api"), core.WithInFlight(core.Concurrent(5)))
	if err != nil {
		panic(err)
	}
	p, err := httplimit.New(lim)
	if err != nil {
		panic(err)
	}
	reg := prometheus.NewRegistry()
	_, err = prommetrics.RegisterInFlight(reg, func() []*httplimit.Policy { return []*httplimit.Policy{p} })
	if err != nil {
		panic(err)
	}
	slot, _, err := lim.Acquire(context.Background(), "alice")
	if err != nil {
		panic(err)
	}
	defer slot.Release(context.Background())
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetGauge().GetValue()+m.GetCounter().GetValue())
		}
	}
	// Output:
	// ratewarden_inflight_expired_total api 0
	// ratewarden_inflight_slots api 1
}
