package luascript

import (
	"hash/maphash"
	"sync/atomic"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// DenyCache remembers recent denials, so that a key being flooded is denied
// locally until its RetryAfter instead of costing Redis a script call per
// request. Both Redis bindings use it; it holds nothing client-specific. It is
// safe for concurrent use.
//
// It can never admit more than Redis would: it only ever denies, and only the
// very request (same key, limits and cost) that Redis denied, until the
// RetryAfter Redis gave, counted from when the call was sent (so never past
// the moment Redis itself would admit it: a denial spends nothing and other
// requests can only add to the state in between). It is direct-mapped: a fixed array of slots, each holding the latest
// denial whose identity hashes there, swapped atomically. Memory is bounded by
// the number of slots whatever the keys' length, lookups take no lock, and a
// collision only evicts (the evicted key goes back to Redis).
type DenyCache struct {
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

// NewDenyCache returns a cache of size slots (rounded up to a power of two).
func NewDenyCache(size int) *DenyCache {
	n := 1
	for n < size {
		n <<= 1
	}
	return &DenyCache{seed: maphash.MakeSeed(), mask: uint64(n - 1), slots: make([]atomic.Pointer[denial], n)}
}

// identity hashes what names a key's state: the cost is kept beside it, so a
// Reset finds the entry whatever cost it was denied for.
func (c *DenyCache) identity(req core.TakeRequest) uint64 {
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
	for _, l := range req.Limits {
		put(uint64(l.Rate))
		put(uint64(l.Period))
		put(uint64(l.EffectiveBurst()))
	}
	return h.Sum64()
}

// Get returns the remembered denial of req when one is still running at now,
// with RetryAfter and ResetAfter counted down to now. The remaining quota is
// the one Redis reported with the denial.
func (c *DenyCache) Get(req core.TakeRequest, now time.Time) (core.Decision, bool) {
	if now.UnixMicro() < 0 || now.UnixMicro() > core.MaxTime {
		return core.Decision{}, false
	}
	id := c.identity(req)
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

// Put remembers a denial of req decided at at. Exceeds denials are not kept:
// no wait admits them, and Redis reports them with a fixed RetryAfter.
func (c *DenyCache) Put(req core.TakeRequest, at time.Time, d core.Decision) {
	if d.Allowed || d.Exceeds || d.RetryAfter <= 0 {
		return
	}
	id := c.identity(req)
	c.slots[id&c.mask].Store(&denial{id: id, cost: req.Cost, at: at, until: at.Add(d.RetryAfter), d: d})
}

// Forget drops the remembered denial of req's key, whatever its cost.
func (c *DenyCache) Forget(req core.TakeRequest) {
	id := c.identity(req)
	slot := &c.slots[id&c.mask]
	if e := slot.Load(); e != nil && e.id == id {
		slot.CompareAndSwap(e, nil)
	}
}
