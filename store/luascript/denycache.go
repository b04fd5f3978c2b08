package luascript

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
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
// of a key (namespace and key: keyAddress) that maps there, swapped
// atomically. Memory is bounded by the number of slots whatever the keys'
// length, lookups take no lock, and a collision only evicts (the evicted key
// goes back to Redis). A key's denials under several algorithms, limits or
// costs share its slot, so dropping a key (a reset, a refund, an
// announcement of either) is dropping one slot.
//
// Each slot has a generation, read before a call is sent (probe) and
// recorded in the denial the call's reply puts; drop bumps it, so a denial
// Redis decided before a reset or a refund but whose reply arrives after
// the drop is never served.
type denyCache struct {
	seed  maphash.Seed
	mix   [2]uint64 // random: a key's slot differs between processes
	mask  uint64
	slots []cacheSlot
}

// cacheSlot is one slot: the denial it holds and its generation.
type cacheSlot struct {
	entry atomic.Pointer[denial]
	gen   atomic.Uint64
}

// denial is one remembered denial; immutable once stored.
type denial struct {
	id    uint64 // seeded hash of namespace, key, algorithm and limits
	gen   uint64 // the slot's generation when the call was sent
	cost  int64
	at    time.Time // when the denied call was sent (or the caller's time)
	until time.Time // at + RetryAfter (a block's end, for a penalty box's): no identical request fits before
	d     core.Decision
}

// probe is what a request's lookup found out before its call is sent: its
// slot, identity and the slot's generation then.
type probe struct {
	slot *cacheSlot
	id   uint64
	gen  uint64
}

// newDenyCache returns a cache of size slots (rounded up to a power of two).
func newDenyCache(size int) *denyCache {
	n := 1
	for n < size {
		n <<= 1
	}
	return &denyCache{
		seed: maphash.MakeSeed(), mix: [2]uint64{rand.Uint64(), rand.Uint64() | 1},
		mask: uint64(n - 1), slots: make([]cacheSlot, n),
	}
}

// slotOf returns the slot of the key whose address (keyAddress) is addr,
// mixed with random figures, so a key's slot differs between processes.
func (c *denyCache) slotOf(addr uint64) *cacheSlot {
	hi, lo := bits.Mul64(addr^c.mix[0], c.mix[1])
	return &c.slots[(hi^lo)&c.mask]
}

// identity hashes what names a cached denial: namespace, key, algorithm and
// the limits' figures (encs, from checkRequest). The cost is kept beside it,
// so a request of another cost finds nothing.
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
	if req.BlockFor != 0 { // a penalty box's denials are its own
		put(uint64(req.BlockFor))
	}
	for _, e := range encs {
		put(uint64(e.fig.rate))
		put(uint64(e.fig.period))
		put(uint64(e.fig.burst))
	}
	return h.Sum64()
}

// probe finds req's slot and reads its generation; call it before the call
// to Redis is sent.
func (c *denyCache) probe(req core.TakeRequest, encs []*encodedLimit) probe {
	s := c.slotOf(keyAddress(req.Namespace, req.Key))
	return probe{slot: s, id: c.identity(req, encs), gen: s.gen.Load()}
}

// get returns the remembered denial of req (probed as p) when one is still
// running at now and no drop has come since its call was sent, with
// RetryAfter and ResetAfter counted down to now. The remaining quota is the
// one Redis reported with the denial.
func (c *denyCache) get(p probe, req core.TakeRequest, now time.Time) (core.Decision, bool) {
	if now.UnixMicro() < 0 || now.UnixMicro() > core.MaxTime {
		return core.Decision{}, false
	}
	e := p.slot.entry.Load()
	// A block refuses every cost until its end; other denials, their cost.
	if e == nil || e.id != p.id || e.gen != p.gen || (e.cost != req.Cost && !e.d.Blocked && !e.d.BlockStarted) || !now.Before(e.until) || e.d.Index >= len(req.Limits) {
		return core.Decision{}, false
	}
	d := e.d
	d.Limit = req.Limits[d.Index]
	d.RetryAfter = max(0, d.RetryAfter-now.Sub(e.at))
	if d.BlockStarted { // now refused by the block it started
		d.Blocked, d.BlockStarted = true, false
	}
	d.ResetAfter = max(0, d.ResetAfter-now.Sub(e.at))
	return d, true
}

// put remembers a denial of req (probed as p before its call was sent)
// decided at at, unless the slot was dropped since: the denial may then
// predate a reset or refund. Exceeds denials are not kept: no wait admits
// them, and Redis reports them with a fixed RetryAfter. A penalty box's
// denial is kept only while its block runs (block, the time it had left):
// once it ends, Redis decides again, and starts the next block when the
// quota still refuses.
func (c *denyCache) put(p probe, req core.TakeRequest, at time.Time, d core.Decision, block time.Duration) {
	if d.Allowed || d.Exceeds || d.RetryAfter <= 0 || p.slot.gen.Load() != p.gen {
		return
	}
	keep := d.RetryAfter
	if d.Blocked || d.BlockStarted {
		keep = min(keep, block)
	}
	// A drop between the check and the store leaves an entry of an old
	// generation, which get refuses.
	p.slot.entry.Store(&denial{id: p.id, gen: p.gen, cost: req.Cost, at: at, until: at.Add(keep), d: d})
}

// drop forgets every remembered denial of the key whose address is addr,
// whatever its algorithm, limits and cost, and voids those whose calls are
// in flight.
func (c *denyCache) drop(addr uint64) {
	s := c.slotOf(addr)
	s.gen.Add(1)
	s.entry.Store(nil)
}

// dropAll forgets every remembered denial and voids those in flight.
func (c *denyCache) dropAll() {
	for i := range c.slots {
		c.slots[i].gen.Add(1)
		c.slots[i].entry.Store(nil)
	}
}
