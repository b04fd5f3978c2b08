package luascript

// The sliding log's script; lua.go has what every script shares.

// luaSlidingLog is core's slidingLog over a Redis list of admitted timestamps,
// oldest first, never more than Rate entries. Timestamps never decrease, so the
// entries that left the window are a prefix, found by binary search; as in
// core, they are dropped only when a request is admitted, so a denial or a peek
// writes nothing (but for a denied spend's rebase: entries after now, left by
// a clock that stepped back, are moved to now). With several limits it runs as core's ApplyAll does: a dry
// run of every limit first, a commit only when all admit, and the governing
// decision by core's governs rule. It replies
//
//	{allowed, exceeds, governing index (0-based), remaining, reset-after µs, retry-after µs}
//
// (the sliding log never delays, so there is no Delay).
const luaSlidingLog = luaNow + luaSlidingLogOne + `
local floor = math.floor

local function ttl(us)` + luaTTL + `  return ms
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
  local v = string.format('%d', ts)
  while count > 0 do
    local m = count
    if m > 1000 then m = 1000 end
    local a = {}
    for j = 1, m do a[j] = v end
    redis.call('RPUSH', key, unpack(a))
    count = count - m
  end
end

-- rebase moves the entries after now (a clock that stepped back left them)
-- to now, keeping the list's length and order (core's rebase).
local function rebase(key, total, period)
  local keep = expired(key, total, now)
  if keep > 0 then redis.call('LTRIM', key, 0, keep - 1) else redis.call('DEL', key) end
  push(key, now, total - keep)
  redis.call('PEXPIRE', key, ttl(period))
end

-- decide returns allowed, exceeds, remaining, reset, retry for limit i. An
-- entry after now reads as now; a spend writes it so, even when denied.
local function decide(i, commit)
  local key, rate, period = KEYS[i], tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local total = redis.call('LLEN', key)
  local drop = expired(key, total, now - period)
  local n = total - drop
  local reset = 0
  if n > 0 then
    local last = tonumber(redis.call('LINDEX', key, -1))
    if last > now then
      if cost > 0 then rebase(key, total, period) end
      last = now
    end
    reset = last + period - now
  end
  if cost > rate then
    return {0, 1, math.max(0, rate - n), reset, period}
  end
  if n + cost <= rate then
    if cost > 0 then
      reset = period
      if commit then
        if drop == total then
          redis.call('DEL', key)
        elseif drop > 0 then
          redis.call('LTRIM', key, drop, -1)
        end
        push(key, now, cost)
        redis.call('PEXPIRE', key, ttl(period))
      end
    end
    return {1, 0, rate - n - cost, reset, 0}
  end
  local k = n + cost - rate
  local oldest = tonumber(redis.call('LINDEX', key, drop + k - 1))
  if oldest > now then oldest = now end
  return {0, 0, math.max(0, rate - n), reset, oldest + period - now}
end

-- governs reports whether d replaces c as the governing decision.
local function governs(d, c)
  if d[1] ~= c[1] then return d[1] == 0 end
  if d[1] == 0 and d[2] ~= c[2] then return d[2] == 1 end
  if d[1] == 0 then return d[5] > c[5] end
  return d[3] < c[3]
end

-- pick decides every limit and replies with the governing decision; a denial
-- governs any admission, so it admits only when every limit does.
local function pick(commit)
  local best, bi = decide(1, commit), 1
  for i = 2, nk do
    local d = decide(i, commit)
    if governs(d, best) then best, bi = d, i end
  end
  return {best[1], best[2], bi - 1, best[3], best[4], best[5]}
end

-- A refund removes, under each limit, up to -cost of the latest entries at
-- or before the admission that are still in the window: the list keeps the
-- entries before them and gets the ones after them pushed back.
if cost < 0 then` + luaAnnounce + `
  local adm = now - tonumber(ARGV[2 * nk + 2])
  for i = 1, nk do
    local key, period = KEYS[i], tonumber(ARGV[2 * i + 1])
    local total = redis.call('LLEN', key)
    if total > 0 and tonumber(redis.call('LINDEX', key, -1)) > now then rebase(key, total, period) end
    local upto = expired(key, total, adm)
    local k = upto - expired(key, total, now - period)
    if k > -cost then k = -cost end
    if k > 0 then
      local after = redis.call('LRANGE', key, upto, -1)
      if upto - k > 0 then
        redis.call('LTRIM', key, 0, upto - k - 1)
      else
        redis.call('DEL', key)
      end
      for j = 1, #after, 1000 do
        redis.call('RPUSH', key, unpack(after, j, math.min(j + 999, #after)))
      end
      if redis.call('EXISTS', key) == 1 then
        redis.call('PEXPIRE', key, ttl(tonumber(redis.call('LINDEX', key, -1)) + period - now))
      end
    end
  end
  cost = 0
end

if nk == 1 then return pick(true) end
local dry = pick(false)
if dry[1] == 0 then return dry end
return pick(true)
`

// luaSlidingLogOne decides a spend or a peek under one limit, nearly every
// request, as decide and pick below do, in straight code: the general path
// creates eight closures per call, which cost Redis more than the calls
// themselves. It reads the last entry first: none means an empty log, and
// one that has left the window means they all have (the log is dropped and
// started again), in one read where the length and the first entry took two.
// Otherwise, when the first entry has left the window, it finds the first
// one still in it by probing entries 1, 2, 4... and then a binary search
// between the last two probes: a log that is used steadily loses one or two
// entries per request, found in one or two reads where a binary search over
// the whole log takes log2(Rate). drop is the number of entries that left the
// window, or -1 for all of a log whose length was not read; n the number in
// it. A log with an
// entry after now (a clock that stepped back) goes on to the general path,
// which rebases it; so does a refund or a request of several limits.
const luaSlidingLogOne = `
if nk == 1 and cost >= 0 then
  local key, rate, period = KEYS[1], ARGV[2] + 0, ARGV[3] + 0
  local cutoff, n, drop = now - period, 0, 0
  local last = tonumber(redis.call('LINDEX', key, -1))
  if not last then
    last = 0
  elseif last <= cutoff then
    drop = -1
  else
    local total = redis.call('LLEN', key)
    local first = last
    if total > 1 then first = tonumber(redis.call('LINDEX', key, 0)) end
    if first <= cutoff then
      local lo, hi, probe = 1, total, 1
      while probe < total do
        if tonumber(redis.call('LINDEX', key, probe)) > cutoff then
          hi = probe
          break
        end
        lo, probe = probe + 1, probe * 2
      end
      while lo < hi do
        local m = math.floor((lo + hi) / 2)
        if tonumber(redis.call('LINDEX', key, m)) <= cutoff then lo = m + 1 else hi = m end
      end
      drop = lo
    end
    n = total - drop
  end
  if last <= now then
    local reset = 0
    if n > 0 then reset = last + period - now end
    if cost > rate then return {0, 1, 0, math.max(0, rate - n), reset, period} end
    if n + cost > rate then
      local oldest = tonumber(redis.call('LINDEX', key, drop + n + cost - rate - 1))
      if oldest > now then oldest = now end
      return {0, 0, 0, math.max(0, rate - n), reset, oldest + period - now}
    end
    if cost > 0 then
      if drop < 0 then
        redis.call('DEL', key)
      elseif drop > 0 then
        redis.call('LTRIM', key, drop, -1)
      end
      local v, c = string.format('%d', now), cost
      if c == 1 then
        redis.call('RPUSH', key, v)
      else
        while c > 0 do
          local m, a = math.min(c, 1000), {}
          for j = 1, m do a[j] = v end
          redis.call('RPUSH', key, unpack(a))
          c = c - m
        end
      end
      local us = period` + luaTTL + `      redis.call('PEXPIRE', key, ms)
      reset = period
    end
    return {1, 0, 0, rate - n - cost, reset, 0}
  end
end
`
