package luascript

// The scripts decide and write; core explains. Every script takes
//
//	KEYS: one per limit, in the request's order.
//	ARGV: the cost, then two figures per limit: interval and tau (µs) for the
//	      token bucket, the leaky bucket and GCRA; rate and period (µs) for
//	      the windows; then, for a refund only, the admission's age (µs);
//	      then, only when the store runs on the caller's clock or with a TTL
//	      floor, or for a refund, now (µs, or -1 for the server's TIME) and
//	      the min TTL (ms); then, for a refund, the channel and payload of
//	      its announcement (luaAnnounce).
//
// Each argument costs Redis a string per call, as much as a few dozen Lua
// operations, so a store on its defaults (Redis's clock, no TTL floor) sends
// the cost and its figures and nothing else, and a spend of 1 on one limit
// through a Backend that reads one-integer replies (the "+one" scripts,
// luaOneHead) only the figures.
//
// A negative cost is a refund of -cost, admitted age µs before now (on the
// server's clock, so a skew between the caller's and Redis's clocks never
// moves it into another window). Each script gives it back first, by core's
// rules (core/refund.go), in its own block that the spend path skips with one
// comparison, and then carries on as a peek (cost 0), so a refund replies
// exactly as a peek of the state it left.
//
// The meter and window scripts test whether every limit admits the request,
// write the new states only when all do (or, for a denied spend, the rebase of
// state a clock that stepped back left in the future: core's rebase), and
// reply with what they read:
//
//	{allowed (0/1), now, the state each limit had before the request...}
//
// one integer (T) per limit for the meters, three (T, N, P) for the windows,
// as re-expressed under the request's figures when they were written under
// others.
// decode then runs core's own algorithm on those states at that instant, which
// yields the whole Decision (remaining, reset, retry, delay, the governing
// limit) without computing any of it in Lua, and checks that core agrees with
// the script's verdict. The scripts stay short: one TIME, one GET and one SET
// per limit, no closures built per call, a reply of a few integers. A request
// of one limit, nearly every request, takes a path of its own that builds no
// table but its reply. The meters' requests of one limit without a penalty
// box, nearly all of them, run a script of their own that replies with one
// integer instead of an array (luaMeterOneInt, decodeGap): an array costs
// Redis more than the figures in it. The sliding log, whose state is a list,
// decides entirely in Lua and replies with the Decision's six integers (see
// luaSlidingLog); the reset script replies with the number of keys it
// deleted. Every other reply is an array of integers.
//
// Lua's numbers are IEEE doubles. Every figure stays below 2^53 (core bounds
// periods to 2^48 µs and times to 2^52 µs), where doubles hold integers exactly;
// floor(a / b) of non-negative a < 2^53 is Go's integer division (the rounded
// quotient never reaches the next integer), math.fmod is an exact modulo, and
// the sliding window's estimate performs the same double operations in the
// same order as core's. Arguments are read with Lua's own conversion of a
// string operand (ARGV[1] + 0, as tonumber does, without a function call). A
// number passed to redis.call is written with 17 significant digits (Redis
// does so since 2.8: exact below 2^53), which suits the small TTLs; the
// states, 16 digits, go as string.format('%d') text, which is exact and costs
// Redis less than formatting a double; never tostring or .., which keep only
// 14 digits.

// luaNow reads the arguments every script shares.
const luaNow = `
local nk = #KEYS
local cost, now, minttl, opt = ARGV[1] + 0, -1, 0, 2 * nk + 2
if cost < 0 then opt = opt + 1 end
if ARGV[opt] then now, minttl = ARGV[opt] + 0, ARGV[opt + 1] + 0 end
if now < 0 then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
`

// luaAnnounce announces a refund: every store that follows the channel
// drops its cached denials of the key (announce.go).
const luaAnnounce = `
  redis.call('PUBLISH', ARGV[opt + 2], ARGV[opt + 3])
`

// luaTTL sets ms to the lifetime us (µs) in whole milliseconds, rounded up, at
// least 1 and at least the floor.
const luaTTL = `
    local ms = math.floor((us + 999) / 1000)
    if ms < minttl then ms = minttl end
    if ms < 1 then ms = 1 end
`

// luaMeter is the token bucket, the leaky bucket and GCRA (core/gcra.go): the
// state is T and the emission interval it was written under (luaMeterRead);
// a request is admitted when max(T, now) + cost*interval - now <= tau (a
// cost above the burst never is). A T beyond now + tau, which only a clock
// that stepped back leaves, reads as now + tau (an empty meter at now), and
// a spend or a refund writes it so even when denied (core's rebase). A state
// written under another interval is re-expressed, and written so whatever
// the decision, as core's Reexpress and the memory store do.
const luaMeter = luaNow + luaMeterRefund + "if nk == 1 then\n  local i, iv, tau = 1, ARGV[2] + 0, ARGV[3] + 0\n" + luaMeterOne + `  return {0, now, t0}
end
` + luaMeterMany

// luaMeterRefund gives a refund back (a negative cost), limit by limit, and
// carries on as a peek (cost 0).
const luaMeterRefund = `
if cost < 0 then` + luaAnnounce + `
  local adm = now - tonumber(ARGV[2 * nk + 2])
  for i = 1, nk do
    local iv, tau = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
    local v = redis.call('GET', KEYS[i])` + luaMeterRead + `
    local t0 = t
    if t - now > tau then t = now + tau end
    if t > now and now - adm < tau then
      local back = -cost * iv
      if back > tau then back = tau end
      t = t - back
      if t < now then t = now end
    end
    if t ~= t0 or re then
      local us = t - now` + luaTTL + `      redis.call('SET', KEYS[i], string.format('%d %d', t, iv), 'PX', ms)
    end
  end
  cost = 0
end
`

// luaMeterOne decides a request of one limit, with i (1), iv and tau set,
// and replies {1, now, T} when it
// is admitted, T being the state it found; the caller appends the denial's
// reply (luaMeter's {0, now, T}, luaMeterOneInt's one integer).
const luaMeterOne = `  local v = redis.call('GET', KEYS[1])` + luaMeterRead + `
  local t0 = t
  local rebased = t - now > tau
  if rebased then t = now + tau end
  if now > t then t = now end
  t = t + cost * iv
  if t - now <= tau then
    if cost > 0 then
      local us = t - now` + luaTTL + `      redis.call('SET', KEYS[1], string.format('%d %d', t, iv), 'PX', ms)
    elseif re then
      local us = t0 - now` + luaTTL + `      redis.call('SET', KEYS[1], string.format('%d %d', t0, iv), 'PX', ms)
    end
    return {1, now, t0}
  end
  if rebased and cost > 0 then
    local us = tau` + luaTTL + `    redis.call('SET', KEYS[1], string.format('%d %d', now + tau, iv), 'PX', ms)
  elseif re then
    local us = t0 - now` + luaTTL + `    redis.call('SET', KEYS[1], string.format('%d %d', t0, iv), 'PX', ms)
  end
`

// luaMeterMany decides a request of several limits.
const luaMeterMany = `local reply, nxt, rebased, RE = {1, now}, {}, false, {}
for i = 1, nk do
  local iv, tau = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local v = redis.call('GET', KEYS[i])` + luaMeterRead + `
  reply[i + 2], RE[i] = t, re
  if t - now > tau then t, rebased = now + tau, true end
  if now > t then t = now end
  t = t + cost * iv
  if t - now > tau then reply[1] = 0 end
  nxt[i] = t
end
if reply[1] == 1 and cost > 0 then
  for i = 1, nk do
    local us = nxt[i] - now` + luaTTL + `    redis.call('SET', KEYS[i], string.format('%d %d', nxt[i], ARGV[2 * i] + 0), 'PX', ms)
  end
else
  for i = 1, nk do
    local iv, tau = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
    if rebased and cost > 0 and reply[i + 2] - now > tau then
      local us = tau` + luaTTL + `      redis.call('SET', KEYS[i], string.format('%d %d', now + tau, iv), 'PX', ms)
    elseif RE[i] then
      local us = reply[i + 2] - now` + luaTTL + `      redis.call('SET', KEYS[i], string.format('%d %d', reply[i + 2], iv), 'PX', ms)
    end
  end
end
return reply
`

// luaMeterRead sets t from the meter's state v of limit i ("T I": T and the
// emission interval I it was written under; none is a fresh meter), with
// iv, tau and now in scope, or fails the call with a malformed state. A T
// ahead of now written under another interval is re-expressed (core's
// reexpressMeter, in the same double operations: the whole intervals owed
// exactly, the rest rounded up and one µs more, at most tau), and re set.
const luaMeterRead = `
    local t, re = 0, false
    if v then
      local a, b = string.match(v, '^(%d+) (%d+)$')
      if not a then
        return redis.error_reply('ratewarden: malformed state at ' .. KEYS[i])
      end
      t = tonumber(a)
      local ov = tonumber(b)
      if ov ~= iv and t > now and ov > 0 then
        local owed = t - now
        local q = math.floor(owed / ov)
        local x = tau
        if q <= math.floor(tau / iv) then
          x = q * iv
          local r = owed - q * ov
          if r > 0 then x = x + math.ceil(r * iv / ov) + 1 end
          if x > tau then x = tau end
        end
        t, re = now + x, true
      end
    end`

// luaWindows is the fixed and the sliding window (core/window.go); FITS is the
// algorithm's admission test, REFUND its refund of n admitted in the window
// starting at astart (every state is read and checked before any is
// written), and LIFE and STATELIFE the lifetime of the state it writes. The state
// is (T, N, P): the window's start, its count, and for the sliding window the
// previous window's count, stored as one integer or, when that would not fit,
// with the period it was written under (luaWindowRead, luaWindowWrite):
// a state of another period is re-expressed, and written so whatever the
// decision. math.fmod is exact, unlike Lua 5.1's %. A window that starts after the one holding now (a clock that
// stepped back) reads as that one, its counts carried, and a spend or a
// refund writes it so even when denied (core's rebase).
const luaWindows = luaNow + luaWindowsRefund + "if nk == 1 then\n  local i, rate, period = 1, ARGV[2] + 0, ARGV[3] + 0\n" + luaWindowsOne + `  if fits then return {1, now, ost, sn, sp} end
  return {0, now, ost, sn, sp}
end
` + luaWindowsMany

// luaWindowsRefund gives a refund back (a negative cost), limit by limit,
// and carries on as a peek (cost 0).
const luaWindowsRefund = `
if cost < 0 then` + luaAnnounce + `
  local n, adm, R = -cost, now - tonumber(ARGV[2 * nk + 2]), {}
  for i = 1, nk do
    local rate, period = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
    local v = redis.call('GET', KEYS[i])
    if v then
      local st, sn, sp, re = 0, 0, 0, false` + luaWindowRead + `
      local start = now - math.fmod(now, period)
      local ost, on, op = st, sn, sp
      if st > start then st = start end
      local astart = adm - math.fmod(adm, period)
REFUND
      if st ~= ost or sn ~= on or sp ~= op or re then R[i] = {st, sn, sp} end
    end
  end
  for i = 1, nk do
    if R[i] then
      local rate, period, st = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1]), R[i][1]
      local us = STATELIFE` + luaTTL + `      local ws, wn, wp = st, R[i][2], R[i][3]` + luaWindowWrite + `
    end
  end
  cost = 0
end
`

// luaWindowsOne decides a request of one limit, with i (1), rate and period
// set, and leaves fits, the state it read (ost, sn, sp) and the window
// holding now (start) for the reply.
const luaWindowsOne = `  local st, sn, sp, re = 0, 0, 0, false
  local v = redis.call('GET', KEYS[1])
  if v then` + luaWindowRead + `
  end
  local ost, start = st, now - math.fmod(now, period)
  if st > start then st = start end
FITS
  if cost > 0 and fits then
    local us = LIFE` + luaTTL + luaWindowWrite + `
  elseif cost > 0 and ost > start then
    local us = STATELIFE` + luaTTL + `    local ws, wn, wp = st, sn, sp` + luaWindowWrite + `
  elseif re then
    local st = ost
    local us = STATELIFE` + luaTTL + `    local ws, wn, wp = ost, sn, sp` + luaWindowWrite + `
  end
`

// luaWindowsMany decides a request of several limits.
const luaWindowsMany = `local reply, W, C, V, RE, rebased = {1, now}, {}, {}, {}, {}, false
for i = 1, nk do
  local rate, period = ARGV[2 * i] + 0, ARGV[2 * i + 1] + 0
  local st, sn, sp, re = 0, 0, 0, false
  local v = redis.call('GET', KEYS[i])
  if v then` + luaWindowRead + `
  end
  reply[3 * i], reply[3 * i + 1], reply[3 * i + 2], RE[i] = st, sn, sp, re
  local start = now - math.fmod(now, period)
  if st > start then st, rebased = start, true end
FITS
  if not fits then reply[1] = 0 end
  W[i], C[i], V[i] = ws, wn, wp
end
if reply[1] == 1 and cost > 0 then
  for i = 1, nk do
    local rate, period = ARGV[2 * i] + 0, ARGV[2 * i + 1] + 0
    local ws, wn, wp = W[i], C[i], V[i]
    local us = LIFE` + luaTTL + luaWindowWrite + `
  end
else
  for i = 1, nk do
    local rate, period = ARGV[2 * i] + 0, ARGV[2 * i + 1] + 0
    local st = now - math.fmod(now, period)
    if rebased and cost > 0 and reply[3 * i] > st then
      local us = STATELIFE` + luaTTL + `      local ws, wn, wp = st, reply[3 * i + 1], reply[3 * i + 2]` + luaWindowWrite + `
    elseif RE[i] then
      st = reply[3 * i]
      local us = STATELIFE` + luaTTL + `      local ws, wn, wp = st, reply[3 * i + 1], reply[3 * i + 2]` + luaWindowWrite + `
    end
  end
end
return reply
`

// luaFixedWindowFits: Rate per aligned window. Every FITS sets fits (the
// request fits this limit) and ws, wn, wp (the state it leaves when
// admitted).
const luaFixedWindowFits = `  local count = 0
  if st == start then count = sn end
  local fits = count + cost <= rate
  local ws, wn, wp = start, count + cost, 0`

// luaFixedWindowRefund: the count drops by n when the admission's window is
// the current one.
const luaFixedWindowRefund = `      if st == start and astart == start then
        sn = sn - n
        if sn < 0 then sn = 0 end
      end`

// luaSlidingWindowRefund: the count of the admission's window drops by n,
// when that window is the current or the previous one.
const luaSlidingWindowRefund = `      if st == start and astart == start then
        sn = sn - n
      elseif st == start and astart == start - period then
        sp = sp - n
      elseif st == start - period and astart == st then
        sn = sn - n
      end
      if sn < 0 then sn = 0 end
      if sp < 0 then sp = 0 end`

// luaSlidingWindowFits: prev*(period-elapsed)/period + cur + cost <= rate,
// with swEstimate's operations in swEstimate's order.
const luaSlidingWindowFits = `  local cur, prev = 0, 0
  if st == start then
    cur, prev = sn, sp
  elseif st == start - period then
    prev = sn
  end
  local elapsed = now - start
  if elapsed < 0 then elapsed = 0 end
  local fits = cost <= rate
  if fits then
    local w = (period - elapsed) / period
    local pw = prev * w
    fits = pw + (cur + cost) <= rate
  end
  local ws, wn, wp = start, cur + cost, prev`

// luaReset deletes the keys of one request (they share a hash tag, so one
// slot), announces the reset (ARGV: the channel and the payload,
// announce.go), and replies {the number deleted}.
const luaReset = `local n = redis.call('DEL', unpack(KEYS))
redis.call('PUBLISH', ARGV[1], ARGV[2])
return {n}
`
