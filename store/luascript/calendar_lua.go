package luascript

import "strings"

// The calendar window scripts: the fixed and the sliding window for a
// request with at least one calendar limit (core.Limit.Calendar). Redis has
// no time zone database, so the caller computes each calendar limit's
// window bounds around its own clock (core.TakeRequest.CalendarBounds) and
// sends them as the limit's second figure, the text "b1,b2,b3,b4,b5,b6":
// the starts of five consecutive windows and the end of the last (µs). The
// script picks the window holding its now (Redis's TIME) among the middle
// three, so Redis's clock and the caller's may differ by up to a window;
// when they differ by more it writes nothing and replies {-1, now}, and the
// store sends the bounds around that now instead. Any other limit of the
// request sends its period, as in the window scripts.
//
// A calendar limit's state is the text "T N P 0": its window's start in µs
// (no whole number of periods), its count and the previous window's count,
// and 0 where a period would be; any other limit's is "I N P D" as in
// windowstate.go. A state written under other windows is carried as core
// carries it (core's reexpressWindow and reexpressCalendar): one written
// under a period D (another period, or a plain limit edited into a calendar
// one) carries what it counted at now (CARRY) into the window holding now;
// one written under a calendar whose window start is none of this limit's
// bounds (its zone, anchor or unit was edited) carries both its counts when
// it started in the previous window or later, and within 64 days.
//
// Every state is read and its window picked before any is written; the
// decision, the writes and the reply then follow the window scripts: {allowed,
// now, T, N, P per limit} with the states as read (re-expressed), from which
// decode runs core's algorithm at now, on core's own calendar windows.

// luaCalendarWindows is the calendar window script; FITS, CARRY, REFUND and
// LIFE are the algorithm's (calendarScript fills them in).
const luaCalendarWindows = luaNow + `
local carryage = 5529600000000
local R, W = {1, now}, {}
for i = 1, nk do
  local rate, spec = ARGV[2 * i] + 0, ARGV[2 * i + 1]
  local period, pv, start, en, nx, B = tonumber(spec), 0, 0, 0, 0, nil
  if period then
    start = now - math.fmod(now, period)
    pv, en, nx = start - period, start + period, start + 2 * period
  else
    period = 0
    local b1, b2, b3, b4, b5, b6 = string.match(spec, '^(%d+),(%d+),(%d+),(%d+),(%d+),(%d+)$')
    if not b1 then
      return redis.error_reply('ratewarden: malformed calendar bounds for ' .. KEYS[i])
    end
    B = {tonumber(b1), tonumber(b2), tonumber(b3), tonumber(b4), tonumber(b5), tonumber(b6)}
    local k = 0
    for j = 2, 4 do
      if B[j] <= now and now < B[j + 1] then k = j end
    end
    if k == 0 then return {-1, now} end
    pv, start, en, nx = B[k - 1], B[k], B[k + 1], B[k + 2]
  end
  local st, sn, sp, re = 0, 0, 0, false
  local v = redis.call('GET', KEYS[i])
  if v then
    local a, b, c, d = string.match(v, '^(%d+) (%d+) (%d+) (%d+)$')
    if not a then
      return redis.error_reply('ratewarden: malformed state at ' .. KEYS[i])
    end
    local od = tonumber(d)
    st, sn, sp = tonumber(a), tonumber(b), tonumber(c)
    if od > 0 then st = st * od end
    if od > 0 and od ~= period then
      local os = now - math.fmod(now, od)
      if st > os then st = os end
      local used = 0
CARRY
      st, sn, sp, re = 0, 0, 0, true
      if used > 0 then st, sn = start, used end
    elseif od == 0 then
      local known = false
      if B then
        for j = 1, 6 do
          if B[j] == st then known = true end
        end
      else
        known = math.fmod(st, period) == 0
      end
      if not known and st >= pv and st > now - carryage then
        local used = sn + sp
        st, sn, sp, re = 0, 0, 0, true
        if used > 0 then st, sn = start, used end
      end
    end
    if sn > rate or sp > rate then
      local top = 1
      while top <= rate do top = top * 2 end
      if sn >= top then sn = rate end
      if sp >= top then sp = rate end
    end
  end
  W[i] = {rate, period, pv, start, en, nx, st, sn, sp, re}
end
if cost < 0 then` + luaAnnounce + `
  local n, adm = -cost, now - tonumber(ARGV[2 * nk + 2])
  for i = 1, nk do
    local w = W[i]
    local period, pv, start, st, sn, sp = w[2], w[3], w[4], w[7], w[8], w[9]
    local ost, on, op = st, sn, sp
    if st > start then st = start end
    local astart = -1
    if period > 0 then
      astart = adm - math.fmod(adm, period)
    else
      local B = {}
      for b in string.gmatch(ARGV[2 * i + 1], '%d+') do B[#B + 1] = tonumber(b) end
      for j = 1, 5 do
        if B[j] <= adm and adm < B[j + 1] then astart = B[j] end
      end
    end
REFUND
    if st ~= ost or sn ~= on or sp ~= op then w[7], w[8], w[9], w[10] = st, sn, sp, true end
  end
  cost = 0
end
local fitsAll = true
for i = 1, nk do
  local w = W[i]
  local rate, pv, start, en, st, sn, sp = w[1], w[3], w[4], w[5], w[7], w[8], w[9]
  R[3 * i], R[3 * i + 1], R[3 * i + 2] = st, sn, sp
  if st > start then st = start end
FITS
  if not fits then fitsAll = false end
  w[11], w[12], w[13] = ws, wn, wp
end
if not fitsAll then R[1] = 0 end
for i = 1, nk do
  local w = W[i]
  local period, start, en, nx, st, sn, sp, re = w[2], w[4], w[5], w[6], w[7], w[8], w[9], w[10]
  local ws, wn, wp = nil, 0, 0
  if fitsAll and cost > 0 then
    ws, wn, wp = w[11], w[12], w[13]
  elseif cost > 0 and st > start then
    ws, wn, wp = start, sn, sp
  elseif re then
    ws, wn, wp = st, sn, sp
  end
  if ws then
    local life = now
    if ws == start then life = LIFE elseif ws == w[3] then life = PREVLIFE end
    local us = life - now` + luaTTL + `    if period > 0 then
      redis.call('SET', KEYS[i], string.format('%d %d %d %d', ws / period, wn, wp, period), 'PX', ms)
    else
      redis.call('SET', KEYS[i], string.format('%d %d %d 0', ws, wn, wp), 'PX', ms)
    end
  end
end
return R
`

// luaCalendarFixedFits is the fixed window's FITS on a picked window.
const luaCalendarFixedFits = `  local count = 0
  if st == start then count = sn end
  local fits = count + cost <= rate
  local ws, wn, wp = start, count + cost, 0`

// luaCalendarSlidingFits is the sliding window's FITS on a picked window:
// core's swEstimate over the window's own length.
const luaCalendarSlidingFits = `  local cur, prev = 0, 0
  if st == start then
    cur, prev = sn, sp
  elseif st == pv then
    prev = sn
  end
  local elapsed = now - start
  if elapsed < 0 then elapsed = 0 end
  local fits = cost <= rate
  if fits then
    local len = en - start
    local wt = (len - elapsed) / len
    local pw = prev * wt
    fits = pw + (cur + cost) <= rate
  end
  local ws, wn, wp = start, cur + cost, prev`

// luaCalendarSlidingRefund is the sliding window's refund on a picked window.
const luaCalendarSlidingRefund = `    if st == start and astart == start then
      sn = sn - n
    elseif st == start and astart == pv then
      sp = sp - n
    elseif st == pv and astart == st then
      sn = sn - n
    end
    if sn < 0 then sn = 0 end
    if sp < 0 then sp = 0 end`

// luaCalendarFixedRefund is the fixed window's refund on a picked window.
const luaCalendarFixedRefund = `    if st == start and astart == start then
      sn = sn - n
      if sn < 0 then sn = 0 end
    end`

// calendarScript builds the fixed (sliding false) or sliding calendar
// window script.
func calendarScript(sliding bool) string {
	if sliding {
		return strings.NewReplacer("CARRY", luaSlidingWindowCarry, "FITS", luaCalendarSlidingFits,
			"REFUND", luaCalendarSlidingRefund, "PREVLIFE", "en", "LIFE", "nx").Replace(luaCalendarWindows)
	}
	return strings.NewReplacer("CARRY", luaFixedWindowCarry, "FITS", luaCalendarFixedFits,
		"REFUND", luaCalendarFixedRefund, "PREVLIFE", "start", "LIFE", "en").Replace(luaCalendarWindows)
}
