/**
 * The Lua scripts behind `RedisStorage`. Each runs atomically in Redis, so a
 * compare-and-swap, its revision and its change-log entry are one step.
 *
 * Layout under the key namespace `ns`: `ns..'rev'` the revision counter; `ns..'o:'..key` a
 * hash per live object (`v` JSON, `m` modification revision, `c` creation revision, `e` expiry
 * in ms when written with a TTL); `ns..'idx'` a sorted set of live keys (score 0, lexical
 * order = etcd's byte order); `ns..'exp'` a sorted set of keys by expiry; `ns..'log'` the
 * change log, a stream whose entry IDs are `<revision>-0` with fields `k` key, `t` A/M/D,
 * `v` new value, `c` creation revision, `pv`/`pm` the previous value and revision. Every
 * revision has exactly one log entry, so the log is dense and a gap means it was trimmed.
 * The scripts touch keys they compute from `ns` (standalone Redis, not Redis Cluster).
 */

/** Shared helpers: the current time in ms, appending to the log. */
const COMMON = `
local ns = ARGV[1]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function append(rev, fields)
  local args = {'XADD', ns .. 'log', rev .. '-0'}
  for _, f in ipairs(fields) do args[#args + 1] = f end
  redis.call(unpack(args))
end
local function set_expiry(okey, key, ttl_ms)
  if ttl_ms > 0 then
    local e = now_ms() + ttl_ms
    redis.call('HSET', okey, 'e', e)
    redis.call('ZADD', ns .. 'exp', e, key)
  else
    redis.call('HDEL', okey, 'e')
    redis.call('ZREM', ns .. 'exp', key)
  end
end
`;

/** ARGV: ns, key, json, ttlMs. Returns the new revision, or 0 when the key exists. */
export const CREATE = `${COMMON}
local key, json, ttl = ARGV[2], ARGV[3], tonumber(ARGV[4])
local okey = ns .. 'o:' .. key
if redis.call('EXISTS', okey) == 1 then return 0 end
local rev = redis.call('INCR', ns .. 'rev')
redis.call('HSET', okey, 'v', json, 'm', rev, 'c', rev)
redis.call('ZADD', ns .. 'idx', 0, key)
set_expiry(okey, key, ttl)
append(rev, {'k', key, 't', 'A', 'v', json, 'c', rev})
return rev
`;

/**
 * ARGV: ns, key, json, expected revision, ttlMs. Returns {1, rev} when written, {0, value,
 * modRev} when the key's revision is not the expected one, {} when the key is absent.
 */
export const UPDATE = `${COMMON}
local key, json, expected, ttl = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local okey = ns .. 'o:' .. key
local cur = redis.call('HMGET', okey, 'v', 'm', 'c')
if not cur[1] then return {} end
if cur[2] ~= expected then return {0, cur[1], cur[2]} end
local rev = redis.call('INCR', ns .. 'rev')
redis.call('HSET', okey, 'v', json, 'm', rev)
set_expiry(okey, key, ttl)
append(rev, {'k', key, 't', 'M', 'v', json, 'c', cur[3], 'pv', cur[1], 'pm', cur[2]})
return {1, rev}
`;

/** ARGV: ns, key, expected revision. Same answers as UPDATE. */
export const DELETE = `${COMMON}
local key, expected = ARGV[2], ARGV[3]
local okey = ns .. 'o:' .. key
local cur = redis.call('HMGET', okey, 'v', 'm', 'c')
if not cur[1] then return {} end
if cur[2] ~= expected then return {0, cur[1], cur[2]} end
local rev = redis.call('INCR', ns .. 'rev')
redis.call('DEL', okey)
redis.call('ZREM', ns .. 'idx', key)
redis.call('ZREM', ns .. 'exp', key)
append(rev, {'k', key, 't', 'D', 'c', cur[3], 'pv', cur[1], 'pm', cur[2]})
return {1, rev}
`;

/**
 * A consistent read of the keys under `prefix` from `start` on (or the one key `prefix` when
 * `exact` is '1') at revision `at` (0 = now). ARGV: ns, prefix, start, end, at, exact, where
 * `end` is the first key after the prefix (ZRANGEBYLEX compares bytes, as etcd; Lua's string
 * order follows the locale, so Lua only tests prefixes and the caller filters `touched` by
 * `start`). Returns
 * {'ok', current, floor, live, touched} where `live` is a flat list key, value, modRev of
 * the live keys now and `touched` a flat list key, type, prevValue, prevModRev of the first
 * change after `at` of each key in range (so the state at `at` is: untouched keys as live,
 * touched keys as their previous value, absent when type is 'A'); or {'compacted', current,
 * floor}; or {'future', current}. `floor` is the oldest revision still readable.
 */
export const READ = `${COMMON}
local prefix, start, stop, at, exact = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6] == '1'
local cur = tonumber(redis.call('GET', ns .. 'rev') or '0')
local first = redis.call('XRANGE', ns .. 'log', '-', '+', 'COUNT', 1)
local floor = cur
if first[1] then floor = tonumber(string.match(first[1][1], '^(%d+)')) - 1 end
if at > cur then return {'future', cur} end
if at > 0 and at < floor then return {'compacted', cur, floor} end
local keys
if exact then
  keys = {}
  if redis.call('EXISTS', ns .. 'o:' .. prefix) == 1 then keys[1] = prefix end
else
  keys = redis.call('ZRANGEBYLEX', ns .. 'idx', '[' .. start, '(' .. stop)
end
local live = {}
for _, k in ipairs(keys) do
  local h = redis.call('HMGET', ns .. 'o:' .. k, 'v', 'm')
  live[#live + 1] = k
  live[#live + 1] = h[1]
  live[#live + 1] = h[2]
end
local touched = {}
if at > 0 and at < cur then
  local seen = {}
  local entries = redis.call('XRANGE', ns .. 'log', (at + 1) .. '-0', '+')
  for _, e in ipairs(entries) do
    local f = {}
    for i = 1, #e[2], 2 do f[e[2][i]] = e[2][i + 1] end
    local k = f['k']
    local inrange
    if exact then inrange = (k == prefix) else inrange = (string.sub(k, 1, #prefix) == prefix) end
    if inrange and not seen[k] then
      seen[k] = true
      touched[#touched + 1] = k
      touched[#touched + 1] = f['t']
      touched[#touched + 1] = f['pv'] or ''
      touched[#touched + 1] = f['pm'] or '0'
    end
  end
end
return {'ok', cur, floor, live, touched}
`;

/**
 * Whether any key under `prefix` changed after `since`, with the current revision and the
 * number of live keys there. ARGV: ns, prefix, end (the first key after the prefix), since.
 * Returns {current, changed(0/1), count}.
 */
export const PROBE = `${COMMON}
local prefix, stop, since = ARGV[2], ARGV[3], tonumber(ARGV[4])
local cur = tonumber(redis.call('GET', ns .. 'rev') or '0')
local count = redis.call('ZLEXCOUNT', ns .. 'idx', '[' .. prefix, '(' .. stop)
local changed = 0
if since < cur then
  local first = redis.call('XRANGE', ns .. 'log', '-', '+', 'COUNT', 1)
  if not first[1] or tonumber(string.match(first[1][1], '^(%d+)')) > since + 1 then
    changed = 1
  else
    local entries = redis.call('XRANGE', ns .. 'log', (since + 1) .. '-0', '+')
    for _, e in ipairs(entries) do
      local k = e[2][2]
      if string.sub(k, 1, #prefix) == prefix then changed = 1 break end
    end
  end
end
return {cur, changed, count}
`;

/**
 * Deletes the keys whose TTL has passed (up to `max` per run), each with a revision and a
 * DELETED log entry, as etcd's lease expiry does. ARGV: ns, max. Returns the number deleted.
 */
export const EXPIRE = `${COMMON}
local max = tonumber(ARGV[2])
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', ns .. 'exp', '-inf', now, 'LIMIT', 0, max)
local n = 0
for _, key in ipairs(due) do
  local okey = ns .. 'o:' .. key
  local cur = redis.call('HMGET', okey, 'v', 'm', 'c')
  redis.call('ZREM', ns .. 'exp', key)
  if cur[1] then
    local rev = redis.call('INCR', ns .. 'rev')
    redis.call('DEL', okey)
    redis.call('ZREM', ns .. 'idx', key)
    append(rev, {'k', key, 't', 'D', 'c', cur[3], 'pv', cur[1], 'pm', cur[2]})
    n = n + 1
  end
end
return n
`;

/** Drops log entries of revisions up to and including ARGV[2]. ARGV: ns, revision. */
export const COMPACT = `${COMMON}
local rev = tonumber(ARGV[2])
redis.call('XTRIM', ns .. 'log', 'MINID', (rev + 1) .. '-0')
return 1
`;
