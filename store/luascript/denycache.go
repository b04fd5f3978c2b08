package luascript

import (
	"hash/maphash"
	"sync/atomic"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// denyCache remembers recent denials, so that a key being flooded is denied
// locally until its RetryAfter instead of costing Redis a script call per
// request (the package doc says why this never admits more than Redis would).
// It is safe for concurrent use.
//
// It is direct-mapped: a fixed array of slots, each holding the latest denial
// whose identity hashes there, swapped atomically. Memory is bounded by the
// number of slots whatever the keys' length, lookups take no lock, and a
// collision only evicts (the evicted key goes back to Redis).
type denyCache struct {
	seed  maphash.Seed
	mask  uint64
	slots []atomic.Pointer[denial]
}

// denial is one remembered denial; immutable once stored.
type denial struct {
	id    uint64 // seeded hash of namespace, key, algorithm and limits
	cost  int64
	at    time.Time // when the denied call was sent (or the caller's time)
	until time.Time // at + RetryAfter: no identical request fits before
	d     core.Decision
}

// newDenyCache returns a cache of size slots (rounded up to a power of two).
func newDenyCache(size int) *denyCache {
	n := 1
	for n < size {
		n <<= 1
	}
	return &denyCache{seed: maphash.MakeSeed(), mask: uint64(n - 1), slots: make([]atomic.Pointer[denial], n)}
}

// identity hashes what names a key's state: namespace, key, algorithm and the
// limits' figures (encs, from checkRequest). The cost is kept beside it, so a
// reset finds the entry whatever cost it was denied for.
func (c *denyCache) identity(req core.TakeRequest, encs []*encodedLimit) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var buf [8]byte
	put := func(v uint64) {
		for i := range buf {
			buf[i] = byte(v >> (8 * i))
		}
		_, _ = h.Write(buf[:])
	}
	put(uint64(len(req.Namespace)))
	_, _ = h.WriteString(req.Namespace)
	put(uint64(len(req.Key)))
	_, _ = h.WriteString(req.Key)
	put(uint64(req.Algorithm))
	for _, e := range encs {
		put(uint64(e.fig.rate))
		put(uint64(e.fig.period))
		put(uint64(e.fig.burst))
	}
	return h.Sum64()
}

// get returns the remembered denial of req when one is still running at now,
// with RetryAfter and ResetAfter counted down to now. The remaining quota is
// the one Redis reported with the denial.
func (c *denyCache) get(req core.TakeRequest, encs []*encodedLimit, now time.Time) (core.Decision, bool) {
	if now.UnixMicro() < 0 || now.UnixMicro() > core.MaxTime {
		return core.Decision{}, false
	}
	id := c.identity(req, encs)
	e := c.slots[id&c.mask].Load()
	if e == nil || e.id != id || e.cost != req.Cost || !now.Before(e.until) || e.d.Index >= len(req.Limits) {
		return core.Decision{}, false
	}
	d := e.d
	d.Limit = req.Limits[d.Index]
	d.RetryAfter = e.until.Sub(now)
	d.ResetAfter = max(0, d.ResetAfter-now.Sub(e.at))
	return d, true
}

// put remembers a denial of req decided at at. Exceeds denials are not kept:
// no wait admits them, and Redis reports them with a fixed RetryAfter.
func (c *denyCache) put(req core.TakeRequest, encs []*encodedLimit, at time.Time, d core.Decision) {
	if d.Allowed || d.Exceeds || d.RetryAfter <= 0 {
		return
	}
	id := c.identity(req, encs)
	c.slots[id&c.mask].Store(&denial{id: id, cost: req.Cost, at: at, until: at.Add(d.RetryAfter), d: d})
}

// forget drops the remembered denial of req's key, whatever its cost.
func (c *denyCache) forget(req core.TakeRequest, encs []*encodedLimit) {
	id := c.identity(req, encs)
	slot := &c.slots[id&c.mask]
	if e := slot.Load(); e != nil && e.id == id {
		slot.CompareAndSwap(e, nil)
	}
}
