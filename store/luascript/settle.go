package luascript

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ratewarden/ratewarden/core"
)

// Settling (core/settle.go) on Redis. A request of a limiter with a debt
// bound (core.WithDebt: TakeRequest.MaxDebt > 0) and a settle's charge
// (TakeRequest.Charge) run scripts of their own, which take the debt bound D
// as one more argument, right after the limits' figures (ARGV[2*nk+2]; the
// refund's age and the optional arguments follow it):
//
//   - the debt scripts are the meter and window scripts with the debt read
//     as core reads it: a meter's T up to now + tau + D intervals is a debt,
//     not a clock that stepped back (its rebase horizon is tau + D
//     intervals), and a window's counts up to Rate + D are kept as they
//     are; their tests of admission are the same;
//   - the charge scripts spend the cost under every limit whether it fits or
//     not, up to the bound (a meter's T to now + tau + D intervals, a
//     window's count to Rate + D), and reply as the meter and window scripts
//     do, {allowed, now, states...}, with the states they leave and the
//     verdict of a peek of them.
//
// decodeDebt then decides with core's TakeRequest.Decide, which reads the
// debt as the scripts do and reports it (Decision.Debt). Such requests skip
// the local cache of denials. The sliding log holds no debt and refuses a
// charge (core refuses both first); a debt bound beside a penalty box is
// refused with core.ErrUnsupported (a charge, which never denies, leaves
// the block alone), and a calendar limit with
// core.ErrInvalidOption (calendar.go), as their scripts take no debt.

// debtReplacer turns a meter or window script into its debt variant.
var debtReplacer = strings.NewReplacer(
	// The debt bound is the argument after the figures; the others move up.
	"2 * nk + 2", "2 * nk + 3",
	// Each limit's horizon: tau plus D intervals.
	"local iv, tau = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])",
	"local iv, tau = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])\n    local hz = tau + debt * iv",
	"local i, iv, tau = 1, ARGV[2] + 0, ARGV[3] + 0",
	"local i, iv, tau = 1, ARGV[2] + 0, ARGV[3] + 0\n  local hz = tau + debt * iv",
	// The rebase of a clock that stepped back reads the horizon.
	"if t - now > tau then t = now + tau end", "if t - now > hz then t = now + hz end",
	"local rebased = t - now > tau", "local rebased = t - now > hz",
	"if rebased then t = now + tau end", "if rebased then t = now + hz end",
	"local us = tau", "local us = hz",
	"now + tau, iv", "now + hz, iv",
	"if t - now > tau then t, rebased = now + tau, true end", "if t - now > hz then t, rebased = now + hz, true end",
	"reply[i + 2] - now > tau then", "reply[i + 2] - now > hz then",
	// A window's counts go up to Rate + D.
	"while top <= rate do", "while top <= rate + debt do",
)

// luaDebt reads the debt bound, after luaNow.
const luaDebt = `local debt = ARGV[2 * nk + 2] + 0
`

// withDebt returns the debt variant of a script body that starts with
// luaNow (a charge script's body reads hz and debt as the debt variants do).
func withDebt(body string) string {
	rest, ok := strings.CutPrefix(body, luaNow)
	if !ok {
		panic("luascript: a script without luaNow") // the scripts are constants: a test catches it
	}
	return debtReplacer.Replace(luaNow) + luaDebt + debtReplacer.Replace(rest)
}

// luaChargeMeter charges the meters: T moves ahead by cost intervals from
// max(T, now), at most to now + tau + D intervals; a T already beyond that
// (a clock that stepped back) is rebased there first, as core's rebase
// does. A state written under another interval is re-expressed
// (luaMeterRead).
const luaChargeMeter = `
local reply = {1, now}
for i = 1, nk do
  local iv, tau = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local v = redis.call('GET', KEYS[i])` + luaMeterRead + `
  local t0 = t
  if t - now > hz then t = now + hz end
  local tat, top = t, now + hz
  if now > tat then tat = now end
  if tat < top then
    if cost >= math.floor((top - tat) / iv) + 1 then t = top else t = tat + cost * iv end
  end
  if t ~= t0 or re then
    local us = t - now
    if us < 1 then us = 1 end` + luaTTL + `    redis.call('SET', KEYS[i], string.format('%d %d', t, iv), 'PX', ms)
  end
  if t - now > tau then reply[1] = 0 end
  reply[i + 2] = t
end
return reply
`

// luaChargeWindows charges the windows: the count of the window holding now
// rises by cost, at most to Rate + D (the sliding window keeps its previous
// count); a window after now's (a clock that stepped back) reads as now's.
// PREV is the algorithm's previous count; LIFE the state's lifetime.
const luaChargeWindows = `
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
  local top = rate + debt
  if cur < top then
    if cost >= top - cur then cur = top else cur = cur + cost end
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

// settleScripts are each algorithm's debt and charge scripts (none for the
// sliding log).
var debtScripts, chargeScripts = func() (debt, charge [core.GCRA + 1]*Script) {
	for _, a := range core.Algorithms() {
		var body, carry, prev, life string
		switch a {
		case core.TokenBucket, core.GCRA, core.LeakyBucket:
			body = luaChargeMeter
		case core.FixedWindow:
			body, carry, prev, life = luaChargeWindows, luaFixedWindowCarry, "  prev = 0", "ws + period - now"
		case core.SlidingWindow:
			body, carry, prev, life = luaChargeWindows, luaSlidingWindowCarry, "", "ws + 2 * period - now"
		default:
			continue
		}
		body = strings.NewReplacer("CARRY", carry, "PREV", prev, "LIFE", life).Replace(body)
		name := a.String()
		src := strings.TrimPrefix(scripts[a].Source, "-- ratewarden "+name+"\n")
		debt[a] = newScript(name+"+debt", withDebt(src))
		charge[a] = newScript(name+"+charge", withDebt(luaNow+body))
	}
	return debt, charge
}()

// SettleScripts returns the scripts a Store sends for the requests of a
// limiter with a debt bound and for a settle's charge, each algorithm's
// (the sliding log's left out) in the order of core.Algorithms: for a
// binding that SCRIPT LOADs ahead of use.
func SettleScripts() []*Script {
	var out []*Script
	for _, a := range core.Algorithms() {
		if debtScripts[a] != nil {
			out = append(out, debtScripts[a], chargeScripts[a])
		}
	}
	return out
}

// checkSettle refuses what the scripts cannot do for a settle: a charge
// under the sliding log, or a debt bound beside a penalty box (a calendar
// limit is refused before, by takeCalendar).
func checkSettle(req core.TakeRequest) error {
	switch {
	case req.MaxDebt < 0:
		return fmt.Errorf("%w: debt bound %d is negative", core.ErrInvalidCost, req.MaxDebt)
	case req.Algorithm == core.SlidingLog:
		return fmt.Errorf("%w: sliding-log cannot charge a cost after admission, nor hold a debt", core.ErrUnsupported)
	case req.BlockFor != 0 && !req.Charge: // a charge never denies, so never starts a block
		return fmt.Errorf("%w: luascript: a penalty box (core.WithBlockFor) and a debt bound (core.WithDebt) do not go together on Redis", core.ErrUnsupported)
	case req.Charge && req.Cost <= 0:
		return fmt.Errorf("%w: a charge of %d, want a positive cost", core.ErrInvalidCost, req.Cost)
	}
	return nil
}

// settle runs a request of a limiter with a debt bound, or a settle's
// charge, in one call of its script.
func (s *Store) settle(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	if err := checkSettle(req); err != nil {
		return core.Decision{}, err
	}
	now := s.callNow(req)
	var buf [maxStackLimits]*encodedLimit
	encs, err := checkRequest(req, true, s.cfg.callerClock, now, buf[:0])
	if err != nil {
		return core.Decision{}, err
	}
	if err := ctx.Err(); err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	strs, reply := buffers(len(encs))
	call := s.cfg.appendCall(strs, req, now, encs)
	nk := len(encs)
	at := nk + 1 + 2*nk     // the keys, the cost and the figures come first
	call = append(call, "") // the debt bound goes in at, the rest one place up
	copy(call[at+1:], call[at:])
	call[at] = debtArg(req.MaxDebt)
	script := debtScripts[req.Algorithm]
	if req.Charge {
		script = chargeScripts[req.Algorithm]
	}
	reply, err = s.backend.Eval(ctx, script, call[:nk], call[nk:], reply)
	if req.Cost < 0 {
		s.dropKey(req) // a refund frees quota a cached denial says is spent
	}
	if err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	d, err := decodeDebt(req, reply)
	if err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", ErrRedis, err)
	}
	return d, nil
}

// lastDebt is the debt bound debtArg formatted last: the bounds come from
// configuration, so nearly every call formats the same one again.
var lastDebt atomic.Pointer[debtText]

type debtText struct {
	n    int64
	text string
}

// debtArg is the debt bound n as a script argument, formatted once while it
// stays the same.
func debtArg(n int64) string {
	if t := lastDebt.Load(); t != nil && t.n == n {
		return t.text
	}
	t := &debtText{n: n, text: strconv.FormatInt(n, 10)}
	lastDebt.Store(t)
	return t.text
}

// decodeDebt is decodeStates for a settle's scripts: core's Decide, which
// reads a debt as they do, on the states they replied at their instant; a
// refund and a charge reply as the peek that follows them.
func decodeDebt(req core.TakeRequest, reply []int64) (core.Decision, error) {
	var buf [maxStackLimits]core.State
	now, states, err := readFlagged(req, reply, buf[:0])
	if err != nil {
		return core.Decision{}, err
	}
	peek := req
	peek.Cost, peek.Charge = max(0, req.Cost), false
	if req.Charge {
		peek.Cost = 0
	}
	var d core.Decision
	if err := peek.Decide(&d, states, now); err != nil {
		return core.Decision{}, fmt.Errorf("%w: %w", errReply, err)
	}
	if d.Allowed != (reply[0] == 1) {
		return core.Decision{}, fmt.Errorf("%w: the script's verdict (%d) is not core's", errReply, reply[0])
	}
	return d, nil
}
