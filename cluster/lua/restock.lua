-- restock: ARGV[4] the operator's request id, ARGV[5] units. total +=
-- units (and free, when not fenced: a rebuild takes free from total;
-- fenced, the rebuild is tried again at once, so a pool fenced OVERSOLD
-- that the units now cover is unfenced once every member has synced);
-- 'base', the total the pool was created with, stays (init compares it).
-- Idempotent by request id (kept in ops as field 'restock:<id>'): the same
-- request again returns 0, the same id with other units is a SEQ error.
-- Reopens a sold-out item. Returns 1 when applied.
if not fence_check() then
  return redis.error_reply('NOPOOL item ' .. ITEM)
end
local rid, u = ARGV[4], ARGV[5]
local seen = redis.call('HGET', OPS, 'restock:' .. rid)
if seen then
  if seen == u then
    return 0
  end
  return redis.error_reply('SEQ restock ' .. rid .. ' of item ' .. ITEM .. ' was ' .. seen ..
    ' units')
end
local p = redis.call('HMGET', POOL, 'total', 'base', 'fenced', 'free')
if num(p[1]) + tonumber(u) > 9007199254740992 then -- 2^53, SK_CPOOL_UNITS_MAX
  return redis.error_reply('LIMIT item ' .. ITEM .. ': ' .. p[1] .. ' + ' .. u ..
    ' units is above the limit')
end
if not p[2] then
  redis.call('HSET', POOL, 'base', p[1])
end
redis.call('HINCRBY', POOL, 'total', u)
if p[3] ~= '1' then
  redis.call('HINCRBY', POOL, 'free', u)
  pool_moved(num(p[4]), false)
end
redis.call('HSET', OPS, 'restock:' .. rid, u)
if p[3] == '1' then
  rebuild() -- still short (OVERSOLD) or not every member synced: stays fenced
  return 1
end
settle()
return 1
