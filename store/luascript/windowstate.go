package luascript

// How the window scripts store a window's state (T, N, P) in Redis: as the
// text "I N P D", the window's index I = T / D, its count, the previous
// window's count (0 for the fixed window) and the period D (µs) it was
// written under: short text, which Redis keeps in one allocation with its
// object header. The
// key names no limit figures (keys.go), so the period in the value is what
// tells the script that reads it whether the limit's period was edited since:
// a state of another period is re-expressed (core's reexpressWindow) before
// the script decides. A count above the rate is read as it is (it denies
// until it has passed), but one the rate's bits cannot hold, at least 2^k
// where 2^(k-1) <= rate < 2^k, is cut to the rate, as core does.

// luaWindowRead sets st, sn, sp and re from the state v of limit i (rate,
// period and now in scope), or fails the call with a malformed state: any
// text not of the form "I N P D". A state of another period D carries what
// it counted at now into the window of period holding now: the fixed
// window's count, the sliding window's estimate rounded up (CARRY), with no
// previous count; re is then set, so the state is written back.
const luaWindowRead = `
    local a, b, c, d = string.match(v, '^(%d+) (%d+) (%d+) (%d+)$')
    if not a then
      return redis.error_reply('ratewarden: malformed state at ' .. KEYS[i])
    end
    local od = tonumber(d)
    st, sn, sp = tonumber(a) * od, tonumber(b), tonumber(c)
    if od ~= period and od > 0 then
      local os = now - math.fmod(now, od)
      if st > os then st = os end
      local used = 0
CARRY
      st, sn, sp, re = 0, 0, 0, true
      if used > 0 then st, sn = now - math.fmod(now, period), used end
    end
    if sn > rate or sp > rate then
      local top = 1
      while top <= rate do top = top * 2 end
      if sn >= top then sn = rate end
      if sp >= top then sp = rate end
    end`

// luaFixedWindowCarry is the fixed window's count at now under the old
// period od, whose window holding now starts at os.
const luaFixedWindowCarry = `      if st == os then used = sn end`

// luaSlidingWindowCarry is the sliding window's estimate at now under the
// old period od, rounded up, in core's swEstimate operations.
const luaSlidingWindowCarry = `      local cur, prev = 0, 0
      if st == os then
        cur, prev = sn, sp
      elseif st == os - od then
        prev = sn
      end
      local w = (od - (now - os)) / od
      used = math.ceil(prev * w + cur)`

// luaWindowWrite writes the state (ws, wn, wp) of limit i (rate, period and
// its TTL ms in scope).
const luaWindowWrite = `
    redis.call('SET', KEYS[i], string.format('%d %d %d %d', ws / period, wn, wp, period), 'PX', ms)`
