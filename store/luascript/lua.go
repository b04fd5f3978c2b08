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
// integer division truncates toward zero as Go's does (idiv), modulo uses
// math.fmod, which is exact, and the sliding window's estimate performs the same
// double operations in the same order as core's.

const luaHead = `
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local cost = tonumber(ARGV[2])
local minttl = tonumber(ARGV[3])
local floor = math.floor

local function idiv(a, b)
  if a >= 0 then return floor(a / b) end
  return -floor(-a / b)
end

local function trunc(x)
  if x >= 0 then return floor(x) end
  return -floor(-x)
end

local function fmt(x)
  return string.format('%d', x)
end

local function ttl(us)
  local ms = floor((us + 999) / 1000)
  if ms < minttl then ms = minttl end
  if ms < 1 then ms = 1 end
  return fmt(ms)
end

local function windowstart(t, period)
  local start = now - math.fmod(now, period)
  if t > start then start = t end
  return start
end

local function loadnums(key)
  local v = redis.call('GET', key)
  local s = {0, 0, 0}
  if v then
    local i = 1
    for f in string.gmatch(v, '%S+') do
      s[i] = tonumber(f)
      i = i + 1
    end
  end
  return s
end
`

// luaMeter is the token bucket, the leaky bucket and GCRA (core/gcra.go). State:
// a string "T". QUEUE is replaced by true for the leaky bucket.
const luaMeter = `
local function load(key)
  return loadnums(key)
end

local function decide(s, p, key, commit)
  local period, burst, interval, tau = p[2], p[3], p[4], p[5]
  local tat = s[1]
  if now > tat then tat = now end
  if cost > burst then
    local r = idiv(tau - (tat - now), interval)
    if r < 0 then r = 0 end
    return {0, 1, r, tat - now, period, 0}
  end
  local nxt = tat + cost * interval
  if nxt - now <= tau then
    if commit and cost > 0 then
      s[1] = nxt
      redis.call('SET', key, fmt(nxt), 'PX', ttl(nxt - now))
    end
    local delay = 0
    if QUEUE then delay = tat - now end
    return {1, 0, idiv(tau - (nxt - now), interval), nxt - now, 0, delay}
  end
  local r = idiv(tau - (tat - now), interval)
  if r < 0 then r = 0 end
  return {0, 0, r, tat - now, nxt - tau - now, 0}
end
`

// luaFixedWindow is core's fixedWindow. State: a string "T N".
const luaFixedWindow = `
local function load(key)
  return loadnums(key)
end

local function decide(s, p, key, commit)
  local rate, period = p[1], p[2]
  local start = windowstart(s[1], period)
  local count = 0
  if s[1] == start then count = s[2] end
  local wend = start + period
  local reset = 0
  if count > 0 then reset = wend - now end
  if cost > rate then
    return {0, 1, rate - count, reset, period, 0}
  end
  if count + cost <= rate then
    if commit and cost > 0 then
      s[1], s[2] = start, count + cost
      redis.call('SET', key, fmt(start) .. ' ' .. fmt(count + cost), 'PX', ttl(wend - now))
    end
    if count + cost > 0 then reset = wend - now end
    return {1, 0, rate - count - cost, reset, 0, 0}
  end
  return {0, 0, rate - count, reset, wend - now, 0}
end
`

// luaSlidingWindow is core's slidingWindow, swEstimate and swRetry. State: a
// string "T N P".
const luaSlidingWindow = `
local function load(key)
  return loadnums(key)
end

local function estimate(prev, cur, elapsed, period)
  local w = (period - elapsed) / period
  local pw = prev * w
  return pw + cur
end

local function retry(prev, cur, start, rate, period)
  local function fits(t)
    local e = t - start
    if e < period then
      return estimate(prev, cur + cost, e, period) <= rate
    elseif e < 2 * period then
      return estimate(cur, cost, e - period, period) <= rate
    end
    return true
  end
  local t
  if cur + cost <= rate then
    local need = period - (rate - cur - cost) * period / prev
    t = start + trunc(need)
  else
    local need = trunc(period - (rate - cost) * period / cur)
    if need < 0 then need = 0 end
    t = start + period + need
  end
  if t < now + 1 then t = now + 1 end
  while not fits(t) do t = t + 1 end
  return t - now
end

local function decide(s, p, key, commit)
  local rate, period = p[1], p[2]
  local start = windowstart(s[1], period)
  local cur, prev = 0, 0
  if s[1] == start then
    cur, prev = s[2], s[3]
  elseif s[1] == start - period then
    prev = s[2]
  end
  local elapsed = now - start
  if elapsed < 0 then elapsed = 0 end
  local wend = start + period
  local function reset(c, pv)
    if c > 0 then return wend + period - now end
    if pv > 0 then return wend - now end
    return 0
  end
  local function remaining(est)
    local r = rate - est
    if r <= 0 then return 0 end
    return floor(r)
  end
  if cost > rate then
    return {0, 1, remaining(estimate(prev, cur, elapsed, period)), reset(cur, prev), period, 0}
  end
  local est = estimate(prev, cur + cost, elapsed, period)
  if est <= rate then
    if commit and cost > 0 then
      s[1], s[2], s[3] = start, cur + cost, prev
      redis.call('SET', key, fmt(start) .. ' ' .. fmt(cur + cost) .. ' ' .. fmt(prev), 'PX', ttl(start + 2 * period - now))
    end
    return {1, 0, remaining(est), reset(cur + cost, prev), 0, 0}
  end
  return {0, 0, remaining(estimate(prev, cur, elapsed, period)), reset(cur, prev),
    retry(prev, cur, start, rate, period), 0}
end
`

// luaSlidingLog is core's slidingLog over a Redis list of admitted timestamps,
// oldest first, never more than Rate entries. Timestamps never decrease, so the
// entries that left the window are a prefix, found by binary search; as in
// core, they are dropped only when a request is admitted, so a denial or a peek
// writes nothing.
const luaSlidingLog = `
local function load(key)
  return {}
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
  local v = fmt(ts)
  while count > 0 do
    local m = count
    if m > 1000 then m = 1000 end
    local a = {}
    for j = 1, m do a[j] = v end
    redis.call('RPUSH', key, unpack(a))
    count = count - m
  end
end

local function decide(s, p, key, commit)
  local rate, period = p[1], p[2]
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
    return {0, 1, rate - n, reset, period, 0}
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
    return {1, 0, rate - n - cost, reset, 0, 0}
  end
  local k = n + cost - rate
  local oldest = tonumber(redis.call('LINDEX', key, drop + k - 1))
  return {0, 0, rate - n, reset, oldest + period - now, 0}
end
`

// luaTail runs core's ApplyAll: with several limits, a dry run of every limit
// first, and a commit only when all admit; the governing decision by core's
// governs rule; the longest Delay.
const luaTail = `
local nl = #KEYS
local P, S = {}, {}
for i = 1, nl do
  local b = 3 + (i - 1) * 5
  P[i] = {tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), tonumber(ARGV[b + 5])}
  S[i] = load(KEYS[i])
end

local function governs(d, c)
  if d[1] ~= c[1] then return d[1] == 0 end
  if d[1] == 0 and d[2] ~= c[2] then return d[2] == 1 end
  if d[1] == 0 then return d[5] > c[5] end
  return d[3] < c[3]
end

local best, bi
if nl > 1 then
  local ok = true
  for i = 1, nl do
    local d = decide(S[i], P[i], KEYS[i], false)
    if i == 1 or governs(d, best) then best, bi = d, i end
    if d[1] == 0 then ok = false end
  end
  if not ok then
    return {0, best[2], bi - 1, best[3], best[4], best[5], 0}
  end
end
local delay = 0
for i = 1, nl do
  local d = decide(S[i], P[i], KEYS[i], true)
  if i == 1 or governs(d, best) then best, bi = d, i end
  if d[6] > delay then delay = d[6] end
end
return {best[1], best[2], bi - 1, best[3], best[4], best[5], delay}
`
