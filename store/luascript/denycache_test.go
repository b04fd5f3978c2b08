package luascript

import (
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// checked returns req's limits' encodings, as Take hands them to the cache.
func checked(t *testing.T, req core.TakeRequest) []*encodedLimit {
	t.Helper()
	encs, err := checkRequest(req, true, false, -1, nil)
	must.NoError(t, err)
	return encs
}

func TestDenyCache(t *testing.T) {
	c := newDenyCache(100)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1, Now: at}
	encs := checked(t, req)
	denied := core.Decision{Limit: req.Limits[0], RetryAfter: time.Second, ResetAfter: 2 * time.Second}

	c.put(c.probe(req, encs), req, at, core.Decision{Allowed: true}, 0)
	_, ok := c.get(c.probe(req, encs), req, at)
	expect.False(t, ok, "admissions are never cached")
	c.put(c.probe(req, encs), req, at, core.Decision{Exceeds: true, RetryAfter: time.Second}, 0)
	_, ok = c.get(c.probe(req, encs), req, at)
	expect.False(t, ok, "never-fits denials are never cached")

	c.put(c.probe(req, encs), req, at, denied, 0)
	d, ok := c.get(c.probe(req, encs), req, at.Add(400*time.Millisecond))
	must.True(t, ok)
	expect.False(t, d.Allowed)
	expect.Equal(t, 600*time.Millisecond, d.RetryAfter, "counted down to now")
	expect.Equal(t, 1600*time.Millisecond, d.ResetAfter)

	_, ok = c.get(c.probe(req, encs), req, at.Add(time.Second))
	expect.False(t, ok, "expires at the RetryAfter Redis gave")

	other := req
	other.Cost = 2
	_, ok = c.get(c.probe(other, encs), other, at)
	expect.False(t, ok, "another cost is another request")
	other = req
	other.Key = "k2"
	_, ok = c.get(c.probe(other, encs), other, at)
	expect.False(t, ok, "another key")
	other = req
	other.Limits = []core.Limit{core.PerSecond(1).WithBurst(2)}
	_, ok = c.get(c.probe(other, checked(t, other)), other, at)
	expect.False(t, ok, "other limits")
	other = req
	other.Limits = []core.Limit{core.PerSecond(1).Named("renamed")}
	d, ok = c.get(c.probe(other, checked(t, other)), other, at)
	expect.True(t, ok, "a limit's name is not part of its state")
	expect.Equal(t, other.Limits[0], d.Limit, "the decision names the request's limit")

	c.drop(keyAddress(req.Namespace, req.Key))
	_, ok = c.get(c.probe(req, encs), req, at)
	expect.False(t, ok, "forgotten")
	_, ok = c.get(c.probe(req, encs), req, time.UnixMicro(-1))
	expect.False(t, ok, "a time out of range finds nothing")
}

// A penalty box's refusal whose quota outlasts its block is kept only while
// the block runs: after it Redis decides again (and starts the next block
// when the quota still refuses), and while it runs every cost is refused
// with the quota's wait counted down.
func TestDenyCacheKeepsABlockOnlyWhileItRuns(t *testing.T) {
	c := newDenyCache(100)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	req := core.TakeRequest{Key: "k", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerHour(2)}, Cost: 1, Now: at, BlockFor: time.Minute}
	encs := checked(t, req)
	started := core.Decision{Limit: req.Limits[0], BlockStarted: true, RetryAfter: time.Hour, ResetAfter: time.Hour}
	c.put(c.probe(req, encs), req, at, started, time.Minute)

	bigger := req
	bigger.Cost = 2
	d, ok := c.get(c.probe(bigger, encs), bigger, at.Add(30*time.Second))
	must.True(t, ok, "a running block refuses every cost")
	expect.True(t, d.Blocked)
	expect.Equal(t, time.Hour-30*time.Second, d.RetryAfter, "the quota's wait, counted down")
	_, ok = c.get(c.probe(req, encs), req, at.Add(time.Minute))
	expect.False(t, ok, "the block is over: Redis decides again")
}
