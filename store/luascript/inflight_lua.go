package luascript

// The in-flight scripts keep a key's slots in one sorted set, at
//
//	<prefix>{<namespace>:<key>}:c
//
// whose members are the lease ids and whose scores are their deadlines (µs,
// on the clock the scripts decide on). Each script first drops the leases
// whose deadline has passed (a crashed instance's slots come back there),
// then acts, all in one atomic call; the set's TTL follows its latest
// deadline (floored by WithMinTTL), and an empty set is deleted.

// luaInFlightNow reads the instant to decide at: ARGV[NOW] in µs, or the server's
// TIME when it is negative.
const luaInFlightNow = `
local now = tonumber(ARGV[NOW])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
`

// luaInFlightExpire sets the set's TTL to its latest deadline, or deletes it empty.
const luaInFlightExpire = `
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then
  local ttl = math.ceil((tonumber(last[2]) - now) / 1000)
  redis.call('PEXPIRE', KEYS[1], math.max(ttl, tonumber(ARGV[MINTTL]), 1))
else
  redis.call('DEL', KEYS[1])
end
`

// luaAcquire takes a slot. ARGV: slots, lease (µs), the lease id, now (µs,
// or -1), the min TTL (ms). Reply: {1, held, deadline, now} when taken,
// {0, held, the earliest deadline, now} when refused.
const luaAcquire = `
local slots, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
` + "NOW4" + `
local held = redis.call('ZCARD', KEYS[1])
if held >= slots then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, held, tonumber(first[2]), now}
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
` + "EXPIRE5" + `
return {1, held + 1, now + lease, now}
`

// luaRenew renews the leases named in ARGV[4...]. ARGV: lease (µs), now (µs,
// or -1), the min TTL (ms), then the ids. Reply: {now, then 1 for each id
// renewed, 0 for each no longer held}.
const luaRenew = `
local lease = tonumber(ARGV[1])
` + "NOW2" + `
local out = {now}
for i = 4, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
` + "EXPIRE3" + `
return out
`

// luaRelease removes the lease ARGV[1]. Reply: {1 when it was held, else 0}.
const luaRelease = `
local n = redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
end
return {n}
`

// luaHeld counts the slots held. ARGV: now (µs, or -1). Reply: {held}.
const luaHeld = `
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
return {redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')}
`
