-- sync: ARGV[4] epoch, ARGV[5] held. While fenced at that epoch: the
-- member's durable word. 1 if the item is unfenced after the call, else 0.
-- The mark stays when the rebuild fails (OVERSOLD): the word is recorded;
-- the rebuild is tried again by the next sync, restock or forget.
local refused = member_check()
if refused then
  return refused
end
local p = redis.call('HMGET', POOL, 'epoch', 'fenced')
if p[1] ~= ARGV[4] then
  return redis.error_reply('EPOCH item ' .. ITEM .. ' is at epoch ' .. tostring(p[1]))
end
if p[2] ~= '1' then
  return 1
end
redis.call('HSET', LEASES, MEMBER, ARGV[5])
redis.call('HSET', SYNCED, MEMBER, ARGV[4])
return rebuild()
