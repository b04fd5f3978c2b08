// Package memory is ratewarden's in-process store: sharded, safe for concurrent
// use, and bounded in memory whatever keys its clients send.
//
// # Speed
//
// For the token bucket, the leaky bucket and GCRA under a single limit, a key's
// whole state is one 64-bit timestamp, kept inline in an open-addressing table
// and updated with compare-and-swap: a decision on a key the store already holds
// takes no lock and allocates nothing. The fixed and the sliding window under a
// single limit do the same with their state (the window's index and its
// counts) packed exactly into one word (core.WindowPacking), updated by a
// load, the next word's arithmetic and one compare-and-swap: every fixed
// window, and sliding windows up to 32,767 a second, 262,143 a minute,
// 2,097,151 an hour or 8,388,607 a day. The sliding log, larger sliding
// windows and requests under several limits keep a small entry per key
// guarded by its own mutex, so a hot key never blocks its shard.
//
// # Memory
//
// The store keeps a seeded 64-bit hash of each key (hash/maphash, seeded per
// store, so an attacker cannot aim a collision at a victim's key), never the key
// itself: a 10 KB API key costs what a 4-byte one does. State that has fully
// recovered (a bucket full again, a window long gone) is dropped by a
// background sweeper and by inserts that pass it, and tables shrink again after
// a flood.
//
// A key costs about 48 bytes of heap for every algorithm kept in a word (a
// 24-byte slot of the table, at the load a full table has): the meters' word
// and the emission interval it was written under, the windows' word and its
// packing (which tells the sweeper when the word has recovered); both say
// when a limit's figures were edited, so the word is re-expressed under the
// new ones (see core.TakeRequest.Identity). Never more than 64 at any number
// of keys (heap_test.go checks 100,000, 262,144 and 1,000,000); 184 for a
// sliding window too large to pack (a slot and an entry, which keeps the
// limits its states were written under), and 216 for the sliding log holding
// one timestamp, 8 bytes more per timestamp it holds; an entry under several
// limits keeps its states and limits apart, 96 bytes each. The entries of
// evicted or dropped keys are recycled for new keys, so
// a flood of unique keys at a full store allocates nothing and the heap in use
// (what the process holds from the OS) stays within 1.5x of these figures:
// flood_test.go checks it, and BenchmarkFloodHeap reports it for 1,000,000
// keys at a bound of 100,000 (64 bytes a key for the word tables there, whose
// tables are at their emptiest).
//
// # The bound and the eviction policy
//
// The number of keys held is bounded (WithMaxKeys, default 1,000,000, split
// exactly over the shards). When a shard is full, a
// new key first reclaims any state that has recovered; failing that it evicts by
// the CLOCK policy: every key has a reference bit, set when the key is used and
// cleared as the eviction hand passes; the hand evicts the first key whose bit is
// clear. New keys start unreferenced, so a flood of keys that each send once
// evicts one another, while a key that keeps sending keeps its bit set and its
// exact count. An evicted key that comes back starts fresh: under a sustained
// flood larger than the bound, a client who rotates through more keys than the
// bound can get fresh quota, which is the price of bounded memory. Size the bound
// for your legitimate clients.
//
// WithRefuseWhenFull trades eviction for refusal, as nginx's full zone does:
// a new key finding its shard full gets an error wrapping core.ErrStoreFull
// (the request gets 503 with Retry-After from package httplimit), and every
// key held keeps its exact count. Before refusing, a new key may take the
// place of a held key whose state has fully recovered (it decides as a new
// key would, so nothing is lost), found within a few slots of the CLOCK hand,
// so a refusal costs no scan of the table; the sweeper reclaims the rest. The
// bound is split over the shards, so a store refuses a new key when the
// key's shard is full, slightly before the whole store is.
//
// Store.Stats reports the keys held and how many were evicted or refused,
// for the metrics modules to export.
//
// # Refunds
//
// A refund (core.Limiter.Refund) is decided like any request, by
// core.TakeRequest.Decide under the key's lock, or with compare-and-swap on
// the one-word paths (core.TakeRequest.AdvanceWord and AdvanceWindowWord); a
// refund of a key the store does not hold stores nothing.
//
// A Store runs one background goroutine, the sweeper; Close stops it.
package memory
