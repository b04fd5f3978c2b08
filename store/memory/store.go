package memory

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// Store is a sharded, bounded, in-process core.Store. It is safe for concurrent
// use. Create one with New and stop its sweeper with Close.
type Store struct {
	seed       maphash.Seed
	shards     []shard
	shardShift uint
	clock      core.Clock
	sweepEvery time.Duration
	closed     atomic.Bool
	seen       atomic.Int64
	stop       chan struct{}
	done       chan struct{}
	closeOnce  sync.Once
	inflight   inflightTable // the in-flight slots (inflight.go)
}

// Option configures a Store.
type Option func(*config) error

type config struct {
	maxKeys    int
	shards     int
	clock      core.Clock
	sweepEvery time.Duration
	refuse     bool
}

// DefaultMaxKeys is the default bound on the number of keys a Store holds.
const DefaultMaxKeys = 1_000_000

// WithMaxKeys bounds the number of keys the store holds, exactly (see the
// package doc for the eviction policy). It must be at least 1.
func WithMaxKeys(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: max keys must be at least 1, got %d", core.ErrInvalidOption, n)
		}
		c.maxKeys = n
		return nil
	}
}

// WithRefuseWhenFull makes a full store refuse new keys instead of evicting
// held ones, as nginx's full zone does: a request for a key the store does
// not hold, when the store holds WithMaxKeys keys, gets an error wrapping
// core.ErrStoreFull (package httplimit answers 503 with Retry-After and tells
// the observer), while every key already held keeps its exact count. Before
// refusing, the new key may still take the place of a held key whose state
// has fully recovered (it decides as a new key would, so no count is lost),
// searched among a few slots only; the sweeper reclaims the rest. Peeks and
// refunds of keys not held need no room and are never refused. Stats counts
// the refusals.
func WithRefuseWhenFull() Option {
	return func(c *config) error {
		c.refuse = true
		return nil
	}
}

// WithShards sets the number of shards, a power of two from 1 to 65536. The
// default is 64, or fewer when the key bound is small; never more shards than
// the bound has keys.
func WithShards(n int) Option {
	return func(c *config) error {
		if n < 1 || n > 1<<16 || n&(n-1) != 0 {
			return fmt.Errorf("%w: shards must be a power of two from 1 to 65536, got %d", core.ErrInvalidOption, n)
		}
		c.shards = n
		return nil
	}
}

// WithClock sets the clock the sweeper uses to tell recovered state (see
// Sweep); decisions use the time of each request (core.TakeRequest.Now).
func WithClock(clk core.Clock) Option {
	return func(c *config) error {
		if clk == nil {
			return fmt.Errorf("%w: nil clock", core.ErrInvalidOption)
		}
		c.clock = clk
		return nil
	}
}

// WithSweepInterval sets how often the background sweeper drops recovered
// state (default one minute). Zero disables the sweeper; inserts still reclaim
// recovered state as they pass it, and the bound still holds.
func WithSweepInterval(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: negative sweep interval %s", core.ErrInvalidOption, d)
		}
		c.sweepEvery = d
		return nil
	}
}

// New returns a Store. It starts the background sweeper unless disabled; call
// Close to stop it.
func New(opts ...Option) (*Store, error) {
	c := config{maxKeys: DefaultMaxKeys, clock: core.SystemClock{}, sweepEvery: time.Minute}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", core.ErrInvalidOption)
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if c.shards == 0 {
		c.shards = 64
		for c.shards > 1 && c.maxKeys/c.shards < 64 {
			c.shards /= 2
		}
	}
	for c.shards > c.maxKeys { // every shard holds at least one key
		c.shards /= 2
	}
	s := &Store{
		seed:       maphash.MakeSeed(),
		shards:     make([]shard, c.shards),
		shardShift: uint(64 - bits.TrailingZeros(uint(c.shards))),
		clock:      c.clock,
		sweepEvery: c.sweepEvery,
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	// The bound is split exactly: the first maxKeys%shards shards hold one
	// key more than the others.
	s.inflight.bound = int64(c.maxKeys)
	base, extra := c.maxKeys/c.shards, c.maxKeys%c.shards
	for i := range s.shards {
		s.shards[i].init(base+min(1, max(0, extra-i)), &s.seen, c.refuse)
	}
	if s.sweepEvery > 0 {
		go s.sweeper()
	} else {
		close(s.done)
	}
	return s, nil
}

// Close stops the sweeper and waits for it to end. Take after Close returns
// core.ErrStoreClosed. Close is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		close(s.stop)
	})
	<-s.done
	return nil
}

// Len returns the number of keys the store holds (one per namespace, key,
// algorithm and number of limits).
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += sh.keys()
		sh.mu.Unlock()
	}
	return n
}

// Local reports true: the store decides in process, without I/O, so the HTTP
// policy (package httplimit) gives its calls no deadline.
func (s *Store) Local() bool { return true }

var errInvalidRequest = errors.New("memory: invalid request")

// Take decides req atomically and spends its cost when admitted.
func (s *Store) Take(_ context.Context, req core.TakeRequest) (d core.Decision, err error) {
	err = s.take(&d, &req, core.Micros(req.Now))
	return d, err
}

// TakeMicros is Take for a Limiter in this process (core.MicrosTaker): base
// with key, cost and now (µs since the Unix epoch) filled in.
func (s *Store) TakeMicros(_ context.Context, base *core.TakeRequest, key string, cost, now int64) (d core.Decision, err error) {
	req := *base
	req.Key, req.Cost, req.Now = key, cost, time.UnixMicro(now)
	err = s.take(&d, &req, now)
	return d, err
}

// take decides req at now (µs since the Unix epoch, req.Now's) into d,
// which the callers return: a Decision written once, not copied from frame
// to frame.
func (s *Store) take(d *core.Decision, req *core.TakeRequest, now int64) error {
	if s.closed.Load() {
		return core.ErrStoreClosed
	}
	if len(req.Limits) == 0 {
		return fmt.Errorf("%w: no limits: %w", errInvalidRequest, core.ErrInvalidLimit)
	}
	tag := s.tag(req)
	sh := &s.shards[tag>>s.shardShift]
	if len(req.Limits) == 1 && req.BlockFor == 0 { // a penalty box lives in an entry
		if req.Algorithm.OneWord() {
			return sh.takeWord(d, tag, req, now)
		}
		if pk, ok := req.WindowPacking(); ok {
			return sh.takeWindow(d, tag, req, pk, now)
		}
	}
	var err error
	*d, err = sh.takeEntry(tag, req, now)
	return err
}

// Reset forgets the state of req's key under req's algorithm and number of
// limits, whatever their figures.
func (s *Store) Reset(_ context.Context, req core.TakeRequest) error {
	if s.closed.Load() {
		return core.ErrStoreClosed
	}
	tag := s.tag(&req)
	sh := &s.shards[tag>>s.shardShift]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sl, ok := sh.words.find(tag); ok {
		sh.words.remove(sl, 0, true)
	}
	if sl, ok := sh.windows.find(tag); ok {
		sh.windows.remove(sl, 0, true)
	}
	if sl, ok := sh.entries.find(tag); ok {
		sh.entries.remove(sl, 0, true)
	}
	return nil
}

// tag hashes the request's identity: namespace, key, algorithm and number of
// limits, not their figures (core.TakeRequest.Identity), so an edited limit
// finds what its old figures wrote.
// Its top bits pick the shard, its low bits the slot; bit 0 is left clear for
// the reference bit and bit 2 is set so a tag is never an empty or dead slot.
// The seeded hash of the namespace and key is uniform, so xoring in the
// (unseeded) identity keeps it so.
func (s *Store) tag(req *core.TakeRequest) uint64 {
	var h uint64
	if req.Namespace == "" {
		h = maphash.String(s.seed, req.Key)
	} else {
		h = maphash.Comparable(s.seed, [2]string{req.Namespace, req.Key})
	}
	return (h ^ req.Identity() | 4) &^ 1
}

func (s *Store) sweeper() {
	defer close(s.done)
	t := time.NewTicker(s.sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.Sweep()
		}
	}
}

// Sweep drops every state that has fully recovered and shrinks tables that a
// flood left mostly empty. The background sweeper calls it; call it yourself
// when the sweeper is disabled.
//
// "Now" for the sweep is the earlier of the store's clock and the latest
// request time the store has seen inserting a key, so a limiter whose clock
// lags the store's (a test's manual clock, a simulation) never has live state
// swept away: the sweep can only lag, never run ahead.
func (s *Store) Sweep() {
	now := min(core.Micros(s.clock.Now()), s.seen.Load())
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.words.sweep(now)
		sh.windows.sweep(now)
		sh.entries.sweep(now)
		sh.mu.Unlock()
		runtime.Gosched()
	}
	s.inflight.sweep()
}
