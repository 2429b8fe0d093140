-- SPDX-License-Identifier: BSD-3-Clause
-- common.lua: prepended to every script of the cluster pool (embed_lua.py).
-- The keys and arguments every script gets, in this order (sk_cpool.c):
--   KEYS  pool, leases, ops, synced, members, the sold-out key, dry
--   ARGV  key prefix, item id, member id, then the script's own
-- Channels: <prefix>:soldout (the sold-out flag, for members and upstream
-- tiers), <prefix>:pool (free crossed zero, or a member found it empty:
-- the members look again; a hint, the keys stay the truth).
-- Numbers go to Redis as strings made by fmt(): Lua 5.1 numbers are
-- doubles, and tostring() of a large one is in exponent notation.
local POOL, LEASES, OPS, SYNCED = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local MEMBERS, SOLDKEY, DRY = KEYS[5], KEYS[6], KEYS[7]
local PREFIX, ITEM, MEMBER = ARGV[1], ARGV[2], ARGV[3]
local CHANNEL, POOL_CHANNEL = PREFIX .. ':soldout', PREFIX .. ':pool'

local function num(v)
  return tonumber(v) or 0
end

local function fmt(n)
  return string.format('%d', n)
end

-- now_us: Redis's clock (TIME) in microseconds since the epoch, as a
-- decimal string (seconds and microseconds joined: no double on the way).
local function now_us()
  local t = redis.call('TIME')
  return t[1] .. string.format('%06d', tonumber(t[2]))
end

-- publish_pool: a message on the pool channel (free as the pool says,
-- want: a member asked and got none); the members read the pool again.
local function publish_pool(want)
  redis.call('PUBLISH', POOL_CHANNEL, '{"item":' .. ITEM .. ',"free":' ..
    fmt(num(redis.call('HGET', POOL, 'free'))) .. ',"want":' .. (want and 'true' or 'false') ..
    ',"at_us":' .. now_us() .. '}')
end

-- pool_moved: free went from @before to what it is now. When it crossed
-- zero (the pool emptied, or has units again), or @want (a member asked and
-- got none), tells the members: a dry one leases, one with nothing left
-- reports dry, a quiet one gives units back.
local function pool_moved(before, want)
  local free = num(redis.call('HGET', POOL, 'free'))
  if want or (before == 0) ~= (free == 0) then
    publish_pool(want)
  end
end

-- dec_cmp: -1, 0, 1 comparing two decimal strings without leading zeros
-- (sequence numbers are uint64: beyond 2^53 a double would round them).
local function dec_cmp(a, b)
  if #a ~= #b then
    return #a < #b and -1 or 1
  end
  if a == b then
    return 0
  end
  return a < b and -1 or 1
end

-- boot_id: who this Redis is now: its replication id (master_replid: new
-- at each start and at each promotion of a replica) and its run_id (new at
-- each start; '-' where INFO hides it). Without a master_replid the item
-- could not be fenced after a loss of writes: a NOFENCE error, never a
-- silent '?' (the client refuses such a Redis at connect too).
local function boot_id()
  local replid = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')
  if not replid then
    error({err = 'NOFENCE item ' .. ITEM .. ': INFO replication has no master_replid'})
  end
  local rid = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)') or '-'
  return replid .. '/' .. rid
end

-- fence_check: false if the pool does not exist. If the Redis that runs
-- this is not the one that last wrote the pool (a restart, a failover, a
-- replica promoted: its last writes may be lost), fences the item: epoch
-- + 1, every member must sync again, every dry report is void; told on the
-- pool channel, so that members that read the pool seldom sync at once.
local function fence_check()
  if redis.call('EXISTS', POOL) == 0 then
    return false
  end
  local rid = boot_id()
  if redis.call('HGET', POOL, 'boot') ~= rid then
    redis.call('HINCRBY', POOL, 'epoch', 1)
    redis.call('HSET', POOL, 'fenced', '1', 'boot', rid)
    redis.call('DEL', SYNCED, DRY)
    publish_pool(false)
  end
  return true
end

local function is_member(m)
  return redis.call('SISMEMBER', MEMBERS, m) == 1
end

-- member_check: the item has a pool (fenced first if Redis restarted) and
-- MEMBER is one of its members; an error reply to return, or nil.
local function member_check()
  if not fence_check() then
    return redis.error_reply('NOPOOL item ' .. ITEM)
  end
  if not is_member(MEMBER) then
    return redis.error_reply('NOMEMBER ' .. MEMBER .. ' of item ' .. ITEM)
  end
  return nil
end

-- set_sold_out: flips the flag, + 1 on its version, the key for late
-- joiners, the broadcast (at_us: Redis's clock at the flip, from which a
-- subscriber measures the delay).
local function set_sold_out(flag)
  local v = fmt(redis.call('HINCRBY', POOL, 'version', 1))
  redis.call('HSET', POOL, 'sold_out', flag and '1' or '0')
  if flag then
    redis.call('HSET', POOL, 'want', '0')
  end
  redis.call('SET', SOLDKEY, (flag and '1:' or '0:') .. v)
  redis.call('PUBLISH', CHANNEL, '{"item":' .. ITEM .. ',"sold_out":' ..
    (flag and 'true' or 'false') .. ',"version":' .. v .. ',"at_us":' .. now_us() .. '}')
end

-- all_dry: every member reported 0 local units since its last grant (or
-- holds nothing at all).
local function all_dry()
  for _, m in ipairs(redis.call('SMEMBERS', MEMBERS)) do
    if redis.call('HGET', DRY, m) ~= '1' and num(redis.call('HGET', LEASES, m)) > 0 then
      return false
    end
  end
  return true
end

-- settle: after a change of free or of a dry report, and not fenced (free
-- is not known then): sold out when the pool and every member are empty,
-- reopened when the pool has units again.
local function settle()
  local p = redis.call('HMGET', POOL, 'fenced', 'free', 'sold_out')
  if p[1] == '1' then
    return
  end
  local so, free = p[3] == '1', num(p[2])
  if not so and free == 0 and all_dry() then
    set_sold_out(true)
  elseif so and free > 0 then
    set_sold_out(false)
  end
end

-- op_check: the idempotency of a member's op (seq, kind, units) against
-- the last one recorded in ops. Returns 'replay', result; 'err', message;
-- or nil when the op is to be applied.
local function op_check(kind, seq, units)
  local last = redis.call('HGET', OPS, MEMBER)
  if last then
    local s, k, u, res = string.match(last, '^(%d+):(%a+):(%d+):(%d+)$')
    if s then
      local c = dec_cmp(seq, s)
      if c == 0 then
        if k == kind and u == units then
          return 'replay', res
        end
        return 'err', 'SEQ op ' .. seq .. ' of ' .. MEMBER .. ' was ' .. k .. ' ' .. u
      elseif c < 0 then
        return 'err', 'STALE op ' .. seq .. ' of ' .. MEMBER .. ' is below its last op ' .. s
      end
    end
  end
  if redis.call('HGET', POOL, 'fenced') == '1' then
    return 'err', 'FENCED item ' .. ITEM .. ' at epoch ' .. redis.call('HGET', POOL, 'epoch')
  end
  return nil
end

-- rebuild: while fenced, once every member synced the current epoch:
-- free = total - sum of the leases, unfenced. 1 if unfenced, 0 if still
-- waiting, an OVERSOLD error if the members hold more than total.
local function rebuild()
  local ep = redis.call('HGET', POOL, 'epoch')
  for _, m in ipairs(redis.call('SMEMBERS', MEMBERS)) do
    if redis.call('HGET', SYNCED, m) ~= ep then
      return 0
    end
  end
  local sum, l = 0, redis.call('HGETALL', LEASES)
  for i = 2, #l, 2 do
    sum = sum + num(l[i])
  end
  local total = num(redis.call('HGET', POOL, 'total'))
  if sum > total then
    return redis.error_reply('OVERSOLD item ' .. ITEM .. ': the members hold ' .. fmt(sum) ..
      ' of ' .. fmt(total) .. ' units')
  end
  redis.call('HSET', POOL, 'free', fmt(total - sum), 'fenced', '0')
  settle()
  return 1
end
