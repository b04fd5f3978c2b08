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
// decides requests through the Set, timing each, with and without a
// goroutine that reloads the 1,000-policy document back to back; it reports
// the p50 and p99 of a decision and, in the reloading row, the reloads done.

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
// with a list, a read, a write and a prefix policy) at version.
func reloadDocument(n int, version int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "schema: 1\nversion: %d\npolicies:\n", version)
	for i := range n / 4 {
		base := fmt.Sprintf("/api/v1/r%d", i)
		fmt.Fprintf(&b, "  - {name: r%d-list, match: {paths: [%s], methods: [GET]}, limits: [100/m]}\n", i, base)
		fmt.Fprintf(&b, "  - {name: r%d-read, match: {paths: [\"%s/{id}\"], methods: [GET, HEAD]}, limits: [10/s, 1000/h]}\n", i, base)
		fmt.Fprintf(&b, "  - {name: r%d-write, match: {paths: [\"%s/{id}\"], methods: [PUT, DELETE]}, key: {header: X-API-Key}, limits: [5/s]}\n", i, base)
		fmt.Fprintf(&b, "  - {name: r%d, match: {prefixes: [%s]}, algorithm: sliding-window, limits: [1000/m], dry_run: true}\n", i, base)
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
	docs := [2][]byte{reloadDocument(1000, 1), reloadDocument(1000, 2)}
	s := newReloadSet(b, docs[0])
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := s.Load(docs[(i+1)%2], "bench.yaml"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/reload")
}

func BenchmarkRulesReloadStall(b *testing.B) {
	for _, reloading := range []bool{false, true} {
		name := "steady"
		if reloading {
			name = "reloading"
		}
		b.Run(name, func(b *testing.B) { benchDecideWhileReloading(b, reloading) })
	}
}

// benchDecideWhileReloading times each of b.N decisions, one per request of
// a mix, while a goroutine reloads back to back when reloading is set.
func benchDecideWhileReloading(b *testing.B, reloading bool) {
	docs := [2][]byte{reloadDocument(1000, 1), reloadDocument(1000, 2)}
	s := newReloadSet(b, docs[0])
	views := reloadRequests()
	w := httptest.NewRecorder()
	var stop atomic.Bool
	var reloads atomic.Int64
	var wg sync.WaitGroup
	if reloading {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				if err := s.Load(docs[i%2], "bench.yaml"); err != nil {
					panic(err)
				}
				reloads.Add(1)
			}
		})
	}
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
	if reloading {
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
