package luascript

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

// ErrRedis reports that Redis could not decide: it is down, slow past the
// context's deadline, answered with an error, or sent a reply the scripts do
// not send. The request may or may not have been counted; it is never sent
// again. Every error a Store returns wraps ErrRedis or one of core's sentinels
// (core.ErrInvalidLimit, core.ErrInvalidCost, core.ErrInvalidAlgorithm,
// core.ErrClock, core.ErrInvalidOption).
var ErrRedis = errors.New("ratewarden: redis failed")

// Backend sends one script call to Redis through a client: the one thing a
// binding of a Redis client implements (see the package doc).
type Backend interface {
	// Eval runs script with keys as KEYS and args as ARGV, and appends the
	// integers of its reply (an array of integers; one integer for a script
	// whose IntegerReply is set, which only an IntegerReplier is sent) to
	// dst, returning the extended slice. It sends EVALSHA script.SHA1,
	// and EVAL script.Source only after a NOSCRIPT reply, which means the
	// script did not run. It must never send the call again once it may have
	// reached the server (the client's retries after a network error must be
	// off for it): a replay would count the request twice. It returns when
	// ctx is done, with an error. It does not change keys or args, and the
	// Store wraps every error it returns with ErrRedis.
	Eval(ctx context.Context, script *Script, keys, args []string, dst []int64) ([]int64, error)
}

// IntegerReplier is a Backend that also reads the reply of a script whose
// IntegerReply is set: one integer, which Eval appends as one element. A
// Store sends a request of one limit (nearly every request) the scripts that
// reply so, which cost Redis less than an array reply, only through a Backend
// whose ReadsIntegerReplies reports true; through any other Backend, those
// that reply with arrays. The go-redis and rueidis bindings are
// IntegerRepliers.
type IntegerReplier interface {
	Backend
	// ReadsIntegerReplies reports whether Eval reads a one-integer reply.
	ReadsIntegerReplies() bool
}

// Store is a core.Store and core.Resetter that keeps every key's state in
// Redis and applies the algorithms there, one Lua script call per decision (one
// round trip), so any number of application instances share exact limits. It
// sends its calls through a Backend. Run FollowResets beside it, so that a
// reset or refund on another instance reaches its local cache of denials at
// once. It is safe for concurrent use.
type Store struct {
	backend Backend
	ints    bool // the backend reads one-integer replies (IntegerReplier)
	cfg     config
	cache   *denyCache // nil when off
	now     func() time.Time
	follow  followStats
}

var (
	_ core.Store    = (*Store)(nil)
	_ core.Resetter = (*Store)(nil)
)

// New returns a Store that sends its script calls through backend, with opts
// applied over the defaults (DefaultPrefix, Redis's clock, no TTL floor, a
// local cache of DefaultLocalCacheSize denials). It returns an error wrapping
// core.ErrInvalidOption for a nil backend or an invalid option.
func New(backend Backend, opts ...Option) (*Store, error) {
	if backend == nil {
		return nil, fmt.Errorf("%w: nil backend", core.ErrInvalidOption)
	}
	s := &Store{backend: backend, cfg: defaultConfig(), now: time.Now}
	if r, ok := backend.(IntegerReplier); ok {
		s.ints = r.ReadsIntegerReplies()
	}
	if err := s.cfg.apply(opts); err != nil {
		return nil, err
	}
	if s.cfg.cacheSize > 0 {
		s.cache = newDenyCache(s.cfg.cacheSize)
	}
	return s, nil
}

// frame1 and frame4 hold one call's KEYS and ARGV and its reply, for one limit
// and for up to four. What Take hands the Backend escapes (it is an
// interface), so a frame makes it one allocation, of the size the request
// needs; requests of more limits grow theirs.
type (
	frame1 struct {
		strs  [6]string // the cost, 3 per limit, now and the TTL floor
		reply [6]int64  // the sliding log's
	}
	frame4 struct {
		strs  [15]string
		reply [14]int64 // 2 + 3 per limit for the windows
	}
)

// buffers returns the room for a call of n limits and its reply.
func buffers(n int) ([]string, []int64) {
	if n == 1 {
		f := new(frame1)
		return f.strs[:0], f.reply[:0]
	}
	f := new(frame4)
	return f.strs[:0], f.reply[:0]
}

// Take decides req in one round trip to Redis and, when it is admitted, spends
// its cost under every limit. Invalid requests return the error core would
// (wrapping core's sentinels) without calling Redis; a failed or timed-out call
// returns an error wrapping ErrRedis. A request whose denial is in the local
// cache is denied again without a call.
func (s *Store) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	if hasCalendar(&req) {
		return s.takeCalendar(ctx, req) // calendar.go
	}
	if req.Charge || req.MaxDebt != 0 {
		return s.settle(ctx, req) // a settle's charge or debt (settle.go)
	}
	now := s.callNow(req)
	var buf [maxStackLimits]*encodedLimit
	encs, err := checkRequest(req, true, s.cfg.callerClock, now, buf[:0])
	if err == nil && req.BlockFor != 0 {
		err = checkBlock(req)
	}
	if err != nil {
		return core.Decision{}, err
	}
	cached := s.cache != nil && req.Cost > 0
	var at time.Time
	var p probe
	if cached {
		at = s.localNow(req)
		p = s.cache.probe(req, encs)
		if d, ok := s.cache.get(p, req, at); ok {
			return d, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	strs, reply := buffers(len(encs))
	script, nk, call := s.scriptFor(strs, req, now, encs)
	reply, err = s.backend.Eval(ctx, script, call[:nk], call[nk:], reply)
	if req.Cost < 0 {
		s.dropKey(req) // a refund (maybe run, even on an error) frees quota a cached denial says is spent
	}
	if err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	d, block, err := decodeReply(req, script, reply)
	if err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	if cached && !d.Allowed {
		s.cache.put(p, req, at, d, block)
	}
	return d, nil
}

// scriptFor returns the script that decides req at now and its call (the
// first nk strings its KEYS, the rest its ARGV), written into strs: the
// penalty box's (block.go), the one-integer script of a request of one limit
// when the backend reads such replies (decodeGap), or the algorithm's.
func (s *Store) scriptFor(strs []string, req core.TakeRequest, now int64, encs []*encodedLimit) (script *Script, nk int, call []string) {
	if req.BlockFor != 0 {
		return blockScripts[req.Algorithm], len(encs) + 1, s.cfg.appendBlockCall(strs, req, now, encs)
	}
	call = s.cfg.appendCall(strs, req, now, encs)
	if s.ints && len(encs) == 1 && oneScripts[req.Algorithm] != nil && (req.Algorithm.OneWord() || packsWindow(req.Algorithm, encs[0].fig)) {
		return oneScripts[req.Algorithm], 1, shortOneCall(call, req)
	}
	return scripts[req.Algorithm], len(encs), call
}

// decodeReply decodes script's reply to req, and the time the key's penalty
// box has left (0 without one).
func decodeReply(req core.TakeRequest, script *Script, reply []int64) (d core.Decision, block time.Duration, err error) {
	switch {
	case req.BlockFor != 0:
		return decodeBlockLeft(req, reply)
	case script.IntegerReply:
		d, err = decodeGap(req, reply)
	default:
		d, err = decode(req, reply)
	}
	return d, 0, err
}

// localNow is the instant a cached denial is measured from: the caller's time
// in caller-clock mode, else the local clock read before the call is sent (so
// a cached denial ends no later than Redis's).
func (s *Store) localNow(req core.TakeRequest) time.Time {
	if s.cfg.callerClock {
		return req.Now
	}
	return s.now()
}

// Reset forgets req's key under req's algorithm and limits (req.Cost and
// req.Now are ignored), in Redis, with one script call that deletes its keys
// and announces the reset, and drops this store's cached denials of the key
// (whatever their algorithm, limits and cost), those of calls in flight
// included. Every store that follows the announcements (FollowResets), on
// any instance, drops its own at once. An invalid algorithm or limit returns
// core's error; a failed call, one wrapping ErrRedis.
func (s *Store) Reset(ctx context.Context, req core.TakeRequest) error {
	keys, _, err := s.keys(req)
	if err != nil {
		return err
	}
	keys = append(keys, blockKey(keys)) // a reset lifts the penalty box
	s.dropKey(req)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrRedis, err)
	}
	args := []string{s.cfg.channel, announcement(keyAddress(req.Namespace, req.Key))}
	reply, err := s.backend.Eval(ctx, resetScript, keys, args, nil)
	s.dropKey(req) // a denial whose call went out before the reset ran
	if err == nil {
		err = checkResetReply(reply, len(keys))
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRedis, err)
	}
	return nil
}

// Keys returns the Redis keys that hold req's state under its algorithm and
// limits, one per limit in req's order, as Take names them (the package doc
// gives the layout); req.Cost and req.Now are ignored. It is for an operator
// looking into Redis, or a test. An invalid algorithm or limit returns core's
// error.
func (s *Store) Keys(req core.TakeRequest) ([]string, error) {
	keys, _, err := s.keys(req)
	return keys, err
}

func (s *Store) keys(req core.TakeRequest) ([]string, []*encodedLimit, error) {
	encs, err := checkRequest(req, false, false, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	keys := s.cfg.appendKeys(make([]string, 0, len(encs)+1), req, encs)
	return keys, encs, nil
}
