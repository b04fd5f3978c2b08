package luascript

import (
	"context"
	"fmt"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// A settle's charge (core.TakeRequest.Charge, see core/settle.go) runs a
// script of its own, with the spend's arguments (appendCall): it spends the
// cost under every limit whether it fits or not, up to an empty quota, and
// replies as the meter and window scripts do, {1, now, states...}, but with
// the states it leaves, so that decode's peek of them is the Decision after
// the charge (its flag is the peek's verdict). The scripts hold no debt: a request with a debt bound
// (core.WithDebt) is refused with core.ErrUnsupported, for its states could
// lie beyond what the spend scripts read as a clock that stepped back.

// luaChargeMeter charges the meters: T moves ahead by cost intervals from
// max(T, now), at most to now + tau (an empty meter); a T already beyond
// now + tau (a clock that stepped back) is rebased there first, as core's
// rebase does. A state written under another interval is re-expressed
// (luaMeterRead).
const luaChargeMeter = luaNow + `
local reply = {1, now}
for i = 1, nk do
  local iv, tau = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local v = redis.call('GET', KEYS[i])` + luaMeterRead + `
  local t0 = t
  if t - now > tau then t = now + tau end
  local tat, top = t, now + tau
  if now > tat then tat = now end
  if tat < top then
    if cost >= math.floor((top - tat) / iv) + 1 then t = top else t = tat + cost * iv end
  end
  if t ~= t0 or re then
    local us = t - now
    if us < 1 then us = 1 end` + luaTTL + `    redis.call('SET', KEYS[i], string.format('%d %d', t, iv), 'PX', ms)
  end
  reply[i + 2] = t
end
return reply
`

// luaChargeWindows charges the windows: the count of the window holding now
// rises by cost, at most to Rate (the sliding window keeps its previous
// count); a window after now's (a clock that stepped back) reads as now's.
// PREV is the algorithm's previous count; LIFE the state's lifetime.
const luaChargeWindows = luaNow + `
local reply = {1, now}
for i = 1, nk do
  local rate, period = ARGV[2 * i] + 0, ARGV[2 * i + 1] + 0
  local st, sn, sp, re = 0, 0, 0, false
  local v = redis.call('GET', KEYS[i])
  if v then` + luaWindowRead + `
  end
  local start = now - math.fmod(now, period)
  if st > start then st = start end
  local cur, prev = 0, 0
  if st == start then
    cur, prev = sn, sp
  elseif st == start - period then
    prev = sn
  end
PREV
  if cur < rate then
    if cost >= rate - cur then cur = rate else cur = cur + cost end
  end
  local ws, wn, wp = start, cur, prev
  local w = (period - (now - start)) / period
  local pw = prev * w
  if pw + cur > rate then reply[1] = 0 end
  local us = LIFE` + luaTTL + luaWindowWrite + `
  reply[3 * i], reply[3 * i + 1], reply[3 * i + 2] = ws, wn, wp
end
return reply
`

// chargeScripts holds each algorithm's charge script (none for the sliding
// log, which refuses a charge).
var chargeScripts = func() [core.GCRA + 1]*Script {
	var s [core.GCRA + 1]*Script
	for _, a := range core.Algorithms() {
		var body string
		switch a {
		case core.TokenBucket, core.GCRA, core.LeakyBucket:
			body = luaChargeMeter
		case core.FixedWindow:
			body = strings.NewReplacer("CARRY", luaFixedWindowCarry, "PREV", "  prev = 0", "LIFE", "ws + period - now").Replace(luaChargeWindows)
		case core.SlidingWindow:
			body = strings.NewReplacer("CARRY", luaSlidingWindowCarry, "PREV", "", "LIFE", "ws + 2 * period - now").Replace(luaChargeWindows)
		default:
			continue
		}
		s[a] = newScript(a.String()+"+charge", body)
	}
	return s
}()

// ChargeScripts returns the scripts a Store sends for a settle's charge, in
// the order of core.Algorithms, the sliding log's left out: for a binding
// that SCRIPT LOADs ahead of use.
func ChargeScripts() []*Script {
	out := make([]*Script, 0, len(core.Algorithms())-1)
	for _, a := range core.Algorithms() {
		if chargeScripts[a] != nil {
			out = append(out, chargeScripts[a])
		}
	}
	return out
}

// checkSettle refuses what the scripts cannot do for a settle: a debt
// bound, and a charge under the sliding log.
func checkSettle(req core.TakeRequest) error {
	if req.MaxDebt != 0 {
		return fmt.Errorf("%w: luascript: the Redis scripts hold no debt (core.WithDebt %d); settle with a debt bound of 0, which charges up to an empty quota", core.ErrUnsupported, req.MaxDebt)
	}
	if req.Charge && req.Algorithm == core.SlidingLog {
		return fmt.Errorf("%w: sliding-log cannot charge a cost after admission", core.ErrUnsupported)
	}
	return nil
}

// settle runs a request of a settle: a charge, in one call of its script;
// a request with a debt bound is refused; any other goes its usual way.
func (s *Store) settle(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	if err := checkSettle(req); err != nil {
		return core.Decision{}, err
	}
	now := int64(-1) // the server's TIME
	if s.cfg.callerClock {
		now = core.Micros(req.Now)
	}
	var buf [maxStackLimits]*encodedLimit
	encs, err := checkRequest(req, true, s.cfg.callerClock, now, buf[:0])
	if err != nil {
		return core.Decision{}, err
	}
	if req.Cost <= 0 {
		return core.Decision{}, fmt.Errorf("%w: a charge of %d, want a positive cost", core.ErrInvalidCost, req.Cost)
	}
	if err := ctx.Err(); err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	strs, reply := buffers(len(encs))
	call := s.cfg.appendCall(strs, req, now, encs)
	reply, err = s.backend.Eval(ctx, chargeScripts[req.Algorithm], call[:len(encs)], call[len(encs):], reply)
	if err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	peek := req
	peek.Cost, peek.Charge = 0, false // the reply holds the states after the charge
	d, err := decode(peek, reply)
	if err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	return d, nil
}
