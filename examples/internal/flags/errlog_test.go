package flags

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

var errStoreDown = errors.New("store down")

var failedOpen = httplimit.Event{Outcome: httplimit.OutcomeFailedOpen, Err: errStoreDown}

// The error log writes one line per interval at most, and its lines account
// for every error: those left out are counted in a line when the interval
// ends or when the log is closed. Key errors and events without an error
// write nothing. Time is synctest's.
func TestErrorLog(t *testing.T) {
	const interval = httplimit.LogInterval
	tests := []struct {
		name   string
		run    func(l *errorLog) // observes errors and waits
		errors int               // how many errors run observes
		want   []string
	}{
		{"no errors", func(l *errorLog) {
			l.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed})
			l.Observe(httplimit.Event{Outcome: httplimit.OutcomeKeyError, Err: keyfuncs.ErrKey})
			time.Sleep(2 * interval)
		}, 0, nil},
		{"one error", func(l *errorLog) {
			l.Observe(failedOpen)
			time.Sleep(2 * interval)
		}, 1, []string{"rate limiter error (failing open): store down"}},
		{"a burst, counted when the interval ends", func(l *errorLog) {
			for range 100 {
				l.Observe(failedOpen)
			}
			time.Sleep(interval)
		}, 100, []string{
			"rate limiter error (failing open): store down",
			"rate limiter errors (failing open): 99 more since the last line, the last: store down",
		}},
		{"a burst, counted at close", func(l *errorLog) {
			for range 5 {
				l.Observe(failedOpen)
			}
		}, 5, []string{
			"rate limiter error (failing open): store down",
			"rate limiter errors (failing open): 4 more since the last line, the last: store down",
		}},
		{"an outage, an error every 700 ms", func(l *errorLog) {
			for range 25 {
				l.Observe(failedOpen)
				time.Sleep(700 * time.Millisecond)
			}
		}, 25, []string{
			"rate limiter error (failing open): store down",
			"rate limiter errors (failing open): 14 more since the last line, the last: store down",
			"rate limiter errors (failing open): 10 more since the last line, the last: store down",
		}},
		{"an error after the count's interval", func(l *errorLog) {
			l.Observe(failedOpen)
			l.Observe(failedOpen)
			time.Sleep(2*interval + time.Second) // the count is a line: a new interval
			l.Observe(failedOpen)
		}, 3, []string{
			"rate limiter error (failing open): store down",
			"rate limiter errors (failing open): 1 more since the last line, the last: store down",
			"rate limiter error (failing open): store down",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var out bytes.Buffer
				l := newErrorLog(&out, "open")
				tt.run(l)
				require.NoError(t, l.Close())
				synctest.Wait()
				got := logLines(out.String())
				assert.Equal(t, tt.want, got)
				assert.Equal(t, tt.errors, accounted(t, got), "the lines count every error")
			})
		})
	}
}

// After Close (the server is shutting down) no timer is left, and every
// error is written at once.
func TestErrorLogAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		l := newErrorLog(&out, "closed")
		l.Observe(httplimit.Event{Outcome: httplimit.OutcomeFailedClosed, Err: errStoreDown})
		l.Observe(httplimit.Event{Outcome: httplimit.OutcomeFailedClosed, Err: errStoreDown})
		require.NoError(t, l.Close())
		l.Observe(httplimit.Event{Outcome: httplimit.OutcomeFailedClosed, Err: errStoreDown})
		synctest.Wait() // no goroutine or timer left to run
		assert.Equal(t, []string{
			"rate limiter error (failing closed): store down",
			"rate limiter errors (failing closed): 1 more since the last line, the last: store down",
			"rate limiter error (failing closed): store down",
		}, logLines(out.String()))
	})
}

// Many goroutines failing at once write one line between them, and the rest
// are counted when the interval ends.
func TestErrorLogConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		l := newErrorLog(&out, "closed")
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					l.Observe(httplimit.Event{Outcome: httplimit.OutcomeFailedClosed, Err: errStoreDown})
				}
			})
		}
		wg.Wait()
		assert.Equal(t, "rate limiter error (failing closed): store down\n", out.String())
		time.Sleep(httplimit.LogInterval)
		synctest.Wait() // the timer's line, before Close
		got := logLines(out.String())
		assert.Len(t, got, 2)
		assert.Equal(t, 400, accounted(t, got))
		require.NoError(t, l.Close())
	})
}

func logLines(s string) []string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

var (
	andMore  = regexp.MustCompile(`^rate limiter error \(failing \w+\): .*?(?: \(and (\d+) more since the last line\))?$`)
	moreOnly = regexp.MustCompile(`^rate limiter errors \(failing \w+\): (\d+) more since the last line, the last: `)
)

// accounted is the number of errors lines report, as an operator would add
// them up: one per error line plus its "and N more", and N per count line.
func accounted(t *testing.T, lines []string) int {
	t.Helper()
	n := 0
	for _, line := range lines {
		if m := moreOnly.FindStringSubmatch(line); m != nil {
			n += atoi(t, m[1])
			continue
		}
		m := andMore.FindStringSubmatch(line)
		require.NotNil(t, m, "an error log line of an unknown form: %q", line)
		n++
		if m[1] != "" {
			n += atoi(t, m[1])
		}
	}
	return n
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
