package luascript

import "strings"

// The scripts of a request of one limit that reply with one integer (the
// "+one" scripts, sent only to a Backend that is an IntegerReplier): the
// meters' and the windows' bodies of lua.go, with a head that reads the
// limit's two figures and a reply of one integer instead of a table.

// luaMeterOneInt is the meters' script for a request of one limit, with
// luaMeter's KEYS and ARGV or, for a spend of 1 with nothing after the
// figures, ARGV {interval, tau} (luaOneHead), that replies with one
// integer instead of a table
// (a table reply costs Redis about a tenth of the call, and each of its
// integers more): the time the state held beyond now, max(T - now, 0), when
// the request is admitted, and -1 minus it when denied. Nothing else in a
// meter's decision depends on now, so decodeGap runs core's algorithm on that
// gap at an instant of its own.
var luaMeterOneInt = strings.NewReplacer("FIG1", "iv", "FIG2", "tau").Replace(luaOneHead) + luaMeterRefund + strings.Replace(luaMeterOne, "    return {1, now, t0}\n", `    if t0 > now then return t0 - now end
    return 0
`, 1) + `if t0 > now then return now - t0 - 1 end
return -1
`

// luaOneHead is luaNow for a script of one limit, which also reads the
// limit's two figures into FIG1 and FIG2 (iv and tau for the meters, rate
// and period for the windows): ARGV is luaNow's {cost, figure, figure, ...},
// or {figure, figure} for a spend of 1 on Redis's clock with no TTL floor
// (shortOneCall), nearly every call, which spares Redis an argument.
const luaOneHead = `
if #KEYS ~= 1 then return redis.error_reply('ratewarden: one key expected') end
local nk, i, cost, FIG1, FIG2, now, minttl, opt = 1, 1, 1, 0, 0, -1, 0, 4
if ARGV[3] then
  cost, FIG1, FIG2 = ARGV[1] + 0, ARGV[2] + 0, ARGV[3] + 0
  if cost < 0 then opt = 5 end
  if ARGV[opt] then now, minttl = ARGV[opt] + 0, ARGV[opt + 1] + 0 end
else
  FIG1, FIG2 = ARGV[1] + 0, ARGV[2] + 0
end
if now < 0 then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
`

// luaWindowOneInt is the windows' script for a request of one limit whose
// figures let the decision's inputs fit one integer below 2^52 (packsWindow),
// with luaWindows' KEYS and ARGV or, for a spend of 1 with nothing after the
// figures, ARGV {rate, period} (luaOneHead). It replies with one integer
// instead of a table: x = q * period + (now - start), q being the count of the
// window holding now (the fixed window, GAP q = count) or both counts (the
// sliding window, GAP q = cur * 2 * rate + prev), each below 2 * rate as the
// scripts cut them (luaWindowRead); x when the request is admitted, -1 - x
// when denied. Nothing else in a window's decision depends on now or the
// state (decodeGap). FITS, REFUND, LIFE and STATELIFE are luaWindows'.
const luaWindowOneInt = luaWindowsRefund + luaWindowsOne + `  local x = (GAP) * period + (now - start)
  if fits then return x end
  return -1 - x
`
