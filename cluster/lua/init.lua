-- init: ARGV[4] total, ARGV[5..] members. Creates the pool if missing
-- (fenced at epoch 1), re-adds the members. 1 if created, 0 if it existed
-- with that total as its base (restocks add to total, not to base).
local created = 0
if redis.call('EXISTS', POOL) == 0 then
  local rid = boot_id()
  redis.call('DEL', LEASES, SYNCED, DRY)
  redis.call('HSET', POOL, 'total', ARGV[4], 'free', ARGV[4], 'epoch', '1', 'fenced', '1',
    'boot', rid, 'sold_out', '0', 'version', '0', 'want', '0')
  redis.call('SET', SOLDKEY, '0:0')
  created = 1
else
  fence_check()
  local t = redis.call('HGET', POOL, 'base') or redis.call('HGET', POOL, 'total')
  if t ~= ARGV[4] then
    return redis.error_reply('TOTAL item ' .. ITEM .. ' exists with total ' .. tostring(t))
  end
end
for i = 5, #ARGV do
  redis.call('SADD', MEMBERS, ARGV[i])
end
return created
