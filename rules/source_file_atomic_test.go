package rules

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flipFileDoc is a document of version v whose policies all match every request
// and never deny: those of document A for an odd v, of document B for an
// even one.
func flipFileDoc(v int64) (doc []byte, names []string) {
	names = []string{"a-first", "a-second"}
	if v%2 == 0 {
		names = []string{"b-first", "b-second", "b-third"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "schema: 1\nversion: %d\npolicies:\n", v)
	for _, n := range names {
		fmt.Fprintf(&b, "  - {name: %s, limits: [1000000/s]}\n", n)
	}
	return []byte(b.String()), names
}

// policyNameRE reads the policy names of a RateLimit-Policy field.
var policyNameRE = regexp.MustCompile(`"([^"]+)"`)

// appliedPolicyNames runs one request through set and returns the names its
// RateLimit-Policy field lists, sorted.
func appliedPolicyNames(set *Set) []string {
	req := httptest.NewRequest(http.MethodGet, "/api/items", nil)
	rec := httptest.NewRecorder()
	if pass, ok := set.Handle(req.Context(), stdhttp.View(req), rec); ok {
		pass.Finish(http.StatusOK)
	}
	var names []string
	for _, m := range policyNameRE.FindAllStringSubmatch(rec.Header().Get("RateLimit-Policy"), -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return names
}

// TestWatchFileReloadIsAtomic flips the file between two documents while
// goroutines send requests through the Set: every response names the
// policies of one document, never a mix, and after each load the new
// document decides.
func TestWatchFileReloadIsAtomic(t *testing.T) {
	const flips, senders = 40, 4
	first, _ := flipFileDoc(1)
	path := writeRulesFile(t, t.TempDir(), first)
	set, reports := newFileTestSet(t, first)
	startFileWatcher(t, set, reports, path, 1)

	var requests, mixed atomic.Int64
	var badMu sync.Mutex
	var bad []string
	_, namesA := flipFileDoc(1)
	_, namesB := flipFileDoc(2)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				got := appliedPolicyNames(set)
				requests.Add(1)
				if !slices.Equal(namesA, got) && !slices.Equal(namesB, got) {
					mixed.Add(1)
					badMu.Lock()
					bad = append(bad, strings.Join(got, ","))
					badMu.Unlock()
				}
			}
		})
	}
	for v := int64(2); v <= flips+1; v++ {
		doc, names := flipFileDoc(v)
		renameOverFile(t, path, doc)
		assert.Zero(t, awaitFileLoad(t, set, reports, v-1, v))
		assert.Equal(t, names, appliedPolicyNames(set), "version %d decides once loaded", v)
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, mixed.Load(), "responses naming policies of both documents: %v", bad)
	assert.Positive(t, requests.Load())
	t.Logf("%d requests during %d reloads", requests.Load(), flips)
}

// TestWatchFileConcurrentReloads calls Reload from several goroutines while
// the watcher loads the changes it hears: every call loads a whole document,
// and the last one written is in force at the end.
func TestWatchFileConcurrentReloads(t *testing.T) {
	path := writeRulesFile(t, t.TempDir(), fileDocVersion(1))
	set, reports := newFileTestSet(t, fileDocVersion(1))
	w := startFileWatcher(t, set, reports, path, 1)
	var wg sync.WaitGroup
	errs := make(chan error, 4*25)
	for range 4 {
		wg.Go(func() {
			for range 25 {
				errs <- w.Reload()
			}
		})
	}
	for v := int64(2); v <= 30; v++ {
		renameOverFile(t, path, fileDocVersion(v))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, w.Reload())
	assert.Equal(t, int64(30), set.Version())
	require.NoError(t, w.Close())
}
