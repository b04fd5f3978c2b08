package httplimit

import (
	"bytes"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
)

// A burst of store errors that stops is still counted in full: the lines
// left out are reported when the interval ends, not only by a next line
// that may never come. Each line covers its own errors, so the lines add up
// to every request that failed open. The breaker is off, so that every
// request asks the store.
func TestBurstOfErrorsIsCountedWhenTheIntervalEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, buf := lockedLogBuffer()
		boom := errors.New("i/o timeout")
		p, _ := newPolicy(t, &mapStore{fail: boom}, core.GCRA, core.PerMinute(1), []core.Option{core.WithoutBreaker()}, WithLogger(logger))
		for range 34 {
			_, _, next := serve(p, fakereq.New("192.0.2.1:1"))
			must.True(t, next, "fail open")
		}
		must.Len(t, buf.lines(), 1, "one line at once")
		time.Sleep(LogInterval)
		synctest.Wait()
		got := buf.lines()
		must.Len(t, got, 2, "the interval's end reports the rest")
		expect.Contains(t, got[0], "suppressed=0")
		expect.Contains(t, got[1], "lines left out at the interval's end")
		expect.Contains(t, got[1], "suppressed=33")

		// A new burst after that line: again one line now and one at its end.
		time.Sleep(LogInterval)
		for range 5 {
			serve(p, fakereq.New("192.0.2.1:1"))
		}
		time.Sleep(LogInterval)
		synctest.Wait()
		got = buf.lines()
		must.Len(t, got, 4)
		expect.Contains(t, got[2], "suppressed=0")
		expect.Contains(t, got[3], "suppressed=4")
	})
}

// A line written at the interval's end by a new error carries the count
// itself, and no second line repeats it.
func TestNextLineCarriesTheCountInstead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, buf := lockedLogBuffer()
		p, _ := newPolicy(t, &mapStore{fail: errors.New("down")}, core.GCRA, core.PerMinute(1), []core.Option{core.WithoutBreaker()}, WithLogger(logger))
		for range 3 {
			serve(p, fakereq.New("192.0.2.1:1"))
		}
		time.Sleep(LogInterval - time.Millisecond)
		p.logs.storeErr.next.Store(0) // the interval ends now, before the scheduled report
		serve(p, fakereq.New("192.0.2.1:1"))
		time.Sleep(time.Second)
		synctest.Wait()
		got := buf.lines()
		must.Len(t, got, 2)
		expect.Contains(t, got[1], "suppressed=2")
		expect.NotContains(t, got[1], "interval's end")
	})
}

// lockedLog is a log buffer that the timer goroutine of a scheduled report
// and the test may use at once.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return lines(&l.buf)
}

// lockedLogBuffer is logBuffer on a lockedLog.
func lockedLogBuffer() (*slog.Logger, *lockedLog) {
	l := &lockedLog{}
	h := slog.NewTextHandler(l, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	return slog.New(h), l
}
