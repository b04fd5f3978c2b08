package flags

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

var errStoreDown = errors.New("store down")

// An outage writes one line per interval, counting the errors left out; key
// errors and events without an error write nothing.
func TestErrorLog(t *testing.T) {
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	var out bytes.Buffer
	l := newErrorLog(&out, "open", clk)
	failed := httplimit.Event{Outcome: httplimit.OutcomeFailedOpen, Err: errStoreDown}

	l.Observe(httplimit.Event{Outcome: httplimit.OutcomeAllowed})
	l.Observe(httplimit.Event{Outcome: httplimit.OutcomeKeyError, Err: keyfuncs.ErrKey})
	assert.Empty(t, out.String(), "nothing to write")

	for range 100 {
		l.Observe(failed)
	}
	clk.Advance(httplimit.LogInterval - time.Millisecond)
	l.Observe(failed)
	clk.Advance(time.Millisecond)
	l.Observe(failed)
	assert.Equal(t, []string{
		"rate limiter error (failing open): store down",
		"rate limiter error (failing open): store down (and 100 more since the last line)",
	}, strings.Split(strings.TrimSpace(out.String()), "\n"))
}

// Many goroutines failing at once write one line between them.
func TestErrorLogConcurrent(t *testing.T) {
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	var out lockedBuffer
	l := newErrorLog(&out, "closed", clk)
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
