package luascript

// The scripts are assembled from a shared frame and one algorithm body each.
//
// ARGV: now (µs, or -1 for the server's TIME), cost, min TTL (ms), then five
// figures per limit: rate, period (µs), burst, interval (µs), tau (µs).
// KEYS: one per limit, in the request's order.
// Reply: allowed (0/1), exceeds (0/1), governing index (0-based), remaining,
// reset-after (µs), retry-after (µs), delay (µs).
//
// Lua's numbers are IEEE doubles. Every figure stays below 2^53 (core bounds
// periods to 2^48 µs and times to 2^52 µs), where doubles hold integers exactly;
// floor(a / b) of non-negative a < 2^53 is Go's integer division (the rounded
// quotient never reaches the next integer), math.fmod is an exact modulo, and
// the sliding window's estimate performs the same double operations in the
// same order as core's. Integers are written with string.format('%d'), never
// tostring, which keeps only 14 digits.

const luaHead = `
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local cost = tonumber(ARGV[2])
local minttl = tonumber(ARGV[3])
local floor = math.floor
local format = string.format

-- ttl converts a lifetime in µs to whole milliseconds, rounded up, at least 1
-- and at least the floor.
local function ttl(us)
  local ms = floor((us + 999) / 1000)
  if ms < minttl then ms = minttl end
  if ms < 1 then ms = 1 end
  return ms
end
`

// luaMeter is the token bucket, the leaky bucket and GCRA (core/gcra.go). State:
// the integer T. QUEUE is true for the leaky bucket. Remaining is Go's
// truncating division of a numerator clamped at 0, so floor is exact.
const luaMeter = `
local function load(key)
  return tonumber(redis.call('GET', key)) or 0, 0, 0
end

local function decide(st, sn, sp, rate, period, burst, interval, tau, key, commit)
  local tat = st
  if now > tat then tat = now end
  if cost > burst then
    local r = tau - (tat - now)
    if r < 0 then r = 0 end
    return 0, 1, floor(r / interval), tat - now, period, 0
  end
  local nxt = tat + cost * interval
  if nxt - now <= tau then
    if commit and cost > 0 then
      redis.call('SET', key, format('%d', nxt), 'PX', ttl(nxt - now))
    end
    local delay = 0
    if QUEUE then delay = tat - now end
    return 1, 0, floor((tau - (nxt - now)) / interval), nxt - now, 0, delay
  end
  local r = tau - (tat - now)
  if r < 0 then r = 0 end
  return 0, 0, floor(r / interval), tat - now, nxt - tau - now, 0
end
`

// luaWindowLoad reads the fixed and sliding windows' state, a string "T N P"
// (integers written with %d: Lua's tostring keeps only 14 digits).
const luaWindowLoad = `
local function load(key)
  local v = redis.call('GET', key)
  if not v then return 0, 0, 0 end
  local t, n, pv = string.match(v, '^(%S+) (%S+) (%S+)$')
  return tonumber(t), tonumber(n), tonumber(pv)
end
`

// luaFixedWindow is core's fixedWindow. math.fmod is exact, unlike Lua 5.1's %.
const luaFixedWindow = luaWindowLoad + `
local function decide(st, sn, sp, rate, period, burst, interval, tau, key, commit)
  local start = now - math.fmod(now, period)
  if st > start then start = st end
  local count = 0
  if st == start then count = sn end
  local wend = start + period
  local reset = 0
  if count > 0 then reset = wend - now end
  if cost > rate then
    return 0, 1, rate - count, reset, period, 0
  end
  if count + cost <= rate then
    if commit and cost > 0 then
      redis.call('SET', key, format('%d %d 0', start, count + cost), 'PX', ttl(wend - now))
    end
    if count + cost > 0 then reset = wend - now end
    return 1, 0, rate - count - cost, reset, 0, 0
  end
  return 0, 0, rate - count, reset, wend - now, 0
end
`

// luaSlidingWindow is core's slidingWindow, swEstimate and swRetry, with the
// same double operations in the same order. Go's int64(x) truncates toward
// zero; x is never negative where it is converted.
const luaSlidingWindow = luaWindowLoad + `
local function estimate(prev, cur, elapsed, period)
  local w = (period - elapsed) / period
  local pw = prev * w
  return pw + cur
end

local function trunc(x)
  if x >= 0 then return floor(x) end
  return -floor(-x)
end

local function retry(prev, cur, start, rate, period)
  local t
  if cur + cost <= rate then
    t = start + trunc(period - (rate - cur - cost) * period / prev)
  else
    local need = trunc(period - (rate - cost) * period / cur)
    if need < 0 then need = 0 end
    t = start + period + need
  end
  if t < now + 1 then t = now + 1 end
  while true do
    local e = t - start
    if e < period then
      if estimate(prev, cur + cost, e, period) <= rate then break end
    elseif e < 2 * period then
      if estimate(cur, cost, e - period, period) <= rate then break end
    else
      break
    end
    t = t + 1
  end
  return t - now
end

local function decide(st, sn, sp, rate, period, burst, interval, tau, key, commit)
  local start = now - math.fmod(now, period)
  if st > start then start = st end
  local cur, prev = 0, 0
  if st == start then
    cur, prev = sn, sp
  elseif st == start - period then
    prev = sn
  end
  local elapsed = now - start
  if elapsed < 0 then elapsed = 0 end
  local wend = start + period
  if cost <= rate then
    local est = estimate(prev, cur + cost, elapsed, period)
    if est <= rate then
      if commit and cost > 0 then
        redis.call('SET', key, format('%d %d %d', start, cur + cost, prev), 'PX', ttl(start + 2 * period - now))
      end
      local r = rate - est
      if r <= 0 then r = 0 else r = floor(r) end
      local reset = 0
      if cur + cost > 0 then reset = wend + period - now elseif prev > 0 then reset = wend - now end
      return 1, 0, r, reset, 0, 0
    end
  end
  local r = rate - estimate(prev, cur, elapsed, period)
  if r <= 0 then r = 0 else r = floor(r) end
  local reset = 0
  if cur > 0 then reset = wend + period - now elseif prev > 0 then reset = wend - now end
  if cost > rate then
    return 0, 1, r, reset, period, 0
  end
  return 0, 0, r, reset, retry(prev, cur, start, rate, period), 0
end
`

// luaSlidingLog is core's slidingLog over a Redis list of admitted timestamps,
// oldest first, never more than Rate entries. Timestamps never decrease, so the
// entries that left the window are a prefix, found by binary search; as in
// core, they are dropped only when a request is admitted, so a denial or a peek
// writes nothing.
const luaSlidingLog = `
local function load(key)
  return 0, 0, 0
end

local function expired(key, total, cutoff)
  if total == 0 then return 0 end
  if tonumber(redis.call('LINDEX', key, 0)) > cutoff then return 0 end
  local lo, hi = 1, total
  while lo < hi do
    local m = floor((lo + hi) / 2)
    if tonumber(redis.call('LINDEX', key, m)) <= cutoff then lo = m + 1 else hi = m end
  end
  return lo
end

local function push(key, ts, count)
  local v = format('%d', ts)
  while count > 0 do
    local m = count
    if m > 1000 then m = 1000 end
    local a = {}
    for j = 1, m do a[j] = v end
    redis.call('RPUSH', key, unpack(a))
    count = count - m
  end
end

local function decide(st, sn, sp, rate, period, burst, interval, tau, key, commit)
  local total = redis.call('LLEN', key)
  local drop = expired(key, total, now - period)
  local n = total - drop
  local reset, newest = 0, now
  if n > 0 then
    local last = tonumber(redis.call('LINDEX', key, -1))
    if last > newest then newest = last end
    reset = last + period - now
  end
  if cost > rate then
    return 0, 1, rate - n, reset, period, 0
  end
  if n + cost <= rate then
    if cost > 0 then
      reset = newest + period - now
      if commit then
        if drop == total then
          redis.call('DEL', key)
        elseif drop > 0 then
          redis.call('LTRIM', key, drop, -1)
        end
        push(key, newest, cost)
        redis.call('PEXPIRE', key, ttl(newest + period - now))
      end
    end
    return 1, 0, rate - n - cost, reset, 0, 0
  end
  local k = n + cost - rate
  local oldest = tonumber(redis.call('LINDEX', key, drop + k - 1))
  return 0, 0, rate - n, reset, oldest + period - now, 0
end
`

// luaTail runs core's ApplyAll: with several limits, a dry run of every limit
// first, and a commit only when all admit; the governing decision by core's
// governs rule; the longest Delay.
const luaTail = `
local nl = #KEYS
if nl == 1 then
  local st, sn, sp = load(KEYS[1])
  local a, x, r, rs, rt, dl = decide(st, sn, sp, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]),
    tonumber(ARGV[7]), tonumber(ARGV[8]), KEYS[1], true)
  return {a, x, 0, r, rs, rt, dl}
end

local P, S = {}, {}
for i = 1, nl do
  local b = 3 + (i - 1) * 5
  P[i] = {tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), tonumber(ARGV[b + 5])}
  S[i] = {load(KEYS[i])}
end

local function run(i, commit)
  local p, s = P[i], S[i]
  return {decide(s[1], s[2], s[3], p[1], p[2], p[3], p[4], p[5], KEYS[i], commit)}
end

-- d: allowed, exceeds, remaining, reset, retry, delay
local function governs(d, c)
  if d[1] ~= c[1] then return d[1] == 0 end
  if d[1] == 0 and d[2] ~= c[2] then return d[2] == 1 end
  if d[1] == 0 then return d[5] > c[5] end
  return d[3] < c[3]
end

local best, bi
local ok = true
for i = 1, nl do
  local d = run(i, false)
  if i == 1 or governs(d, best) then best, bi = d, i end
  if d[1] == 0 then ok = false end
end
if not ok then
  return {0, best[2], bi - 1, best[3], best[4], best[5], 0}
end
local delay = 0
for i = 1, nl do
  local d = run(i, true)
  if i == 1 or governs(d, best) then best, bi = d, i end
  if d[6] > delay then delay = d[6] end
end
return {best[1], best[2], bi - 1, best[3], best[4], best[5], delay}
`
