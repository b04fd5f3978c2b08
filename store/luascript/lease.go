package luascript

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

var _ core.TokenLeaser = (*Store)(nil)

// LeaseTokens grants a Limiter's token lease (core.WithTokenLease) up to
// want of req's key's tokens in one script call (lease_lua.go), spent in
// Redis as a Take of that cost would spend them: the most from req.Cost to
// want that every limit admits, or none and req's denial. The token bucket,
// GCRA and the fixed and sliding windows lease exactly; other algorithms,
// calendar limits, a penalty box, a charge or a debt return an error
// wrapping core.ErrInvalidOption, a cost or want out of range one wrapping
// core.ErrInvalidCost, without calling Redis. A reply that grants more than
// asked, or what the limits do not admit, is refused with an error wrapping
// ErrRedis and core.ErrTokenGrant. A denial in the local cache is denied
// again without a call.
func (s *Store) LeaseTokens(ctx context.Context, req core.TakeRequest, want int64, ttl time.Duration) (core.TokenGrant, error) {
	if err := req.CheckLease(want, ttl); err != nil {
		return core.TokenGrant{}, err
	}
	now := s.callNow(req)
	var buf [maxStackLimits]*encodedLimit
	encs, err := checkRequest(req, true, s.cfg.callerClock, now, buf[:0])
	if err != nil {
		return core.TokenGrant{}, err
	}
	var at time.Time
	var p probe
	if s.cache != nil {
		at = s.localNow(req)
		p = s.cache.probe(req, encs)
		if d, ok := s.cache.get(p, req, at); ok {
			return core.TokenGrant{Decision: d}, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return core.TokenGrant{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	strs, reply := buffers(len(encs))
	call := s.cfg.appendLeaseCall(strs, req, now, encs, want)
	reply, err = s.backend.Eval(ctx, leaseScripts[req.Algorithm], call[:len(encs)], call[len(encs):], reply)
	if err != nil {
		return core.TokenGrant{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	g, err := decodeGrant(req, reply, want, ttl)
	if err != nil {
		return core.TokenGrant{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	if s.cache != nil && g.Granted == 0 {
		s.cache.put(p, req, at, g.Decision, 0) // a leased key has no penalty box
	}
	return g, nil
}

// appendLeaseCall appends to dst the lease call of req (checked into encs)
// for up to want tokens: the keys, then ARGV: the cost, the figures as
// appendCall sends them, now (µs, or serverTime), the minimum TTL (ms) and
// want.
func (c *config) appendLeaseCall(dst []string, req core.TakeRequest, now int64, encs []*encodedLimit, want int64) []string {
	dst = c.appendKeys(dst, req, encs)
	dst = appendFigures(dst, req, encs)
	t := serverTime
	if now >= 0 {
		t = strconv.FormatInt(now, 10)
	}
	return append(dst, t, c.minTTLArg, strconv.FormatInt(want, 10))
}

// decodeGrant checks a lease script's reply {granted, now, states before...}
// and returns the grant core decides of it (core.TakeRequest.CheckGrant), or
// an error wrapping errReply or core.ErrTokenGrant.
func decodeGrant(req core.TakeRequest, reply []int64, want int64, ttl time.Duration) (core.TokenGrant, error) {
	var buf [maxStackLimits]core.State
	now, states, err := readStates(req, reply, buf[:0])
	if err != nil {
		return core.TokenGrant{}, err
	}
	return req.CheckGrant(states, reply[0], want, ttl, now)
}
