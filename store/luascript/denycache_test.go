package luascript_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
)

func TestDenyCache(t *testing.T) {
	c := luascript.NewDenyCache(100)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1, Now: at}
	denied := core.Decision{Limit: req.Limits[0], RetryAfter: time.Second, ResetAfter: 2 * time.Second}

	c.Put(req, at, core.Decision{Allowed: true})
	_, ok := c.Get(req, at)
	assert.False(t, ok, "admissions are never cached")
	c.Put(req, at, core.Decision{Exceeds: true, RetryAfter: time.Second})
	_, ok = c.Get(req, at)
	assert.False(t, ok, "never-fits denials are never cached")

	c.Put(req, at, denied)
	d, ok := c.Get(req, at.Add(400*time.Millisecond))
	require.True(t, ok)
	assert.False(t, d.Allowed)
	assert.Equal(t, 600*time.Millisecond, d.RetryAfter, "counted down to now")
	assert.Equal(t, 1600*time.Millisecond, d.ResetAfter)

	_, ok = c.Get(req, at.Add(time.Second))
	assert.False(t, ok, "expires at the RetryAfter Redis gave")

	other := req
	other.Cost = 2
	_, ok = c.Get(other, at)
	assert.False(t, ok, "another cost is another request")
	other = req
	other.Key = "k2"
	_, ok = c.Get(other, at)
	assert.False(t, ok, "another key")

	c.Forget(req)
	_, ok = c.Get(req, at)
	assert.False(t, ok, "forgotten")
}
