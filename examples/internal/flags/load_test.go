package flags

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// The exactness-under-load run through two example servers (two
// setups, each with its own cluster client, built just before the burst, so
// the burst meets their start-up) sharing a 3-master Redis Cluster: 64
// clients send 5 requests each at once, from one IP. The limit is 100 per
// hour: 100 per minute would rightly admit one more request per 600 ms the run
// takes. Requests with deadlines that run out stand for a loaded machine's
// store timeouts.
const (
	serverClients  = 64
	serverRequests = 5
	serverLimit    = 100
)

// Every admission beyond the limit is a fail-open that the metrics count and
// the error log reports; failing closed never admits more than the limit.
func TestServersExactUnderLoad(t *testing.T) {
	cluster := "redis-cluster://" + strings.Join(redistest.StartCluster(t), ",")
	tests := []struct {
		name      string
		fail      string
		deadlines []time.Duration // request i waits deadlines[i%len]
	}{
		{"fail open, deadlines hold", "open", []time.Duration{30 * time.Second}},
		{"fail closed, deadlines hold", "closed", []time.Duration{30 * time.Second}},
		{"fail open, deadlines run out", "open", requestDeadlines},
		{"fail closed, deadlines run out", "closed", requestDeadlines},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A key of our own (the X-Client header), so runs against a shared
			// cluster do not collide.
			key := randomValue(t)
			servers := make([]*loadServer, 2)
			for i := range servers {
				servers[i] = startLoadServer(t, cluster, tt.fail)
			}
			statuses := sendBurst(servers, key, tt.deadlines)
			var seen counts
			for _, s := range servers {
				seen.add(s.close(t))
			}
			t.Logf("statuses %v; metrics and log: %+v", statuses, seen)

			admitted := statuses[http.StatusOK]
			require.Equal(t, serverClients*serverRequests, admitted+statuses[http.StatusTooManyRequests]+statuses[http.StatusServiceUnavailable])
			assert.Equal(t, seen.allowed+seen.failedOpen, admitted, "every admission is a decision or a reported fail-open")
			assert.LessOrEqual(t, admitted, serverLimit+seen.failedOpen, "admitted beyond the limit without a reported fail-open")
			assert.Equal(t, seen.failedClosed, statuses[http.StatusServiceUnavailable])
			assert.Equal(t, seen.failedOpen+seen.failedClosed, seen.logged, "the error log accounts for every failure")
			if tt.fail == "closed" {
				assert.Zero(t, seen.failedOpen)
				assert.LessOrEqual(t, admitted, serverLimit, "failing closed admitted beyond the limit")
			}
			assert.LessOrEqual(t, seen.allowed, serverLimit, "the store admitted beyond the limit")
			// Every unit of the quota went to an admission the caller saw or
			// to a call that failed (a store call that outlasted its deadline
			// may have spent before the caller gave up on it).
			assert.GreaterOrEqual(t, seen.allowed+seen.failedOpen+seen.failedClosed, serverLimit, "quota left unspent")
			if len(tt.deadlines) == 1 {
				// A loaded machine may still see a store call outlast the
				// policy's timeout (100 ms); with none, the count is exact.
				if seen.logged == 0 {
					assert.Equal(t, serverLimit, admitted, "exactly the limit admitted")
				}
			} else {
				assert.Positive(t, seen.logged, "the deadlines ran out for some requests")
			}
		})
	}
}

// requestDeadlines mixes deadlines that end before the store call is sent,
// while it is in flight and after it returns.
var requestDeadlines = []time.Duration{
	0, 100 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 3 * time.Millisecond,
	30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second,
}

// loadServer is one example server's setup and handler; its error log goes
// to log.
type loadServer struct {
	setup   *Setup
	handler http.Handler
	log     *lockedBuffer
}

func startLoadServer(t *testing.T, cluster, fail string) *loadServer {
	t.Helper()
	c, err := Parse("ex", []string{"-store", cluster, "-limit", strconv.Itoa(serverLimit) + "/h",
		"-key", "header:X-Client", "-fail", fail, "-metrics"}, &bytes.Buffer{})
	require.NoError(t, err)
	s := &loadServer{log: &lockedBuffer{}}
	c.ErrorLog = s.log
	s.setup, err = c.Build()
	require.NoError(t, err)
	mw, err := stdhttp.New(s.setup.Limiter, s.setup.Options...)
	require.NoError(t, err)
	s.handler = mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	return s
}

// counts are what the servers' metrics and error logs say.
type counts struct {
	allowed, failedOpen, failedClosed, logged int
}

func (c *counts) add(o counts) {
	c.allowed += o.allowed
	c.failedOpen += o.failedOpen
	c.failedClosed += o.failedClosed
	c.logged += o.logged
}

// close reads the server's decision counters, closes its setup (which writes
// what the error log left out) and adds up the errors its log reports.
func (s *loadServer) close(t *testing.T) counts {
	t.Helper()
	rec := httptest.NewRecorder()
	s.setup.Metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, MetricsPath, nil))
	outcomes := map[string]int{}
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), `ratewarden_decisions_total{outcome="`)
		if !ok {
			continue
		}
		outcome, rest, _ := strings.Cut(rest, `"`)
		_, value, _ := strings.Cut(rest, "} ")
		outcomes[outcome] = atoi(t, value)
	}
	require.NoError(t, s.setup.Close())
	return counts{
		allowed:      outcomes["allowed"],
		failedOpen:   outcomes["failed_open"],
		failedClosed: outcomes["failed_closed"],
		logged:       accounted(t, logLines(s.log.String())),
	}
}

// sendBurst has serverClients goroutines send serverRequests requests each
// for key, alternating between the servers, request i with a deadline of
// deadlines[i%len(deadlines)], and counts the statuses.
func sendBurst(servers []*loadServer, key string, deadlines []time.Duration) map[int]int {
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for c := range serverClients {
		wg.Go(func() {
			for i := range serverRequests {
				n := c*serverRequests + i
				ctx, cancel := context.WithTimeout(context.Background(), deadlines[n%len(deadlines)])
				req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
				req.Header.Set("X-Client", key)
				rec := httptest.NewRecorder()
				servers[n%len(servers)].handler.ServeHTTP(rec, req)
				cancel()
				mu.Lock()
				statuses[rec.Code]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return statuses
}
