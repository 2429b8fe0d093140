-- init: ARGV[4] total, ARGV[5..] the members, then the members forgotten
-- as 'id=held' (what the caller's LMDB says each held when forgotten; an
-- id has no '='). Creates the pool if missing (fenced at epoch 1), their
-- units counted in its leases: a pool made again after Redis lost
-- everything still counts them as gone. Re-adds the members, never a
-- forgotten one (named here, or counted in the leases but not a member).
-- One named here that the fenced pool still has as a member (Redis came
-- back from before the forget) is forgotten again, and the rebuild tried.
-- 1 if created, 0 if it existed with that total as its base (restocks add
-- to total, not to base).
local created, forgot, names = 0, {}, {}
for i = 5, #ARGV do
  local id, held = string.match(ARGV[i], '^([^=]+)=(%d+)$')
  if id then
    forgot[id] = held
  else
    names[#names + 1] = ARGV[i]
  end
end
if redis.call('EXISTS', POOL) == 0 then
  local rid = boot_id()
  redis.call('DEL', LEASES, SYNCED, DRY)
  redis.call('HSET', POOL, 'total', ARGV[4], 'free', ARGV[4], 'epoch', '1', 'fenced', '1',
    'boot', rid, 'sold_out', '0', 'version', '0', 'want', '0')
  redis.call('SET', SOLDKEY, '0:0')
  for id, held in pairs(forgot) do
    redis.call('SREM', MEMBERS, id)
    redis.call('HSET', LEASES, id, held)
  end
  created = 1
else
  fence_check()
  local t = redis.call('HGET', POOL, 'base') or redis.call('HGET', POOL, 'total')
  if t ~= ARGV[4] then
    return redis.error_reply('TOTAL item ' .. ITEM .. ' exists with total ' .. tostring(t))
  end
end
local again = false
if redis.call('HGET', POOL, 'fenced') == '1' then
  for id, held in pairs(forgot) do
    if is_member(id) then
      redis.call('SREM', MEMBERS, id)
      redis.call('HSET', LEASES, id, held)
      redis.call('HDEL', SYNCED, id)
      redis.call('HDEL', DRY, id)
      again = true
    end
  end
end
for _, m in ipairs(names) do
  if not forgot[m] and (is_member(m) or redis.call('HEXISTS', LEASES, m) == 0) then
    redis.call('SADD', MEMBERS, m)
  end
end
if again then
  rebuild() -- still waiting, or OVERSOLD: stays fenced
end
return created
