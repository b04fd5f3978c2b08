package luascript

// How the window scripts store a window's state (T, N, P) in Redis: as one
// integer when it fits, since Redis keeps a string that reads as an integer in
// its 16-byte object header (a three-number string takes a 40-byte
// allocation besides), or else as the text "T N P". With the limit's rate R,
// M = R + 1, and the window's index I = T / period (T is a multiple of the
// period), the integer is
//
//	(I*M + N)*M + P
//
// written only when (I + 1)*M*M < 2^53, so that it and every step of its
// reading are exact in Lua's doubles, and N and P are at most R (a window
// never counts more than its rate). The key names the rate and the period, so
// the script that reads a state knows the M and the period it was written
// with. Both forms are read: a limit whose integer no longer fits (its window
// index grows with time) is written as text from then on.

// luaWindowRead sets st, sn and sp from the state v of limit i (rate and
// period in scope), or fails the call with a malformed state. The integer
// form, the one written unless it would not fit, is tried first: tonumber
// and a few comparisons cost far less than a pattern match. A value that
// reads as a number but not as an integer in [0, 2^53) (negative,
// fractional, too large to be exact) is malformed, and so is any text not of
// the form "T N P".
const luaWindowRead = `
    local x = tonumber(v)
    if x and x >= 0 and x < 9007199254740992 and x % 1 == 0 then
      local m = rate + 1
      sp = math.fmod(x, m)
      x = (x - sp) / m
      sn = math.fmod(x, m)
      st = (x - sn) / m * period
    else
      local a, b, c = string.match(v, '^(%d+) (%d+) (%d+)$')
      if not a then
        return redis.error_reply('ratewarden: malformed state at ' .. KEYS[i])
      end
      st, sn, sp = tonumber(a), tonumber(b), tonumber(c)
    end`

// luaWindowWrite writes the state (ws, wn, wp) of limit i (rate, period and
// its TTL ms in scope).
const luaWindowWrite = `
    local m = rate + 1
    local idx = ws / period
    if wn <= rate and wp <= rate and (idx + 1) * m * m < 9007199254740992 then
      redis.call('SET', KEYS[i], string.format('%d', (idx * m + wn) * m + wp), 'PX', ms)
    else
      redis.call('SET', KEYS[i], string.format('%d %d %d', ws, wn, wp), 'PX', ms)
    end`
