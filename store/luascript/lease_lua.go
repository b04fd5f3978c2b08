package luascript

import (
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// The lease scripts (core.TokenLeaser): one atomic call grants a Limiter up
// to want tokens of a key, the most k from the request's cost to want that
// every limit admits, and spends them as a Take of cost k would. They read
// and write the very keys and values the decision scripts do (a key's state
// is one, leased or not), and take
//
//	KEYS: one per limit, as the decision scripts.
//	ARGV: the least cost, two figures per limit (as the decision scripts),
//	      now (µs, or -1 for the server's TIME), the min TTL (ms), want.
//
// and reply {k (0: denied), now, the state each limit had before}, as the
// decision scripts reply {allowed, now, states}: decodeGrant runs core's
// algorithm on those states to check the grant (core.TakeRequest.CheckGrant)
// and to build the Decision. Only the token bucket, GCRA and the fixed and
// sliding windows lease exactly (see core.TokenLease); the others have no
// lease script.

// luaLeaseMeter leases the token bucket's and GCRA's tokens: k is the
// fewest whole intervals left before any limit's T reaches now + tau.
const luaLeaseMeter = luaNow + `
local want = ARGV[opt + 2] + 0
local reply, T, RE, k = {0, now}, {}, {}, want
for i = 1, nk do
  local iv, tau = ARGV[2 * i] + 0, ARGV[2 * i + 1] + 0
  local v = redis.call('GET', KEYS[i])` + luaMeterRead + `
  reply[i + 2], RE[i] = t, re
  if t - now > tau then t = now + tau end
  if now > t then t = now end
  T[i] = t
  local room = math.floor((tau - (t - now)) / iv)
  if room < k then k = room end
end
if k >= cost then
  reply[1] = k
  for i = 1, nk do
    local iv = ARGV[2 * i] + 0
    local nt = T[i] + k * iv
    local us = nt - now` + luaTTL + `    redis.call('SET', KEYS[i], string.format('%d %d', nt, iv), 'PX', ms)
  end
  return reply
end
for i = 1, nk do
  if RE[i] then
    local iv = ARGV[2 * i] + 0
    local us = reply[i + 2] - now` + luaTTL + `    redis.call('SET', KEYS[i], string.format('%d %d', reply[i + 2], iv), 'PX', ms)
  end
end
return reply
`

// luaLeaseWindows leases the fixed and the sliding window's tokens: ROOM
// sets room, what the limit admits now (cur and prev its counts as FITS
// reads them), LIFE and STATELIFE are the decision scripts' lifetimes.
const luaLeaseWindows = luaNow + `
local want = ARGV[opt + 2] + 0
local reply, W, C, V, RE, k = {0, now}, {}, {}, {}, {}, want
for i = 1, nk do
  local rate, period = ARGV[2 * i] + 0, ARGV[2 * i + 1] + 0
  local st, sn, sp, re = 0, 0, 0, false
  local v = redis.call('GET', KEYS[i])
  if v then` + luaWindowRead + `
  end
  reply[3 * i], reply[3 * i + 1], reply[3 * i + 2], RE[i] = st, sn, sp, re
  local start = now - math.fmod(now, period)
  if st > start then st = start end
ROOM
  if room < k then k = room end
  W[i], C[i], V[i] = start, cur, prev
end
if k >= cost then
  reply[1] = k
  for i = 1, nk do
    local rate, period = ARGV[2 * i] + 0, ARGV[2 * i + 1] + 0
    local ws, wn, wp = W[i], C[i] + k, V[i]
    local us = LIFE` + luaTTL + luaWindowWrite + `
  end
  return reply
end
for i = 1, nk do
  if RE[i] then
    local rate, period, st = ARGV[2 * i] + 0, ARGV[2 * i + 1] + 0, reply[3 * i]
    local us = STATELIFE` + luaTTL + `    local ws, wn, wp = st, reply[3 * i + 1], reply[3 * i + 2]` + luaWindowWrite + `
  end
end
return reply
`

// luaFixedWindowRoom: Rate less the window's count.
const luaFixedWindowRoom = `  local cur, prev = 0, 0
  if st == start then cur = sn end
  local room = rate - cur`

// luaSlidingWindowRoom: the most room such that prev*(period-elapsed)/period
// + cur + room <= rate, in luaSlidingWindowFits's operations and order.
const luaSlidingWindowRoom = `  local cur, prev = 0, 0
  if st == start then
    cur, prev = sn, sp
  elseif st == start - period then
    prev = sn
  end
  local w = (period - (now - start)) / period
  local pw = prev * w
  local room = math.floor(rate - (pw + cur))
  while room > 0 and pw + (cur + room) > rate do room = room - 1 end`

// leaseScripts holds each leasable algorithm's lease script, indexed by the
// algorithm; nil for the others.
var leaseScripts = func() [core.GCRA + 1]*Script {
	var s [core.GCRA + 1]*Script
	s[core.TokenBucket] = newScript("lease token-bucket", luaLeaseMeter)
	s[core.GCRA] = newScript("lease gcra", luaLeaseMeter)
	s[core.FixedWindow] = newScript("lease fixed-window", strings.NewReplacer("CARRY", luaFixedWindowCarry, "ROOM", luaFixedWindowRoom,
		"STATELIFE", "st + period - now", "LIFE", "ws + period - now").Replace(luaLeaseWindows))
	s[core.SlidingWindow] = newScript("lease sliding-window", strings.NewReplacer("CARRY", luaSlidingWindowCarry, "ROOM", luaSlidingWindowRoom,
		"STATELIFE", "st + 2 * period - now", "LIFE", "ws + 2 * period - now").Replace(luaLeaseWindows))
	return s
}()

// LeaseScripts returns the scripts a Store's LeaseTokens may send, for a
// binding that loads its scripts ahead of use (as Scripts).
func LeaseScripts() []*Script {
	return []*Script{leaseScripts[core.TokenBucket], leaseScripts[core.FixedWindow], leaseScripts[core.SlidingWindow], leaseScripts[core.GCRA]}
}
