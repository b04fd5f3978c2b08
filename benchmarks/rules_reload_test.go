package benchmarks

// Reloading rules: the targets are a reload of 1,000 policies in
// under 50 ms, and requests that never stall while reloads run: the p99 of a
// decision while another goroutine reloads in a loop stays within 2x of the
// p99 with no reload.
//
//	go test -run '^$' -bench '^BenchmarkRulesReload' -benchmem ./benchmarks
//
// BenchmarkRulesReload1000 is one rules.Set.Load of a 1,000-policy YAML
// document (parse, validate, compile, swap). BenchmarkRulesReloadStall
// decides requests through the Set, timing each, with no reload, with a
// goroutine that reloads the 1,000-policy document ten times a second, and
// with one that reloads it back to back; it reports the p50 and p99 of a
// decision and the reloads done.

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// reloadDocument returns a rules document of n policies (n/4 resources, each
// with a list, a read, a write and a prefix policy) at version, each limit
// scaled by scale (1: a realistic API's; large: limits no benchmark reaches).
func reloadDocument(n, version int, scale int64) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "schema: 1\nversion: %d\npolicies:\n", version)
	for i := range n / 4 {
		base := fmt.Sprintf("/api/v1/r%d", i)
		fmt.Fprintf(&b, "  - {name: r%d-list, match: {paths: [%s], methods: [GET]}, limits: [%d/m]}\n", i, base, 100*scale)
		fmt.Fprintf(&b, "  - {name: r%d-read, match: {paths: [\"%s/{id}\"], methods: [GET, HEAD]}, limits: [%d/s, %d/h]}\n", i, base, 10*scale, 1000*scale)
		fmt.Fprintf(&b, "  - {name: r%d-write, match: {paths: [\"%s/{id}\"], methods: [PUT, DELETE]}, key: {header: X-API-Key}, limits: [%d/s]}\n", i, base, 5*scale)
		fmt.Fprintf(&b, "  - {name: r%d, match: {prefixes: [%s]}, algorithm: sliding-window, limits: [%d/m], dry_run: true}\n", i, base, 1000*scale)
	}
	return []byte(b.String())
}

// newReloadSet returns a Set of doc on a fresh memory store.
func newReloadSet(b *testing.B, doc []byte) *rules.Set {
	b.Helper()
	st, err := memory.New()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	d, err := rules.Parse(doc, "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	s, err := rules.New(st, d)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func BenchmarkRulesReload1000(b *testing.B) {
	docs := [2][]byte{reloadDocument(1000, 1, 1), reloadDocument(1000, 2, 1)}
	s := newReloadSet(b, docs[0])
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := s.Load(docs[(i+1)%2], "bench.yaml", rules.AllowDowngrade()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/reload")
}

func BenchmarkRulesReloadStall(b *testing.B) {
	rows := []struct {
		name  string
		every time.Duration // between reloads; -1: none, 0: back to back
	}{{"steady", -1}, {"reloading-10-per-s", 100 * time.Millisecond}, {"reloading", 0}}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) { benchDecideWhileReloading(b, row.every) })
	}
}

// benchDecideWhileReloading times each of b.N decisions, one per request of
// a mix, while a goroutine reloads every interval (back to back for 0, never
// for a negative one). The limits are out of reach, so every decision admits.
func benchDecideWhileReloading(b *testing.B, every time.Duration) {
	docs := [2][]byte{reloadDocument(1000, 1, 10_000), reloadDocument(1000, 2, 10_000)}
	s := newReloadSet(b, docs[0])
	views := reloadRequests()
	w := httptest.NewRecorder()
	var stop atomic.Bool
	var reloads atomic.Int64
	var wg sync.WaitGroup
	if every >= 0 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				if err := s.Load(docs[i%2], "bench.yaml", rules.AllowDowngrade()); err != nil {
					panic(err)
				}
				reloads.Add(1)
				time.Sleep(every) // pacing the load, not moving a clock
			}
		})
	}
	defer wg.Wait()        // a failing row must not leave the reloads running
	defer stop.Store(true) // into the rows after it
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		r := views[i%len(views)]
		t0 := time.Now()
		if _, next := s.Handle(r.Context(), r, w); !next {
			b.Fatal("a request was denied: the benchmark's limits are too low")
		}
		lat[i] = time.Since(t0)
		clear(w.Header())
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100]), "p99-ns")
	if every >= 0 {
		b.ReportMetric(float64(reloads.Load()), "reloads")
	}
}

// reloadRequests are requests that match policies of reloadDocument, each
// from its own client, so that none is ever denied.
func reloadRequests() []keyfuncs.Request {
	var out []keyfuncs.Request
	for i := range 1024 {
		r := httptest.NewRequest("GET", fmt.Sprintf("/api/v1/r%d/%d", i%250, i), nil)
		r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:1", i>>16&255, i>>8&255, i&255)
		r.Header.Set("X-API-Key", fmt.Sprintf("key-%d", i))
		out = append(out, stdhttp.View(r))
	}
	return out
}
